// Frozen copies (engine/freeze.ts, decision 400), in-process against the real server: the subagents of one session
// share one copy of its branch per state of it. Whatever the parent committed before a subagent's start is in that
// subagent's branch: the parent committing between two starts, holding an idle connection, holding an open
// transaction that commits later, a session that came and went. The session's branch and the source are never
// altered. A maker killed at every step leaves nothing a later fork or gc does not clean up, and a fork waiting for it
// goes on. Small databases: the 1 GB figures are bench/fork.mjs's.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/api.js';
import { LOCK } from '../../src/registry/locks.js';
import type { ConnParams } from '../../src/server/conn-params.js';
import {
  crashDuring,
  dbRow,
  expectNoOrphans,
  makeSource,
  testProject,
  untilFreezeLocked,
  untilFreezeUnlocked,
  type TestProject,
} from '../helpers/engine.js';
import { Faults } from '../helpers/faults.js';
import { schemaMd5, sql, withAdmin } from '../helpers/pgx.js';

function clientOf(c: ConnParams): pg.Client {
  const cl = new pg.Client({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database });
  cl.on('error', () => {});
  return cl;
}

async function once<R = Record<string, unknown>>(c: ConnParams, text: string): Promise<R[]> {
  const cl = clientOf(c);
  await cl.connect();
  try {
    return (await cl.query(text)).rows as R[];
  } finally {
    await cl.end();
  }
}

const sumOf = async (c: ConnParams) =>
  (await once<{ n: number }>(c, 'SELECT coalesce(sum(x), 0)::int AS n FROM parent_mig'))[0]!.n;

/** The frozen copies of a parent, newest first, as the registry has them. */
const copiesOf = (parent: string) =>
  sql<{ name: string; state: string; signature: string | null }>(
    `SELECT name, state, signature FROM pgx_frozen WHERE parent = $1 ORDER BY ticket DESC`,
    [parent],
    'pgx_registry',
  );

/** Every pgx_frz_ database of these records is there, stamped, refusing connections; nothing else of theirs. */
async function expectFrozenClean(parent: string): Promise<void> {
  for (const c of await copiesOf(parent)) {
    expect(c.state).toBe('ready');
    const row = await dbRow(c.name);
    expect(row?.comment).toMatch(/^pgx:frozen:/);
    expect(row?.datallowconn).toBe(false);
  }
}

/** A session whose branch the parent migrated and holds an idle connection to. */
async function connectedParent(t: TestProject) {
  const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
  const parent = clientOf(s.conn);
  await parent.connect();
  await parent.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
  return { s, parent };
}

