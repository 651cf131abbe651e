// `pgx agent merge` in-process against the real server (engine/merge.ts): three subagents' work merged into the
// session's branch on top of the parent's own, a fourth refused for the row both changed (nothing applied); the
// conflict rule's other cases; a merge cut midway (a failed statement, a killed process) leaves the session's branch
// as it was; the fork point kept while a subagent's branch needs it, and let go after.
import { describe, expect, it } from 'vitest';
import { PgxError } from '../../src/lib/errors.js';
import * as catalog from '../../src/server/catalog.js';
import { connect } from '../../src/server/db.js';
import { Faults, InjectedFault } from '../helpers/faults.js';
import { causes, makeSource, testProject, type TestProject } from '../helpers/engine.js';
import { admin, asBranch, holdConnection } from '../helpers/merge.js';
import { sql } from '../helpers/pgx.js';

/** Everything `agent diff` would compare, of one database: its objects' definitions and each table's rows. */
async function stateOf(database: string): Promise<string> {
  const db = await connect(admin(database));
  try {
    const objects = await catalog.schemaObjects(db);
    const tables = await catalog.tableShapes(db);
    const rows = [];
    for (const t of tables)
      rows.push(
        `${t.qname} ${JSON.stringify(
          await catalog.tableFingerprint(
            db,
            t,
            t.columns.map((c) => c.name),
          ),
        )}`,
      );
    return [...objects.map((o) => `${o.kind} ${o.name} ${o.def}`), ...rows].join('\n');
  } finally {
    await db.close();
  }
}

async function conflictOf(p: Promise<unknown>): Promise<PgxError> {
  const err = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(err).toBeInstanceOf(PgxError);
  return err as PgxError;
}

/** A session whose branch has a table of orders and holds a connection; `n` subagents forked from it. */
async function session(t: TestProject, agents: string[]) {
  const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
  await asBranch(
    s.conn,
    `CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL DEFAULT 'new', amount numeric);
     INSERT INTO orders SELECT g, 'new', g * 10 FROM generate_series(1, 20) g;`,
  );
  const held = await holdConnection(s.conn);
  const forks = [];
  for (const a of agents) forks.push(await t.run((e) => e.ensure({ sessionId: 's1', agentId: a })));
  return { s, held, forks };
}

