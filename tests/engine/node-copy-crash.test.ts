// Crash windows of the Node copy (src/copy/), in-process (the StatementGate seam): a copy killed midway (in its
// schema, its rows, its keys, or what comes after the rows) leaves nothing pgx would take for a finished copy. A frozen
// copy stays 'making' and unstamped, and the next fork drops it and makes its own; a reset's copy stays a pgx_new_
// leftover the next reset removes, the branch unchanged; an import's copy stays an unfinished pgx_src_, never the
// source, and the next import drops it. PGX_COPY_METHOD=node: pg_dump is on this machine, and would be chosen.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnParams } from '../../src/server/conn-params.js';
import { crashDuring, dbRow, expectNoOrphans, makeSource, testProject, type TestProject } from '../helpers/engine.js';
import { pgInfo, sql } from '../helpers/pgx.js';
import { classifyInput } from '../../src/project/source-input.js';

beforeAll(() => void (process.env.PGX_COPY_METHOD = 'node'));
afterAll(() => void delete process.env.PGX_COPY_METHOD);

function clientOf(c: ConnParams): pg.Client {
  const cl = new pg.Client({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database });
  cl.on('error', () => {});
  return cl;
}

async function sumOf(c: ConnParams): Promise<number> {
  const cl = clientOf(c);
  await cl.connect();
  try {
    return (await cl.query('SELECT coalesce(sum(x), 0)::int AS n FROM parent_mig')).rows[0].n;
  } finally {
    await cl.end();
  }
}

const copiesOf = (parent: string) =>
  sql<{ name: string; state: string; method: string | null }>(
    `SELECT name, state, method FROM pgx_frozen WHERE parent = $1 ORDER BY ticket DESC`,
    [parent],
    'pgx_registry',
  );

/** A session whose branch the parent migrated (a table of rows, a key, a sequence) and holds a connection to. */
async function connectedParent(t: TestProject) {
  const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
  const parent = clientOf(s.conn);
  await parent.connect();
  await parent.query(
    'CREATE TABLE parent_mig (id serial PRIMARY KEY, x int); INSERT INTO parent_mig (x) SELECT 1 FROM generate_series(1, 50)',
  );
  return { s, parent };
}

/** The Node copy's steps, each a window: its schema, its rows, its keys (after the rows), the sequences' values. */
const WINDOWS: [string, RegExp][] = [
  ['in its schema, before the rows', /^CREATE TABLE "public"\."parent_mig"/],
  ['in its rows', /^COPY "?public"?\."?parent_mig"? .*FROM STDIN/],
  ['building its keys, after the rows', /ADD CONSTRAINT "parent_mig_pkey" PRIMARY KEY/],
  ["setting the sequences' values", /^SELECT setval\(/],
];

describe('the Node copy killed midway: a frozen copy of a connected session branch', () => {
  for (const [name, before] of WINDOWS) {
    it(name, async () => {
      const t = testProject({ source: await makeSource() });
      const { s, parent } = await connectedParent(t);
      try {
        await crashDuring(t, before, (e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
        const left = await copiesOf(s.branch);
        expect(left.map((c) => c.state)).toEqual(['making']); // never 'ready'
        expect((await dbRow(left[0]!.name))?.comment ?? null).toBeNull(); // never stamped pgx:frozen:
        const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
        expect(a1.fork).toMatchObject({ method: 'frozen', frozen: { reused: false, made: 'node-copy' } });
        expect(await sumOf(a1.conn)).toBe(50);
        expect(await dbRow(left[0]!.name)).toBeUndefined();
        expect(await copiesOf(s.branch)).toEqual([
          { name: a1.fork!.frozen!.copy, state: 'ready', method: 'node-copy' },
        ]);
      } finally {
        await parent.end();
      }
      await expectNoOrphans(t);
    });
  }
});

describe('the Node copy killed midway: a reset of a subagent from its connected parent', () => {
  it('in its rows: the branch is unchanged, the leftover goes with the next reset, which copies by Node', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      await parent.query('INSERT INTO parent_mig (x) VALUES (100)');
      const rec = a.record;
      await crashDuring(t, /^COPY .* FROM STDIN/, (e) => e.reset({ branch: rec.name }, 'parent'));
      expect(await sumOf(a.conn)).toBe(50); // the subagent's branch as it was
      const r = await t.run((e) => e.reset({ branch: rec.name }, 'parent'));
      expect(r).toMatchObject({ method: 'node-copy', from: s.branch });
      expect(await sumOf(a.conn)).toBe(150);
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });
});

describe('the Node copy killed midway: a source import from a URL', () => {
  it('in its rows: no source under the name, an unfinished recorded copy the next import drops', async () => {
    const origin = `origin_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${origin}`);
    // Nothing that looks personal: the import's scan would refuse it before any copy.
    await sql(
      `CREATE TABLE items (id serial PRIMARY KEY, n int); INSERT INTO items (n) SELECT g FROM generate_series(1, 20) g`,
      [],
      origin,
    );
    const t = testProject();
    const into = `imp_${origin}`;
    const i = pgInfo();
    const input = classifyInput(
      `postgresql://${i.user}:${encodeURIComponent(i.password)}@${i.host}:${i.port}/${origin}`,
      '/',
    );
    await crashDuring(t, /^COPY .* FROM STDIN/, (e) => e.importSource({ input, into, progress: () => {} }));
    expect(await dbRow(into)).toBeUndefined();
    const left = await sql<{ name: string }>(
      `SELECT name FROM pgx_source_copy WHERE database = $1`,
      [into],
      'pgx_registry',
    );
    expect(left).toHaveLength(1);
    expect((await dbRow(left[0]!.name))?.comment).toMatch(/^pgx:source-importing:/);
    const r = await t.run((e) => e.importSource({ input, into, progress: () => {} }));
    expect(r).toMatchObject({ database: into, method: 'node-copy', method_why: 'PGX_COPY_METHOD=node' });
    expect(await dbRow(left[0]!.name)).toBeUndefined();
    expect(await sql(`SELECT count(*)::int AS n, sum(n)::int AS s FROM items`, [], into)).toEqual([{ n: 20, s: 210 }]);
    expect(await sql(`SELECT nextval('items_id_seq')::int AS v`, [], into)).toEqual([{ v: 21 }]);
    await sql(`DROP DATABASE ${into}`);
    await sql(`DROP DATABASE ${origin}`);
    await sql(`DELETE FROM pgx_source WHERE database = $1`, [into], 'pgx_registry');
  });
});
