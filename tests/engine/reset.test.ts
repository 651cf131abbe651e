// reset and adopt in-process against the real server (engine/reset.ts): the branch's contents replaced under the same
// name, role and DSN, its backends terminated first and counted; unknown (5) and foreign (6) refused; and every crash
// window of the replacement: the name holds the old database or the new one, never nothing or a stranger, the next
// call clears what was left, and a stranger's database under a pgx-only name is never dropped.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ConnParams } from '../../src/server/conn-params.js';
import type { Engine } from '../../src/engine/api.js';
import {
  crashDuring,
  dbRow,
  expectNoOrphans,
  makeSource,
  registryRows,
  testProject,
  type TestProject,
} from '../helpers/engine.js';
import { sql } from '../helpers/pgx.js';

function clientOf(c: ConnParams): pg.Client {
  const cl = new pg.Client({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database });
  cl.on('error', () => {});
  return cl;
}

async function asBranch<R = Record<string, unknown>>(c: ConnParams, text: string): Promise<R[]> {
  const cl = clientOf(c);
  await cl.connect();
  try {
    return (await cl.query(text)).rows as R[];
  } finally {
    await cl.end();
  }
}

const tables = async (c: ConnParams) =>
  (
    await asBranch<{ t: string | null }>(
      c,
      `SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE schemaname = 'public'`,
    )
  )[0]!.t;

/** No swap leftover of the project's records (pgx_new_/pgx_old_ of their nonces), none recorded in flight. */
async function expectNoSwapLeftovers(t: TestProject): Promise<void> {
  for (const r of await registryRows(t.name)) {
    expect(r.swap_nonce ?? null, r.name).toBeNull();
    const left = await sql(
      `SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE $1 AND datname <> $2`,
      [`pgx:branch:${r.identity_key}%`, r.name],
    );
    expect(left, r.name).toEqual([]);
  }
}