describe('agent merge', () => {
  it("three subagents' work lands on top of the parent's own; a fourth that changed the parent's row is refused, nothing applied", async () => {
    const t = testProject({ source: await makeSource() });
    const { s, held, forks } = await session(t, ['a1', 'a2', 'a3', 'a4']);
    try {
      const [a1, a2, a3, a4] = forks;
      expect(new Set(forks.map((f) => f!.fork?.method))).toEqual(new Set(['frozen']));
      await asBranch(
        a1!.conn,
        `CREATE TABLE invoices (id int PRIMARY KEY, order_id int REFERENCES orders); INSERT INTO invoices VALUES (1, 1), (2, 2)`,
      );
      await asBranch(
        a2!.conn,
        `ALTER TABLE orders ADD COLUMN priority int NOT NULL DEFAULT 0; UPDATE orders SET priority = 5 WHERE id <= 3`,
      );
      await asBranch(
        a3!.conn,
        `CREATE TABLE notes (k text PRIMARY KEY, body text); INSERT INTO notes VALUES ('a', 'first'); INSERT INTO orders VALUES (21, 'new', 210)`,
      );
      await asBranch(a4!.conn, `UPDATE orders SET status = 'cancelled' WHERE id = 7`);
      // the parent's own work after the fork: a column, and row 7
      await asBranch(
        s.conn,
        `ALTER TABLE orders ADD COLUMN paid boolean NOT NULL DEFAULT false; UPDATE orders SET status = 'paid', paid = true WHERE id = 7`,
      );
      for (const a of [a1, a2, a3])
        await t.run((e) => e.stopSubagent({ sessionId: 's1', agentId: a!.record.agent_id! }));

      const dry = await t.run((e) => e.merge('a2', { dryRun: true }));
      expect(dry.outcome).toBe('dry-run');
      expect(dry.sql).toMatch(/ADD COLUMN "priority" integer NOT NULL DEFAULT 0/);
      expect(dry.sql).not.toMatch(/paid/); // the parent's own column is never undone
      for (const a of ['a1', 'a2', 'a3']) expect((await t.run((e) => e.merge(a))).outcome).toBe('applied');

      const rows = await asBranch<{ id: number; status: string; priority: number; paid: boolean }>(
        s.conn,
        `SELECT id, status, priority, paid FROM orders WHERE id IN (1, 7, 21) ORDER BY id`,
      );
      expect(rows).toEqual([
        { id: 1, status: 'new', priority: 5, paid: false },
        { id: 7, status: 'paid', priority: 0, paid: true },
        { id: 21, status: 'new', priority: 0, paid: false },
      ]);
      expect(await asBranch(s.conn, `SELECT count(*)::int AS n FROM invoices`)).toEqual([{ n: 2 }]);
      expect(await asBranch(s.conn, `SELECT body FROM notes`)).toEqual([{ body: 'first' }]);
      // what the merge made is the session's role's, as the rest of its branch
      const owner = await asBranch<{ o: string }>(
        s.conn,
        `SELECT tableowner AS o FROM pg_tables WHERE tablename = 'notes'`,
      );
      expect(owner[0]!.o).toBe(s.record.role);

      const before = await stateOf(s.branch);
      const err = await conflictOf(t.run((e) => e.merge('a4')));
      expect(err.code).toBe('MERGE_CONFLICT');
      expect(err.exitCode).toBe(9);
      const rowsConflicts = (
        err.data!.conflicts as { rows: { table: string; key: string; branch: string; parent: string }[] }
      ).rows;
      expect(rowsConflicts).toEqual([
        expect.objectContaining({ table: 'public.orders', key: '(7)', why: 'both updated this row' }),
      ]);
      expect(rowsConflicts[0]!.branch).toMatch(/"status":"cancelled"/);
      expect(rowsConflicts[0]!.parent).toMatch(/"status":"paid"/);
      expect(await stateOf(s.branch)).toBe(before);
      // merged branches are listed as such, and their fork point is kept only while one that is not merged needs it
      const ls = await t.run((e) => e.list());
      expect(
        ls
          .filter((b) => b.merged_into === s.branch)
          .map((b) => b.agent_id)
          .sort(),
      ).toEqual(['a1', 'a2', 'a3']);
    } finally {
      await held.close();
    }
  });

  it('the conflict rule: the same column altered both ways, a table one side dropped and the other wrote', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, held } = await session(t, ['a1', 'a2', 'a3']);
    try {
      await asBranch(s.conn, `ALTER TABLE orders ALTER COLUMN amount TYPE bigint; DROP TABLE users`);
      await t.run(async (e) => {
        const ensure = (a: string) => e.ensure({ sessionId: 's1', agentId: a });
        await asBranch((await ensure('a1')).conn, `ALTER TABLE orders ALTER COLUMN amount TYPE text`);
        await asBranch((await ensure('a2')).conn, `INSERT INTO users (email) VALUES ('z@x')`);
        await asBranch((await ensure('a3')).conn, `DROP TABLE orders`);
      });
      await asBranch(s.conn, `UPDATE orders SET status = 'seen' WHERE id = 1`);
      const c1 = await conflictOf(t.run((e) => e.merge('a1')));
      expect(JSON.stringify(c1.data)).toMatch(/column:public\.orders\.amount/);
      const c2 = await conflictOf(t.run((e) => e.merge('a2')));
      expect(c2.data!.conflicts).toMatchObject({ rows: [{ table: 'public.users', why: /parent dropped this table/ }] });
      const c3 = await conflictOf(t.run((e) => e.merge('a3')));
      expect(c3.data!.conflicts).toMatchObject({
        rows: [{ table: 'public.orders', why: /branch dropped this table/ }],
      });
    } finally {
      await held.close();
    }
  });

  it('a merge that fails midway (a statement error, a killed process) leaves the session branch as it was', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, held } = await session(t, ['a1']);
    try {
      const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      await asBranch(
        a.conn,
        `CREATE TABLE extra (id int PRIMARY KEY); INSERT INTO extra VALUES (1);
         UPDATE orders SET status = 'done' WHERE id <= 4; DELETE FROM orders WHERE id = 20`,
      );
      const before = await stateOf(s.branch);
      // a statement error half-way through the rows
      const failing = new Faults().fail(/^UPDATE "public"\."orders" SET "status" = 'done' WHERE \("id"\) = \('3'\)/);
      const e1 = await t.open(failing);
      const err = await conflictOf(e1.merge('a1').finally(() => e1.close()));
      expect(err.code).toBe('MERGE_FAILED');
      expect(causes(err).some((c) => c instanceof InjectedFault)).toBe(true);
      expect(await stateOf(s.branch)).toBe(before);
      // the process killed between two statements of the transaction: the server rolls it back
      const crash = new Faults().crash(/^DELETE FROM "public"\."orders"/);
      const e2 = await t.open(crash);
      await e2.merge('a1').catch(() => {});
      expect(crash.crashed).toBe(true);
      await crash.settled();
      expect(await stateOf(s.branch)).toBe(before);
      // and then it merges
      expect((await t.run((e) => e.merge('a1'))).outcome).toBe('applied');
      expect(await asBranch(s.conn, `SELECT count(*)::int AS n FROM orders WHERE status = 'done'`)).toEqual([{ n: 4 }]);
    } finally {
      await held.close();
    }
  });

  it("the fork point is kept while a subagent's branch needs it, then gc drops it", async () => {
    const t = testProject({ source: await makeSource() });
    const { s, held } = await session(t, ['a1']);
    try {
      const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      const fp = a.record.fork_point ?? (await t.run((e) => e.list())).find((b) => b.name === a.branch)!.fork_point;
      expect(fp).toMatch(/^pgx_frz_/);
      // the parent changes and a new fork makes a newer copy: the old one would be dropped, but a1 keeps it
      await asBranch(s.conn, `INSERT INTO orders VALUES (99, 'new', 1)`);
      await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a2' }));
      await t.run((e) => e.gc());
      expect((await sql(`SELECT 1 FROM pg_database WHERE datname = $1`, [fp])).length).toBe(1);
      await asBranch(a.conn, `INSERT INTO orders VALUES (100, 'new', 1)`);
      await t.run((e) => e.stopSubagent({ sessionId: 's1', agentId: 'a1' }));
      expect((await t.run((e) => e.merge('a1'))).outcome).toBe('applied');
      await t.run((e) => e.gc());
      expect((await sql(`SELECT 1 FROM pg_database WHERE datname = $1`, [fp])).length).toBe(0);
      // a second merge of it: its fork point is gone, and it says so
      const err = await conflictOf(t.run((e) => e.merge('a1')));
      expect(err.code).toBe('NOT_FOUND');
      expect(err.message).toMatch(/fork point/);
    } finally {
      await held.close();
    }
  });
});
