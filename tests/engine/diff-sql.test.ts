// `pgx agent diff --sql` in-process against the real server (engine/diff-sql.ts): the migration of a branch since its
// fork point, applied to a copy of that fork point, gives a database `agent diff` finds no difference with, for every
// object kind the diff reports and the rows of every table it compares exactly; the tables it can't carry are named,
// and the branch, its fork point and its parent are left as they were.
import { describe, expect, it } from 'vitest';
import { makeSource, testProject } from '../helpers/engine.js';
import { asBranch, holdConnection, roundtrip } from '../helpers/merge.js';
import { sql } from '../helpers/pgx.js';
import { PAGILA_LIKE, PAGILA_LIKE_CHANGES, PAGILA_LIKE_ROWS } from '../helpers/pagila-like.js';

/** A session whose branch holds `setup` and an open connection, and a subagent forked from it (a frozen copy). */
async function forkedSubagent(setup: string) {
  const t = testProject({ source: await makeSource() });
  const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
  await asBranch(s.conn, setup);
  const held = await holdConnection(s.conn);
  const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
  expect(a.fork?.method).toBe('frozen');
  return { t, s, a, held };
}

describe('agent diff --sql', () => {
  it('every kind the diff reports, and rows by key: applied to the fork point it gives the branch (0 differences)', async () => {
    const { t, s, a, held } = await forkedSubagent(`
      CREATE TYPE mood AS ENUM ('sad', 'ok');
      CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES users(id), amount numeric(10,2), note text, m mood);
      INSERT INTO orders SELECT g, 1 + g % 2, g * 1.5, 'n' || g, 'ok' FROM generate_series(1, 50) g;
      CREATE TABLE audit (id serial PRIMARY KEY, what text);
      CREATE FUNCTION audit_it() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN INSERT INTO audit (what) VALUES (TG_OP); RETURN NEW; END$$;
      CREATE TRIGGER orders_audit AFTER INSERT OR UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION audit_it();
      CREATE TABLE nokey (x int, y text); INSERT INTO nokey VALUES (1, 'a');
      CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10;`);
    try {
      await asBranch(
        a.conn,
        `ALTER TYPE mood ADD VALUE 'happy';
         ALTER TABLE orders ADD COLUMN shipped boolean NOT NULL DEFAULT false;
         UPDATE orders SET shipped = true, note = 'shipped' WHERE id <= 5;
         UPDATE orders SET amount = amount * 2 WHERE id BETWEEN 6 AND 8;
         DELETE FROM orders WHERE id > 45;
         INSERT INTO orders (id, user_id, amount, note, m) VALUES (100, 2, 9.99, E'it''s\\na new; one', 'sad');
         ALTER TABLE orders ALTER COLUMN note TYPE varchar(40);
         CREATE INDEX orders_user ON orders (user_id);
         ALTER TABLE orders ADD CONSTRAINT amount_positive CHECK (amount > 0);
         CREATE SEQUENCE tickets START 7; SELECT nextval('tickets'); SELECT nextval('tickets');
         CREATE TABLE payments (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, order_id int REFERENCES orders(id),
                                paid numeric, total numeric GENERATED ALWAYS AS (paid * 2) STORED);
         INSERT INTO payments (order_id, paid) SELECT id, amount FROM orders WHERE id < 4;
         CREATE OR REPLACE VIEW big_orders AS SELECT id, amount, shipped FROM orders WHERE amount > 10;
         CREATE FUNCTION total(o orders) RETURNS numeric LANGUAGE sql AS 'SELECT o.amount';
         CREATE SCHEMA reports; CREATE TABLE reports.daily (day date PRIMARY KEY, n int); INSERT INTO reports.daily VALUES ('2026-12-01', 3);
         UPDATE users SET email = 'changed@x' WHERE id = 1;
         INSERT INTO nokey VALUES (2, 'b');`,
      );
      const r = await t.run((e) => e.diffSql({ agent: 'a1' }));
      expect(r.fork_point.kind).toBe('frozen-copy');
      expect(r.changed).toBe(true);
      expect(r.left_out).toEqual([{ table: 'public.nokey', why: 'no primary key', changed: true }]);
      expect(r.sql).toMatch(/^-- LEFT OUT: .*\n--   public\.nokey: no primary key; its rows differ$/m);
      expect(r.sql).toMatch(/-- RISK: rewrite\nALTER TABLE "public"\."orders" ALTER COLUMN "note" TYPE/);
      expect(r.sql).not.toMatch(/ROLE/);
      expect(r.rows).toEqual(
        expect.arrayContaining([
          { table: 'public.orders', inserted: 1, updated: 8, deleted: 5 },
          { table: 'public.payments', inserted: 3, updated: 0, deleted: 0 },
          { table: 'reports.daily', inserted: 1, updated: 0, deleted: 0 },
          { table: 'public.users', inserted: 0, updated: 1, deleted: 0 },
        ]),
      );
      // the audit trigger fired in the branch; the migration turns it off around the rows, so audit's rows come once
      const d = await roundtrip(r.fork_point.database, a.branch, r.sql);
      expect(d.schema).toEqual({ added: [], dropped: [], altered: [] });
      expect(d.data).toEqual([expect.objectContaining({ table: 'public.nokey', rows_added: 1, rows_removed: 0 })]);
      expect(d.bounds.tables_counts_only).toBe(0);
      // the sequence moved with it
      expect(r.sql).toMatch(/setval\('public\.tickets', 8, true\)/);
    } finally {
      await held.close();
    }
    // the parent never saw any of it
    expect((await asBranch<{ n: number }>(s.conn, `SELECT count(*)::int AS n FROM orders`))[0]!.n).toBe(50);
  });

  it('a third-party-like schema (pagila-like: partitions, domains, enums, views, triggers, functions): roundtrip with 0 differences', async () => {
    const { t, a, held } = await forkedSubagent(`${PAGILA_LIKE}\n${PAGILA_LIKE_ROWS}`);
    try {
      await asBranch(a.conn, PAGILA_LIKE_CHANGES);
      const r = await t.run((e) => e.diffSql({ agent: 'a1' }));
      expect(r.left_out.filter((l) => l.changed !== false)).toEqual([]);
      expect(r.rows.length).toBeGreaterThan(3);
      const d = await roundtrip(r.fork_point.database, a.branch, r.sql);
      expect(d.schema).toEqual({ added: [], dropped: [], altered: [] });
      expect(d.data).toEqual([]);
      expect(d.changed).toBe(false);
    } finally {
      await held.close();
    }
  });

  it('unchanged: an empty migration, and a subagent forked from an unchanged session reads the template build', async () => {
    const t = testProject({ source: await makeSource() });
    await t.run((e) => e.ensure({ sessionId: 's1' }));
    const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(a.fork?.method).toBe('unchanged');
    const empty = await t.run((e) => e.diffSql({ agent: 'a1' }));
    expect(empty).toMatchObject({ changed: false, fork_point: { kind: 'template-build', current: true } });
    await asBranch(a.conn, `INSERT INTO users (email) VALUES ('new@x'); CREATE TABLE notes (id int PRIMARY KEY)`);
    const r = await t.run((e) => e.diffSql({ agent: 'a1' }));
    expect(r.rows).toEqual([{ table: 'public.users', inserted: 1, updated: 0, deleted: 0 }]);
    expect(r.schema.steps.map((s) => s.sql).join('\n')).toMatch(/CREATE TABLE "public"\."notes"/);
    // the template itself is never opened: read through its baseline copy
    expect((await sql(`SELECT datallowconn FROM pg_database WHERE datname = $1`, [t.template]))[0].datallowconn).toBe(
      false,
    );
  });
});