describe.concurrent('frozen copies: one per state of the session branch', () => {
  it('five subagents at once, the parent connected: one copy, five clones, each with the migration; the parent untouched', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      const pid = (await parent.query('SELECT pg_backend_pid() AS p')).rows[0].p;
      const before = schemaMd5(s.branch);
      const subs = await Promise.all(
        ['a1', 'a2', 'a3', 'a4', 'a5'].map((agentId) => t.run((e) => e.ensure({ sessionId: 's1', agentId }))),
      );
      expect(subs.map((a) => a.fork?.method)).toEqual(Array(5).fill('frozen'));
      expect(subs.filter((a) => a.fork?.frozen?.reused === false)).toHaveLength(1);
      expect(new Set(subs.map((a) => a.fork?.frozen?.copy)).size).toBe(1);
      for (const a of subs) expect(await sumOf(a.conn)).toBe(1);
      expect((await parent.query('SELECT pg_backend_pid() AS p, sum(x)::int AS n FROM parent_mig')).rows[0]).toEqual({
        p: pid,
        n: 1,
      });
      expect(schemaMd5(s.branch)).toBe(before);
      expect((await dbRow(s.branch))!.datallowconn).toBe(true);
      await expectFrozenClean(s.branch);
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });

  it('the parent commits between two starts (an idle connection held): the second sees it; with nothing in between, the copy is reused', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      expect(a1.fork?.frozen).toMatchObject({ reused: false });
      await parent.query('INSERT INTO parent_mig VALUES (10)');
      const a2 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a2' }));
      expect(a2.fork?.frozen).toMatchObject({ reused: false });
      expect(a2.fork?.frozen?.copy).not.toBe(a1.fork?.frozen?.copy);
      // Nothing ran on the parent since: the same copy, proven unchanged.
      const a3 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a3' }));
      expect(a3.fork?.frozen).toEqual({ copy: a2.fork!.frozen!.copy, reused: true, why: 'unchanged' });
      expect([await sumOf(a1.conn), await sumOf(a2.conn), await sumOf(a3.conn)]).toEqual([1, 11, 11]);
      // A read-only statement moves the parent's state_change: no proof, a new copy (conservative).
      await parent.query('SELECT 1');
      const a4 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a4' }));
      expect(a4.fork?.frozen?.reused).toBe(false);
      // The superseded copies stay while the subagents' branches cloned from them live: each is its branch's fork
      // point, which a merge reads (decision 500). Nothing else is left.
      expect((await copiesOf(s.branch)).map((c) => c.name).sort()).toEqual(
        [a1.fork!.frozen!.copy, a2.fork!.frozen!.copy, a4.fork!.frozen!.copy].sort(),
      );
      await expectFrozenClean(s.branch);
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });

  it('a session that came and went (connect, commit, disconnect) makes a new copy', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      await once(s.conn, 'INSERT INTO parent_mig VALUES (5)');
      const a2 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a2' }));
      expect(a2.fork?.frozen?.reused).toBe(false);
      expect([await sumOf(a1.conn), await sumOf(a2.conn)]).toEqual([1, 6]);
    } finally {
      await parent.end();
    }
  });

  it('the parent holds an open transaction: not in the fork; it still commits, and the next subagent has it', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      await parent.query('BEGIN; INSERT INTO parent_mig VALUES (1000)');
      const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      expect(await sumOf(a1.conn)).toBe(1);
      // Idle in its transaction, nothing run since the copy: the copy is the parent's committed state still.
      const a2 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a2' }));
      expect(a2.fork?.frozen).toMatchObject({ reused: true, why: 'unchanged' });
      await parent.query('COMMIT');
      const a3 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a3' }));
      expect(a3.fork?.frozen?.reused).toBe(false);
      expect([await sumOf(a2.conn), await sumOf(a3.conn), await sumOf(s.conn)]).toEqual([1, 1001, 1001]);
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });

  it('the parent unconnected: the copy is a TEMPLATE copy, reused while nobody connects', async () => {
    const t = testProject({ source: await makeSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    await once(s.conn, 'CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (3)');
    const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
    expect(a1.fork?.frozen).toMatchObject({ reused: false, made: 'template-copy' });
    const a2 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a2' }));
    expect(a2.fork?.frozen).toMatchObject({ reused: true, why: 'unchanged', copy: a1.fork!.frozen!.copy });
    expect([await sumOf(a1.conn), await sumOf(a2.conn)]).toEqual([3, 3]);
  });

  it('agent reset of a forked subagent: the session branch as it is NOW, not the frozen copy', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      await once(a1.conn, 'INSERT INTO parent_mig VALUES (500)');
      await parent.query('INSERT INTO parent_mig VALUES (20)');
      await t.run((e) => e.reset({ agent: 'a1' }));
      expect(await sumOf(a1.conn)).toBe(21);
      expect(await sumOf(s.conn)).toBe(21);
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });

  it('gc drops the copies once the session branch is gone; ls --all and the doctor reads list them before', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    let copy: string;
    try {
      const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      copy = a1.fork!.frozen!.copy;
      const listed = await t.run((e) => e.frozenCopies({ all: true }));
      expect(listed.find((f) => f.name === copy)).toMatchObject({ parent: s.branch, state: 'ready', project: t.name });
      // While the session is active gc keeps the newest copy (a later subagent may reuse it).
      await t.run((e) => e.gc());
      expect(await dbRow(copy)).toBeDefined();
    } finally {
      await parent.end();
    }
    await t.run((e) => e.down({ session: 's1' }, { now: true }));
    const r = await t.run((e) => e.gc());
    expect(r.frozen_dropped).toContain(copy);
    expect(await dbRow(copy)).toBeUndefined();
    expect(await copiesOf(s.branch)).toEqual([]);
  });

  it('a fork that can not get the copy within its time says so (and is not given the template); the next one clones it', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      await withAdmin(async (holder) => {
        await holder.query('SELECT pg_advisory_lock($1::bigint)', [LOCK.freeze(s.branch)]);
        const e = await Engine.open(t.config, { quiet: true, statementTimeoutMs: 3000 });
        try {
          const err = await e.ensure({ sessionId: 's1', agentId: 'a1' }).then(
            () => undefined,
            (x: unknown) => x,
          );
          expect(err).toMatchObject({ code: 'BRANCH_FAILED' });
          // the fork miss's own words (engine/fork-miss.ts, decision 485): no template in its place
          expect(String((err as Error).message)).toMatch(/its copy was still being made after \d+ s/);
          expect(String((err as Error).message)).toMatch(/does not give it the template instead/);
        } finally {
          await e.close();
        }
      }, 'pgx_registry');
      const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      expect(a1.fork?.method).toBe('frozen');
      expect(await sumOf(a1.conn)).toBe(1);
    } finally {
      await parent.end();
    }
    await expectNoOrphans(t);
  });
});