/** A session with a migrated branch and a subagent that changed its own copy. */
async function family(t: TestProject) {
  const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
  await asBranch(s.conn, 'CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
  const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
  await asBranch(a.conn, 'INSERT INTO parent_mig VALUES (50); CREATE TABLE mine (y int)');
  return { s, a };
}

describe.concurrent('reset', () => {
  it("--to parent: the parent's current state, same name, role and DSN; backends terminated and counted", async () => {
    const t = testProject({ source: await makeSource() });
    const { s, a } = await family(t);
    await asBranch(s.conn, 'INSERT INTO parent_mig VALUES (2)'); // the parent moved on after the fork
    const held = clientOf(a.conn);
    await held.connect();
    const oid = (await dbRow(a.branch))!.oid;
    const r = await t.run((e) => e.reset({ agent: 'a1' }));
    expect(r).toMatchObject({
      name: a.branch,
      from: s.branch,
      parent: s.branch,
      role: a.record.role,
      backends_terminated: 1,
      backends_remaining: 0,
    });
    expect(['template-copy', 'dump-restore']).toContain(r.method);
    await expect(held.query('SELECT 1')).rejects.toThrow();
    await held.end().catch(() => {});
    expect((await dbRow(a.branch))!.oid).not.toBe(oid);
    // The same DSN (credentials included) reaches the new contents.
    expect(await tables(a.conn)).toBe('parent_mig,users');
    expect((await asBranch<{ n: number }>(a.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(3);
    const owners = await asBranch<{ o: string }>(
      a.conn,
      `SELECT string_agg(DISTINCT tableowner, ',') AS o FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owners[0]!.o).toBe(a.record.role);
    // The parent is untouched.
    expect((await asBranch<{ n: number }>(s.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(3);
    await expectNoOrphans(t);
    await expectNoSwapLeftovers(t);
  });

  it('--to template: the template, lineage cleared; an attach after it works as before', async () => {
    const t = testProject({ source: await makeSource() });
    const { a } = await family(t);
    const r = await t.run((e) => e.reset({ agent: 'a1' }, 'template'));
    expect(r).toMatchObject({ name: a.branch, from: null, parent: null, method: 'template', backends_terminated: 0 });
    expect(await tables(a.conn)).toBe('users');
    const again = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(again).toMatchObject({ branch: a.branch, method: 'attach' });
    await expectNoOrphans(t);
  });

  it('a session branch reset to the template is unchanged again: the next fork takes the template path', async () => {
    const t = testProject({ source: await makeSource() });
    const { s } = await family(t);
    await t.run((e) => e.reset({ session: 's1' }));
    const b = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'b1' }));
    expect(b.fork).toEqual({ parent: s.branch, method: 'unchanged' });
    expect(await tables(b.conn)).toBe('users');
  });

  it('unknown: NOT_FOUND (exit 5); a database pgx did not make: NOT_PGX_DATABASE (exit 6), untouched', async () => {
    const t = testProject({ source: await makeSource() });
    await expect(t.run((e) => e.reset({ agent: 'nobody' }))).rejects.toMatchObject({ code: 'NOT_FOUND', exitCode: 5 });
    await expect(t.run((e) => e.reset({ branch: `nosuch_${t.host}` }))).rejects.toMatchObject({
      code: 'NOT_FOUND',
      exitCode: 5,
    });
    const stranger = `stranger_${t.host}`;
    await sql(`CREATE DATABASE ${stranger}`);
    try {
      await expect(t.run((e) => e.reset({ branch: stranger }))).rejects.toMatchObject({
        code: 'NOT_PGX_DATABASE',
        exitCode: 6,
      });
      // A record whose database was replaced by someone else's: refused, and the database is left as it is.
      const x = await t.run((e) => e.ensure({ execId: 'x' }));
      await sql(`ALTER DATABASE "${x.branch}" RENAME TO "${x.branch}_moved"`);
      await sql(`CREATE DATABASE "${x.branch}"`);
      const before = await dbRow(x.branch);
      await expect(t.run((e) => e.reset({ id: 'x' }))).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE', exitCode: 6 });
      expect(await dbRow(x.branch)).toEqual(before);
      await sql(`DROP DATABASE "${x.branch}"`);
      await sql(`ALTER DATABASE "${x.branch}_moved" RENAME TO "${x.branch}"`);
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${stranger}`);
    }
  });
});

describe.concurrent('adopt', () => {
  it("the session's branch becomes a copy of the subagent's: same session DSN, its backends terminated first", async () => {
    const t = testProject({ source: await makeSource() });
    const { s, a } = await family(t);
    const held = clientOf(s.conn);
    await held.connect();
    const r = await t.run((e) => e.adopt('a1'));
    expect(r).toMatchObject({
      name: s.branch,
      agent_branch: a.branch,
      from: a.branch,
      parent: null,
      role: s.record.role,
      backends_terminated: 1,
    });
    await held.end().catch(() => {});
    expect(await tables(s.conn)).toBe('mine,parent_mig,users');
    expect((await asBranch<{ n: number }>(s.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(51);
    const owners = await asBranch<{ o: string }>(
      s.conn,
      `SELECT string_agg(DISTINCT tableowner, ',') AS o FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owners[0]!.o).toBe(s.record.role);
    // The subagent's branch is untouched, and the next fork of the session copies (its contents are not the template's).
    expect(await tables(a.conn)).toBe('mine,parent_mig,users');
    const b = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'b1' }));
    expect(b.fork?.method).not.toBe('unchanged');
    expect(await tables(b.conn)).toBe('mine,parent_mig,users');
    await expectNoOrphans(t);
    await expectNoSwapLeftovers(t);
  });

  it('an agent without a branch: NOT_FOUND', async () => {
    const t = testProject({ source: await makeSource() });
    await expect(t.run((e) => e.adopt('nobody'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe.concurrent('reset and adopt: crash windows', () => {
  const windows: [string, RegExp][] = [
    ['after the replacement is recorded, before its CREATE DATABASE', /^CREATE DATABASE "pgx_new_/],
    ['between the CREATE DATABASE and its stamp', /^COMMENT ON DATABASE "pgx_new_/],
    ['between the stamp and the guards', /^ALTER DATABASE "pgx_new_.* SET /],
    ['before the branch refuses connections', /WITH ALLOW_CONNECTIONS false/],
    ['before its backends are terminated', /pg_terminate_backend/],
    ['before the swap renames the branch aside', /RENAME TO "pgx_old_/],
    ['after the swap, before the old database is dropped', /^DROP DATABASE "pgx_old_/],
    ['after the old database is dropped, before the record is cleared', /^UPDATE pgx_branch SET swap_nonce = NULL/],
  ];
  // reset --to template of the subagent's branch, and adopt of it into the session's: the same replacement.
  const ops = [
    {
      op: 'reset',
      who: 'a',
      run: (e: Engine) => e.reset({ agent: 'a1' }, 'template'),
      before: 'mine,parent_mig,users',
      after: 'users',
    },
    {
      op: 'adopt',
      who: 's',
      run: (e: Engine) => e.adopt('a1'),
      before: 'parent_mig,users',
      after: 'mine,parent_mig,users',
    },
  ] as const;
  for (const o of ops) {
    for (const [name, before] of windows) {
      it(`${o.op} ${name}`, async () => {
        const t = testProject({ source: await makeSource() });
        const f = await family(t);
        const b = f[o.who];
        const oid = (await dbRow(b.branch))!.oid;
        await crashDuring(t, before, o.run);
        // The name holds this record's database (old or new), never nothing, never a stranger.
        const [rec] = (await registryRows(t.name)).filter((r) => r.name === b.branch);
        const row = await dbRow(b.branch);
        expect(row, 'the branch name holds a database').toBeDefined();
        expect(row!.comment).toBe(`pgx:branch:${rec!.identity_key}:${rec!.nonce}`);
        const swapped = row!.oid !== oid;
        // The branch works (an attach repairs a refused connection), then the operation finishes on a second try.
        const up = await t.run((e) =>
          e.ensure(o.who === 'a' ? { sessionId: 's1', agentId: 'a1' } : { sessionId: 's1' }),
        );
        expect(up.branch).toBe(b.branch);
        expect(await tables(up.conn)).toBe(swapped ? o.after : o.before);
        const r = await t.run(o.run);
        expect(r.name).toBe(b.branch);
        expect(await tables(b.conn)).toBe(o.after);
        await expectNoOrphans(t);
        await expectNoSwapLeftovers(t);
      });
    }
  }

  it("a stranger's database under the replacement's pgx-only name is never dropped", async () => {
    const t = testProject({ source: await makeSource() });
    const { a } = await family(t);
    await crashDuring(t, /^CREATE DATABASE "pgx_new_/, (e) => e.reset({ agent: 'a1' }));
    const [rec] = (await registryRows(t.name)).filter((r) => r.name === a.branch);
    const decoy = `pgx_new_${rec!.swap_nonce!.slice(4)}`;
    await sql(`CREATE DATABASE "${decoy}"`);
    await sql(`COMMENT ON DATABASE "${decoy}" IS 'someone else''s'`);
    try {
      const before = await dbRow(decoy);
      await t.run((e) => e.reset({ agent: 'a1' }));
      expect(await dbRow(decoy)).toEqual(before);
      expect(await tables(a.conn)).toBe('parent_mig,users');
    } finally {
      await sql(`DROP DATABASE IF EXISTS "${decoy}"`);
    }
    await expectNoSwapLeftovers(t);
  });

  it('adopt killed after the swap, before the old database is dropped: a drop of the session clears it too', async () => {
    const t = testProject({ source: await makeSource() });
    const { s } = await family(t);
    await crashDuring(t, /^DROP DATABASE "pgx_old_/, (e) => e.adopt('a1'));
    expect(await tables(s.conn)).toBe('mine,parent_mig,users');
    const [rec] = (await registryRows(t.name)).filter((r) => r.name === s.branch);
    const sw = rec!.swap_nonce!;
    expect(sw).toMatch(/^old:/);
    expect(await dbRow(`pgx_old_${sw.slice(4)}`)).toBeDefined();
    await t.run((e) => e.down({ session: 's1' }, { now: true }));
    expect(await dbRow(`pgx_old_${sw.slice(4)}`)).toBeUndefined();
    expect(await registryRows(t.name)).toEqual([]);
  });
});
