// `pgx agent diff` in-process against the real server: every schema object kind added, dropped and altered; rows
// added, removed and changed (by primary key, and as multisets without one); the bound (counts only past it, said
// so) and the time budget; a retiring branch read and shut again; the template read through its reused copy, never
// touched itself; another branch as the baseline.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { crashDuring, dbRow, testProject } from '../helpers/engine.js';
import { Faults } from '../helpers/faults.js';
import { pgInfo, sql } from '../helpers/pgx.js';

async function onDb(database: string, text: string): Promise<void> {
  const i = pgInfo();
  const c = new pg.Client({ host: i.host, port: i.port, user: i.user, password: i.password, database });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

const SOURCE_SQL = `
  CREATE TYPE mood AS ENUM ('sad', 'ok');
  CREATE TYPE gone_type AS ENUM ('x');
  CREATE SEQUENCE counter;
  CREATE SEQUENCE tuned INCREMENT 1;
  CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL, price int, CONSTRAINT price_positive CHECK (price > 0));
  CREATE INDEX items_note ON items (note);
  CREATE INDEX items_price ON items (price);
  CREATE TABLE nokey (v text);
  CREATE TABLE quiet (id int PRIMARY KEY, v text);
  CREATE TABLE doomed (x int);
  CREATE VIEW cheap AS SELECT id FROM items WHERE price < 10;
  CREATE VIEW kept_view AS SELECT id FROM items;
  CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS 'SELECT a + 1';
  CREATE FUNCTION g() RETURNS int LANGUAGE sql AS 'SELECT 1';
  CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
  CREATE TRIGGER items_touch BEFORE UPDATE ON items FOR EACH ROW EXECUTE FUNCTION touch();
  INSERT INTO items SELECT g, 'n' || g, g FROM generate_series(1, 20) g;
  INSERT INTO nokey VALUES ('a'), ('b'), ('b');
  INSERT INTO quiet VALUES (1, 'q');
`;

const BRANCH_SQL = `
  CREATE EXTENSION citext;
  CREATE TABLE added_t (id int);
  DROP TABLE doomed;
  DROP VIEW cheap;
  ALTER TABLE items ADD COLUMN tag text;
  ALTER TABLE items ALTER COLUMN price TYPE bigint;
  DROP INDEX items_price;
  CREATE INDEX items_tag ON items (tag);
  ALTER TABLE items ADD CONSTRAINT note_short CHECK (length(note) < 100);
  ALTER TABLE items DROP CONSTRAINT price_positive, ADD CONSTRAINT price_positive CHECK (price >= 0);
  CREATE VIEW fresh_view AS SELECT note FROM items;
  CREATE OR REPLACE VIEW kept_view AS SELECT id FROM items WHERE id > 0;
  CREATE OR REPLACE FUNCTION f(a int) RETURNS int LANGUAGE sql AS 'SELECT a + 2';
  DROP FUNCTION g();
  CREATE FUNCTION h(t text) RETURNS text LANGUAGE sql AS 'SELECT t';
  DROP TRIGGER items_touch ON items;
  CREATE TRIGGER items_touch2 BEFORE INSERT ON items FOR EACH ROW EXECUTE FUNCTION touch();
  CREATE SEQUENCE new_seq;
  ALTER SEQUENCE tuned INCREMENT 5;
  DROP SEQUENCE counter;
  ALTER TYPE mood ADD VALUE 'glad';
  DROP TYPE gone_type;
  CREATE TYPE new_enum AS ENUM ('a');
  CREATE SCHEMA extra;
  -- rows: items +2 -1 ~1 (by key); nokey: one 'b' replaced by 'c' (+1 -1, no key); quiet untouched
  INSERT INTO items (id, note, price) VALUES (101, 'x', 1), (102, 'y', 2);
  DELETE FROM items WHERE id = 1;
  UPDATE items SET note = 'changed' WHERE id = 2;
  UPDATE items SET tag = 'only-new-column' WHERE id = 3;
  DELETE FROM nokey WHERE ctid = (SELECT min(ctid) FROM nokey WHERE v = 'b');
  INSERT INTO nokey VALUES ('c');
`;

const names = (list: { kind: string; name: string }[]) => list.map((c) => `${c.kind} ${c.name}`).sort();

describe.concurrent('agent diff (in-process)', () => {
  it('every schema object kind added, dropped and altered, and rows added, removed and changed, against the template (the parent of a template clone)', async () => {
    const source = `src_diff_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${source}`);
    await onDb(source, SOURCE_SQL);
    const t = testProject({ source });
    const b = await t.run((e) => e.ensure({ execId: 'd1' }));
    await onDb(b.branch, BRANCH_SQL);
    const tplBefore = await dbRow(t.template);
    const r = await t.run((e) => e.diff({ id: 'd1' }));
    expect(r.against).toEqual({ kind: 'parent', database: t.template, parent_was_template: true });
    expect(names(r.schema.added)).toEqual(
      [
        'column public.items.tag',
        'constraint public.items.note_short',
        'enum public.new_enum',
        'extension citext',
        'function public.h(t text)',
        'index public.items_tag',
        'schema extra',
        'sequence public.new_seq',
        'table public.added_t',
        'column public.added_t.id',
        'trigger public.items.items_touch2',
        'view public.fresh_view',
      ].sort(),
    );
    expect(names(r.schema.dropped)).toEqual(
      [
        'column public.doomed.x',
        'enum public.gone_type',
        'function public.g()',
        'index public.items_price',
        'sequence public.counter',
        'table public.doomed',
        'trigger public.items.items_touch',
        'view public.cheap',
      ].sort(),
    );
    expect(names(r.schema.altered)).toEqual(
      [
        'column public.items.price',
        'constraint public.items.price_positive',
        'enum public.mood',
        'function public.f(a integer)',
        'sequence public.tuned',
        'view public.kept_view',
      ].sort(),
    );
    // Rows, over the columns both sides have with the same type (price changed type, tag is new: id and note).
    const items = r.data.find((d) => d.table === 'public.items');
    expect(items).toEqual({
      table: 'public.items',
      compared: 'exact',
      base_rows: 20,
      branch_rows: 21,
      rows_added: 2,
      rows_removed: 1,
      rows_changed: 1,
      columns_compared: 2,
    });
    expect(r.data.find((d) => d.table === 'public.nokey')).toEqual({
      table: 'public.nokey',
      compared: 'exact',
      base_rows: 3,
      branch_rows: 3,
      rows_added: 1,
      rows_removed: 1,
      rows_changed: null,
    });
    expect(r.data.map((d) => d.table).sort()).toEqual(['public.items', 'public.nokey']); // quiet: unchanged, not listed
    expect(r.bounds).toMatchObject({
      tables_compared: 3,
      tables_exact: 3,
      tables_counts_only: 0,
      tables_skipped: 0,
      exact_max_rows: 100_000,
    });
    expect(r.changed).toBe(true);
    // The template was read through a copy; the template itself is as it was (refusing connections, same stamp).
    expect(await dbRow(t.template)).toEqual(tplBefore);
    const copies = await sql<{ name: string }>(
      'SELECT name FROM pgx_template_build WHERE template = $1',
      [t.template],
      'pgx_registry',
    );
    expect(copies).toHaveLength(1);
    // … kept and reused by the next diff (no second copy), which --against template gives the same answer.
    const again = await t.run((e) => e.diff({ id: 'd1' }, 'template'));
    expect(again.against).toEqual({ kind: 'template', database: t.template, parent_was_template: false });
    expect(names(again.schema.added)).toEqual(names(r.schema.added));
    expect(await sql('SELECT name FROM pgx_template_build WHERE template = $1', [t.template], 'pgx_registry')).toEqual(
      copies,
    );
    // A template refresh sweeps the copy with the other build leftovers.
    await t.run((e) => e.refreshTemplate());
    expect(await dbRow(copies[0]!.name)).toBeUndefined();
    expect(await sql('SELECT name FROM pgx_template_build WHERE template = $1', [t.template], 'pgx_registry')).toEqual(
      [],
    );
    await t.run((e) => e.down({ id: 'd1' }, { now: true }));
  });

  it('an unchanged branch: no changes; the bound: a table past it is counted only, and the output says so; the time budget skips tables', async () => {
    const t = testProject();
    const base = await t.run((e) => e.ensure({ execId: 'base' }));
    const other = await t.run((e) => e.ensure({ execId: 'other' }));
    for (const db of [base.branch, other.branch])
      await onDb(
        db,
        'CREATE TABLE big (id int PRIMARY KEY, v text); INSERT INTO big SELECT g, md5(g::text) FROM generate_series(1, 50) g; CREATE TABLE small (id int PRIMARY KEY)',
      );
    const same = await t.run((e) => e.diff({ id: 'other' }, { branch: base.branch }));
    expect(same).toMatchObject({
      changed: false,
      data: [],
      schema: { added: [], dropped: [], altered: [] },
      against: { kind: 'branch', database: base.branch },
    });
    // Same row count, one row changed: exact sees it, counts-only cannot (and says it did not compare contents).
    await onDb(other.branch, "UPDATE big SET v = 'x' WHERE id = 7");
    const exact = await t.run((e) => e.diff({ id: 'other' }, { branch: base.branch }));
    expect(exact.data).toEqual([
      {
        table: 'public.big',
        compared: 'exact',
        base_rows: 50,
        branch_rows: 50,
        rows_added: 0,
        rows_removed: 0,
        rows_changed: 1,
      },
    ]);
    await onDb(other.branch, 'INSERT INTO big VALUES (51, null), (52, null)');
    const bounded = await t.run((e) =>
      e.diff({ id: 'other' }, { branch: base.branch }, { exactMaxRows: 10, exactMaxBytes: 1 << 30 }),
    );
    expect(bounded.data).toEqual([
      {
        table: 'public.big',
        compared: 'counts',
        base_rows: 50,
        branch_rows: 52,
        rows_added: 2,
        rows_removed: 0,
        rows_changed: null,
      },
    ]);
    expect(bounded.bounds).toMatchObject({ exact_max_rows: 10, tables_exact: 1, tables_counts_only: 1 });
    const byBytes = await t.run((e) =>
      e.diff({ id: 'other' }, { branch: base.branch }, { exactMaxRows: 1000, exactMaxBytes: 1 }),
    );
    expect(byBytes.bounds).toMatchObject({ exact_max_bytes: 1, tables_exact: 1, tables_counts_only: 1 }); // small is empty: 0 bytes
    expect(byBytes.data.map((d) => [d.table, d.compared])).toEqual([['public.big', 'counts']]);
    const budget = await t.run((e) =>
      e.diff({ id: 'other' }, { branch: base.branch }, { exactMaxRows: 1000, exactMaxBytes: 1 << 30, budgetMs: 0 }),
    );
    expect(budget.data.map((d) => [d.table, d.compared])).toEqual([
      ['public.big', 'skipped'],
      ['public.small', 'skipped'],
    ]);
    expect(budget.bounds.tables_skipped).toBe(2);
    await t.run(async (e) => {
      await e.down({ id: 'base' }, { now: true });
      await e.down({ id: 'other' }, { now: true });
    });
  });

  it('a retiring branch (refusing connections) is read, and refuses connections again after; unknown branches are NOT_FOUND', async () => {
    const t = testProject();
    const b = await t.run((e) => e.ensure({ execId: 'ret' }));
    await onDb(b.branch, 'CREATE TABLE made_here (x int); INSERT INTO made_here VALUES (1)');
    await t.run((e) => e.down({ id: 'ret' }));
    expect((await dbRow(b.branch))!.datallowconn).toBe(false);
    const r = await t.run((e) => e.diff({ branch: b.branch }, 'template'));
    expect(names(r.schema.added)).toEqual(['column public.made_here.x', 'table public.made_here']);
    expect((await dbRow(b.branch))!.datallowconn).toBe(false);
    expect((await sql('SELECT state FROM pgx_branch WHERE name = $1', [b.branch], 'pgx_registry'))[0].state).toBe(
      'retiring',
    );
    await expect(t.run((e) => e.diff({ id: 'nope' }))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(t.run((e) => e.diff({ id: 'ret' }, { branch: 'no_such_branch' }))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await t.run((e) => e.down({ id: 'ret' }, { now: true }));
  });

  it('crash windows: a copy of the template killed before its stamp is swept by the next diff; a retiring branch left open by a killed diff is shut by the next', async () => {
    const t = testProject();
    const b = await t.run((e) => e.ensure({ execId: 'crash' }));
    await onDb(b.branch, 'CREATE TABLE c (x int)');
    const builds = async () =>
      (
        await sql<{ name: string }>(
          'SELECT name FROM pgx_template_build WHERE template = $1',
          [t.template],
          'pgx_registry',
        )
      ).map((r) => r.name);
    // 1. Killed between the copy's CREATE DATABASE and its stamp: a recorded, unstamped database.
    await crashDuring(t, /^COMMENT ON DATABASE "pgx_base_/, (e) => e.diff({ id: 'crash' }));
    const [left] = await builds();
    expect(left).toMatch(/^pgx_base_/);
    expect((await dbRow(left!))?.comment).toBeNull();
    const r = await t.run((e) => e.diff({ id: 'crash' }));
    expect(r.schema.added.map((c) => c.name).sort()).toEqual(['public.c', 'public.c.x']);
    const now = await builds();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(left);
    expect(await dbRow(left!)).toBeUndefined(); // the leftover was dropped (it was recorded: provably pgx's)
    expect(JSON.parse((await dbRow(now[0]!))!.comment!.replace(/^pgx:template-building:/, ''))).toMatchObject({
      project: t.name,
      baseline_of: (await dbRow(t.template))!.oid,
    });

    // 2. Killed after letting the admin into a retiring branch, before shutting it again.
    await t.run((e) => e.down({ id: 'crash' }));
    // (The shutting is best effort in a finally, so the in-process "crash" is swallowed there: the gate still cut
    // every connection before it, which is what a killed process leaves.)
    const faults = new Faults().crash(new RegExp(`^ALTER DATABASE "${b.branch}" WITH ALLOW_CONNECTIONS false`));
    const dying = await t.open(faults);
    await dying.diff({ id: 'crash' }, 'template').catch(() => undefined);
    expect(faults.crashed).toBe(true);
    await faults.settled();
    expect((await dbRow(b.branch))!.datallowconn).toBe(true); // the window: open, to the admin only (its role is NOLOGIN)
    const [{ role }] = await sql('SELECT role FROM pgx_branch WHERE name = $1', [b.branch], 'pgx_registry');
    if (role)
      expect((await sql('SELECT rolcanlogin FROM pg_roles WHERE rolname = $1', [role]))[0].rolcanlogin).toBe(false);
    const again = await t.run((e) => e.diff({ id: 'crash' }, 'template'));
    expect(again.changed).toBe(true);
    expect((await dbRow(b.branch))!.datallowconn).toBe(false);
    await t.run((e) => e.down({ id: 'crash' }, { now: true }));
    await t.run((e) => e.refreshTemplate());
    expect(await builds()).toEqual([]);
  });

  it("--against parent: the record's parent branch as it is now (the fork's column); a parent that is gone is NOT_FOUND, with --against template as the way out", async () => {
    const t = testProject();
    const parent = await t.run((e) => e.ensure({ execId: 'par' }));
    await onDb(parent.branch, 'CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
    const child = await t.run((e) => e.ensure({ execId: 'kid' }));
    await onDb(
      child.branch,
      'CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1), (2); CREATE TABLE kid_own (y int)',
    );
    await sql('UPDATE pgx_branch SET parent = $2 WHERE name = $1', [child.branch, parent.branch], 'pgx_registry');
    const r = await t.run((e) => e.diff({ id: 'kid' }));
    expect(r.against).toEqual({ kind: 'parent', database: parent.branch, parent_was_template: false });
    expect(names(r.schema.added)).toEqual(['column public.kid_own.y', 'table public.kid_own']);
    expect(r.data).toEqual([
      {
        table: 'public.parent_mig',
        compared: 'exact',
        base_rows: 1,
        branch_rows: 2,
        rows_added: 1,
        rows_removed: 0,
        rows_changed: null,
      },
    ]);
    // Two-way: what the parent did after the fork shows reversed.
    await onDb(parent.branch, 'CREATE TABLE parent_later (z int)');
    expect(names((await t.run((e) => e.diff({ id: 'kid' }))).schema.dropped)).toEqual([
      'column public.parent_later.z',
      'table public.parent_later',
    ]);
    await t.run((e) => e.down({ id: 'par' }, { now: true }));
    await expect(t.run((e) => e.diff({ id: 'kid' }))).rejects.toMatchObject({
      code: 'NOT_FOUND',
      hint: expect.stringContaining('--against template'),
    });
    expect((await t.run((e) => e.diff({ id: 'kid' }, 'template'))).against.database).toBe(t.template);
    await t.run((e) => e.down({ id: 'kid' }, { now: true }));
  });
});