describe.concurrent('frozen copies: crash windows of making one', () => {
  const windows: [string, RegExp][] = [
    ['after it is recorded, before its database', /^CREATE DATABASE "pgx_frz_/],
    ['between its database and its stamp', /^COMMENT ON DATABASE "pgx_frz_/],
    ['between the stamp and refusing connections', /^ALTER DATABASE "pgx_frz_\w+" WITH ALLOW_CONNECTIONS false/],
    ['before it is recorded ready', /^UPDATE pgx_frozen SET state = 'ready'/],
  ];
  for (const [name, before] of windows) {
    it(name, async () => {
      const t = testProject({ source: await makeSource() });
      const { s, parent } = await connectedParent(t);
      try {
        await crashDuring(t, before, (e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
        const left = await copiesOf(s.branch);
        expect(left.map((c) => c.state)).toEqual(['making']);
        // The next fork cleans the dead maker's leftover (it holds the lock the maker lost) and makes its own.
        const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
        expect(a1.fork?.frozen?.reused).toBe(false);
        expect(await sumOf(a1.conn)).toBe(1);
        expect(await dbRow(left[0]!.name)).toBeUndefined();
        expect((await copiesOf(s.branch)).map((c) => c.name)).toEqual([a1.fork!.frozen!.copy]);
        await expectFrozenClean(s.branch);
      } finally {
        await parent.end();
      }
      await expectNoOrphans(t);
    });
  }

  it('gc alone cleans a dead maker’s leftover', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      await crashDuring(t, /^COMMENT ON DATABASE "pgx_frz_/, (e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
      const [left] = await copiesOf(s.branch);
      // gc is server-wide and only try-locks the freeze lock (decision 144): another file's gc (a background pool
      // filler) holding it passes the leftover by, and the next gc drops it. Whichever gc took it, it goes.
      const dropped: string[] = [];
      for (let i = 0; i < 3 && !dropped.includes(left!.name) && (await dbRow(left!.name)); i++) {
        await untilFreezeUnlocked(s.branch);
        dropped.push(...(await t.run((e) => e.gc())).frozen_dropped);
      }
      expect(await dbRow(left!.name)).toBeUndefined();
    } finally {
      await parent.end();
    }
  });

  it('a fork waiting for a maker that dies goes on, and makes the copy itself', async () => {
    const t = testProject({ source: await makeSource() });
    const { s, parent } = await connectedParent(t);
    try {
      const faults = new Faults().crash(/^COMMENT ON DATABASE "pgx_frz_/);
      const dying = await t.open(faults);
      const first = dying.ensure({ sessionId: 's1', agentId: 'a1' }).then(
        () => undefined,
        (x: unknown) => x,
      );
      // a2 arrives once a1 holds the freeze lock, making the copy (or has died making it already): started at once,
      // a loaded machine let a2 take the lock first, make the copy, and a1 reuse it without ever reaching the fault.
      await Promise.race([first, untilFreezeLocked(s.branch)]);
      const second = t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a2' }));
      expect(await first).toBeDefined();
      const a2 = await second;
      expect(a2.fork?.method).toBe('frozen');
      expect(await sumOf(a2.conn)).toBe(1);
      await faults.settled();
    } finally {
      await parent.end();
    }
  });
});
