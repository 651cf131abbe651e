// Forks in-process against the real server: a subagent's branch is a copy of its session's branch as it is at
// SubagentStart (engine/fork.ts). Unchanged → the template's claim/clone; changed and idle → a TEMPLATE copy; changed
// with the parent connected → pg_dump | psql, the parent's session untouched; anything wrong → the template and a
// note. Lineage in the registry, `--from <id>`, one level deep, and a registry made before lineage migrating.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ConnParams } from '../../src/server/conn-params.js';
import { expectNoOrphans, makeSource, onOwnServer, testProject } from '../helpers/engine.js';
import { smallCopyMethod } from '../helpers/client-programs.js';
import { PAGILA_LIKE, PAGILA_LIKE_ROWS } from '../helpers/pagila-like.js';
import { sql } from '../helpers/pgx.js';

function clientOf(c: ConnParams): pg.Client {
  const cl = new pg.Client({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database });
  cl.on('error', () => {});
  return cl;
}

/** Runs statements as the branch's own credentials, on a connection of its own, closed after. */
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
    await asBranch<{ t: string }>(
      c,
      `SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE schemaname = 'public'`,
    )
  )[0]!.t;

describe.concurrent('fork from the session', () => {
  it('an unchanged session branch: the subagent gets the template path (unchanged), lineage recorded', async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(a.fork).toEqual({ parent: s.branch, method: 'unchanged' });
    expect(a.record.parent).toBe(s.branch);
    expect(a.record.forked_at).not.toBeNull();
    expect(await tables(a.conn)).toBe('users');
    const [ls] = (await t.run((e) => e.list())).filter((b) => b.name === a.branch);
    expect(ls).toMatchObject({ parent: s.branch });
    await expectNoOrphans(t);
  });

  it('a changed session branch (DDL + data, connection closed): a copy; the subagent sees the migration, owns its copy, the parent is untouched', async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    await asBranch(
      s.conn,
      `CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1), (2), (3); GRANT SELECT ON parent_mig TO PUBLIC`,
    );
    // Immediately after the parent's session ended: its statistics flush must not be missed.
    const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(a.fork?.parent).toBe(s.branch);
    // A TEMPLATE copy, or (the parent's backend still exiting) a dump: never "unchanged".
    expect(a.fork?.method).toBe('frozen');
    expect((await asBranch<{ n: number }>(a.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(6);
    const owners = await asBranch<{ o: string }>(
      a.conn,
      `SELECT string_agg(DISTINCT tableowner, ',') AS o FROM pg_tables WHERE schemaname = 'public'`,
    );
    expect(owners[0]!.o).toBe(a.record.role);
    const acl = await asBranch<{ acl: string }>(
      a.conn,
      `SELECT relacl::text AS acl FROM pg_class WHERE relname = 'parent_mig'`,
    );
    expect(acl[0]!.acl).toContain('=r/'); // the GRANT to PUBLIC came along
    await asBranch(a.conn, 'INSERT INTO parent_mig VALUES (100); DROP TABLE users');
    expect((await asBranch<{ n: number }>(s.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(6);
    expect(await tables(s.conn)).toBe('parent_mig,users');
    await expectNoOrphans(t);
  });

  it('a parent holding a connection (an open psql): the fork neither waits for it nor disturbs it (pg_dump | psql)', async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    const parent = clientOf(s.conn);
    await parent.connect();
    try {
      await parent.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (7)');
      const pid = (await parent.query('SELECT pg_backend_pid() AS p')).rows[0].p;
      // An open transaction of the parent's, uncommitted: not in the fork.
      await parent.query('BEGIN; INSERT INTO parent_mig VALUES (1000)');
      const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      expect(a.fork).toMatchObject({
        parent: s.branch,
        method: 'frozen',
        frozen: { reused: false, made: smallCopyMethod() },
      });
      // That it does not first wait for a TEMPLATE copy to fail (55006) is a matter of time: measured by bench/fork.mjs,
      // not asserted here (a timed assertion fails on a loaded machine: 5.6 s seen in a CI rehearsal).
      expect((await asBranch<{ n: number }>(a.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(7);
      const owners = await asBranch<{ o: string }>(
        a.conn,
        `SELECT string_agg(DISTINCT tableowner, ',') AS o FROM pg_tables WHERE schemaname = 'public'`,
      );
      expect(owners[0]!.o).toBe(a.record.role);
      // The parent's session is the same one, its transaction still open and committable.
      await parent.query('COMMIT');
      expect((await parent.query('SELECT pg_backend_pid() AS p, sum(x)::int AS n FROM parent_mig')).rows[0]).toEqual({
        p: pid,
        n: 1007,
      });
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });

  it('each subagent sees the parent and only its own changes', async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    await asBranch(s.conn, 'CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
    const subs = await Promise.all(
      ['a1', 'a2', 'a3'].map((agentId) => t.run((e) => e.ensure({ sessionId: 's1', agentId }))),
    );
    await Promise.all(subs.map((a, i) => asBranch(a.conn, `INSERT INTO parent_mig VALUES (${10 ** (i + 1)})`)));
    const sums = await Promise.all(
      subs.map(async (a) => (await asBranch<{ n: number }>(a.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n),
    );
    expect(sums).toEqual([11, 101, 1001]);
    expect((await asBranch<{ n: number }>(s.conn, 'SELECT sum(x)::int AS n FROM parent_mig'))[0]!.n).toBe(1);
    await expectNoOrphans(t);
  });

  it('a read-only visit counts as a change (conservative): the fork copies', async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    await asBranch(s.conn, 'SELECT 1');
    const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(a.fork?.method).toBe('frozen');
  });

  it('no session branch, or a foreign one: the template, and a note; never an error', async () => {
    const t = testProject({ source: await makeSource() });
    const a = await t.run((e) => e.ensure({ sessionId: 'nobranch', agentId: 'a1' }));
    expect(a.fork).toEqual({ parent: null, method: 'template', note: "the session's branch does not exist" });
    expect(a.record.parent).toBeNull();
    const s = await t.run((e) => e.ensure({ sessionId: 's2' }));
    const stamp = (
      await sql(`SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = $1`, [s.branch])
    )[0].c;
    await sql(`COMMENT ON DATABASE "${s.branch}" IS 'someone else''s'`);
    try {
      const b = await t.run((e) => e.ensure({ sessionId: 's2', agentId: 'b1' }));
      expect(b.fork).toMatchObject({ parent: null, method: 'template' });
      expect(b.fork?.note).toMatch(/is not a database pgx made/);
      expect(await tables(b.conn)).toBe('users');
    } finally {
      await sql(`COMMENT ON DATABASE "${s.branch}" IS '${stamp}'`);
    }
    await expectNoOrphans(t);
  });

  it('fork = "template": subagents get the template as before', async () => {
    const t = testProject({ source: await makeSource(), toml: '[agent]\nfork = "template"\n' });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    await asBranch(s.conn, 'CREATE TABLE parent_mig (x int)');
    const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(a.fork).toEqual({ parent: null, method: 'template' });
    expect(await tables(a.conn)).toBe('users');
  });

  it('--from <id>: an exec branch forks another; from a fork is refused (one level deep)', async () => {
    const t = testProject({ source: await makeSource() });
    const base = await t.run((e) => e.ensure({ execId: 'base' }));
    await asBranch(base.conn, 'CREATE TABLE base_t (x int)');
    const f = await t.run((e) => e.ensure({ execId: 'f1' }, { from: { kind: 'branch', ref: 'base' } }));
    expect(f.fork?.parent).toBe(base.branch);
    expect(f.fork?.method).toBe('frozen');
    expect(await tables(f.conn)).toBe('base_t,users');
    await expect(
      t.run((e) => e.ensure({ execId: 'f2' }, { from: { kind: 'branch', ref: 'f1' } })),
    ).rejects.toMatchObject({ code: 'USAGE' });
    await expect(
      t.run((e) => e.ensure({ execId: 'f3' }, { from: { kind: 'branch', ref: 'nosuch' } })),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expectNoOrphans(t);
  });
});

// On a server of its own: it changes the registry's table, which every other file's engines share.
// Not concurrent with the rest: it forces the copy method for this process (PGX_COPY_METHOD, read at each copy).
describe('a connected session branch forked by the Node copy (the way with no pg_dump, or for a big branch)', () => {
  it("the subagent's branch is its role's: it can CREATE in public, and a partitioned table's serial came along", async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    // The session's objects are its own role's (branch roles): public, the tables, a partitioned table's sequence.
    await asBranch(s.conn, `${PAGILA_LIKE}\n${PAGILA_LIKE_ROWS}`);
    const parent = clientOf(s.conn);
    await parent.connect();
    const saved = process.env.PGX_COPY_METHOD;
    process.env.PGX_COPY_METHOD = 'node';
    try {
      const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      expect(a.fork).toMatchObject({ parent: s.branch, method: 'frozen', frozen: { made: 'node-copy' } });
      // Before: "permission denied for schema public" (the owner's own entry left out of public's explicit ACL), and
      // "sequence must have same owner as table it is linked to" (OWNED BY before the partitioned table's owner).
      await asBranch(
        a.conn,
        'CREATE TABLE mine (x int); INSERT INTO payment (customer_id, amount, payment_date) ' +
          "VALUES (1, 1.50, '2026-12-02')",
      );
      const [o] = await asBranch<{ pub: string; seq: string; n: number }>(
        a.conn,
        `SELECT (SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'public') AS pub,
                (SELECT relowner::regrole::text FROM pg_class WHERE relname = 'payment_payment_id_seq') AS seq,
                (SELECT count(*)::int FROM pg_class WHERE relnamespace = 'public'::regnamespace
                   AND relowner <> to_regrole(current_user)) AS n`,
      );
      expect(o).toEqual({ pub: a.record.role, seq: a.record.role, n: 0 });
      expect(await tables(s.conn)).not.toContain('mine');
    } finally {
      if (saved === undefined) delete process.env.PGX_COPY_METHOD;
      else process.env.PGX_COPY_METHOD = saved;
      await parent.end();
    }
    await expectNoOrphans(t);
  });
});

describe('a registry made before lineage', () => {
  it('gets the columns on first use', async () => {
    await onOwnServer('', async (t, query) => {
      await t.run((e) => e.ensure({ execId: 'old' }));
      await query(
        `ALTER TABLE pgx_branch DROP COLUMN parent, DROP COLUMN forked_at, DROP COLUMN base_mark, DROP COLUMN base_template, DROP COLUMN swap_nonce`,
        'pgx_registry',
      );
      const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
      const a = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      expect(a.record.parent).toBe(s.branch);
      expect(await query(`SELECT parent FROM pgx_branch WHERE name = '${a.branch}'`, 'pgx_registry')).toEqual([
        { parent: s.branch },
      ]);
    });
  });
});
