// The warm pool, in-process against the real server: fill, claim, concurrent claims, the crash windows of claim and
// fill (the fault gate, tests/helpers/faults.ts), a template refresh retiring members, gc and drain dropping them, and
// the fall-back to a clone. Each test has its own project, so its own template and its own pool.
import { describe, expect, it } from 'vitest';
import { poolTarget, type FillResult } from '../../src/engine/pool.js';
import {
  crashDuring,
  dbRow,
  expectNoOrphans,
  makeSource,
  onOwnServer,
  settingsOf,
  testProject,
  untilPoolUnlocked,
  type TestProject,
} from '../helpers/engine.js';
import { sql } from '../helpers/pgx.js';

const pooled = (n: number, extra = '', source?: string) =>
  testProject({ source, toml: `[agent]\npool = ${n}\n${extra}` });

interface MemberRec {
  name: string;
  state: string;
  generation: string;
}

async function members(t: TestProject): Promise<MemberRec[]> {
  return sql<MemberRec>(
    `SELECT name, state, generation::text AS generation FROM pgx_pool WHERE template = $1 ORDER BY name`,
    [t.template],
    'pgx_registry',
  );
}

/** Databases named as this template's pool members. */
async function memberDbs(t: TestProject): Promise<string[]> {
  const prefix = `${t.template.replace(/^pgx_tpl_/, 'pgx_pool_')}_`;
  return (
    await sql<{ datname: string }>(`SELECT datname FROM pg_database WHERE left(datname, $2) = $1 ORDER BY 1`, [
      prefix,
      prefix.length,
    ])
  ).map((r) => r.datname);
}

/** The pool invariant: every member database has a ready record and the pool stamp of the current build, and back. */
async function expectCleanPool(t: TestProject): Promise<void> {
  const recs = await members(t);
  const dbs = await memberDbs(t);
  expect(recs.map((r) => r.name)).toEqual(dbs);
  const generation = (await dbRow(t.template))!.oid;
  for (const r of recs) {
    expect(r).toMatchObject({ state: 'ready', generation });
    const row = (await dbRow(r.name))!;
    expect(row.datallowconn).toBe(false);
    expect(JSON.parse(row.comment!.replace(/^pgx:pool:/, ''))).toEqual({
      project: t.name,
      template: t.template,
      generation,
      member: r.name,
    });
  }
}

const sub = (agentId: string) => ({ sessionId: 'sess', agentId });

/**
 * A fill that waits its turn. gc is server-wide: another test file's (or a concurrent test's) gc holds each template's
 * pool lock for a moment while it sweeps, and a fill that meets it answers busy (single-flight, by design).
 */
async function fill(t: TestProject): Promise<FillResult> {
  for (let i = 0; ; i++) {
    const r: FillResult = await t.run((e) => e.fillPool());
    if (!r.busy || i === 100) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** gc's pool_dropped, restricted to this project's members: a concurrent test's gc may sweep ours first, and ours theirs. */
const ownDropped = (t: TestProject, dropped: string[]) =>
  dropped.filter((n) => n.startsWith(`${t.template.replace(/^pgx_tpl_/, 'pgx_pool_')}_`));

describe.concurrent('warm pool', () => {
  it('fill clones members that are stamped, guarded, refuse connections and belong to the current template build', async () => {
    const src = await makeSource();
    const t = pooled(3, '', src);
    const r = await fill(t);
    expect(r).toMatchObject({ busy: false, target: 3, ready: 3, bound: 'size' });
    expect(r.created).toHaveLength(3);
    await expectCleanPool(t);
    expect(await settingsOf(r.created[0]!)).toEqual([
      'client_connection_check_interval=5000ms',
      'idle_in_transaction_session_timeout=900000ms',
      'statement_timeout=3600000ms',
    ]);
    const s = await t.run((e) => e.poolStatus());
    expect(s).toMatchObject({
      ready: 3,
      target: 3,
      filling: 0,
      stale: 0,
      filler_running: false,
      generation: (await dbRow(t.template))!.oid,
    });
    // A second fill finds the pool full.
    expect((await fill(t)).created).toEqual([]);
  });

  it('a claim renames a member into the branch: same database, branch stamp, connectable, the source data in it', async () => {
    const src = await makeSource();
    const t = pooled(2, '', src);
    const { created } = await fill(t);
    const oids = await Promise.all(created.map(async (n) => (await dbRow(n))!.oid));
    const up = await t.run((e) => e.ensure(sub('a1')));
    expect(up).toMatchObject({ method: 'claim', fresh: true, branch: `agent_${t.host}_sess_a1` });
    const row = (await dbRow(up.branch))!;
    expect(oids).toContain(row.oid);
    expect(row).toMatchObject({
      datallowconn: true,
      comment: `pgx:branch:${up.record.identity_key}:${up.record.nonce}`,
    });
    expect(up.record).toMatchObject({ state: 'active', method: 'claim' });
    expect(await sql('SELECT email FROM users ORDER BY id', [], up.branch)).toEqual([
      { email: 'a@x' },
      { email: 'b@x' },
    ]);
    expect(await members(t)).toHaveLength(1);
    // Attach afterwards is an attach, and the next agent claims the last member, the one after that clones.
    expect((await t.run((e) => e.ensure(sub('a1')))).method).toBe('attach');
    expect((await t.run((e) => e.ensure(sub('a2')))).method).toBe('claim');
    expect((await t.run((e) => e.ensure(sub('a3')))).method).toBe('clone');
    await expectCleanPool(t);
    await expectNoOrphans(t);
  });

  it('concurrent claims never share a member: 8 agents on a pool of 4 get 4 distinct members and 4 clones', async () => {
    const t = pooled(4);
    const { created } = await fill(t);
    const oids = new Set(await Promise.all(created.map(async (n) => (await dbRow(n))!.oid)));
    const ups = await Promise.all(Array.from({ length: 8 }, (_, i) => t.run((e) => e.ensure(sub(`c${i}`)))));
    const claimed = ups.filter((u) => u.method === 'claim');
    expect(claimed).toHaveLength(4);
    expect(ups.filter((u) => u.method === 'clone')).toHaveLength(4);
    const claimedOids = await Promise.all(claimed.map(async (u) => (await dbRow(u.branch))!.oid));
    expect(new Set(claimedOids).size).toBe(4);
    for (const o of claimedOids) expect(oids.has(o)).toBe(true);
    expect(await memberDbs(t)).toEqual([]);
    await expectNoOrphans(t);
  });

  it('an empty pool (or pool = 0) falls back to a clone', async () => {
    const t = pooled(0);
    expect((await fill(t)).created).toEqual([]);
    expect((await t.run((e) => e.ensure(sub('e')))).method).toBe('clone');
    expect(await t.run((e) => e.poolStatus())).toMatchObject({ ready: 0, target: 0, bound: 'off' });
  });

  it('a template refresh retires the old members (never claimed again); gc drops them; a fill makes new ones', async () => {
    const t = pooled(2);
    const { created } = await fill(t);
    const r = await t.run((e) => e.refreshTemplate());
    expect(r.pool_retired).toBe(2);
    expect(await t.run((e) => e.poolStatus())).toMatchObject({ ready: 0, stale: 2 });
    expect((await t.run((e) => e.ensure(sub('after')))).method).toBe('clone');
    const gc = await t.run((e) => e.gc());
    await untilPoolUnlocked(t.template); // (a concurrent test's gc sweeping ours: this gc passed it by)
    for (const n of ownDropped(t, gc.pool_dropped)) expect(created).toContain(n);
    for (const n of created) expect(await dbRow(n)).toBeUndefined();
    expect(await members(t)).toEqual([]);
    await fill(t);
    await expectCleanPool(t);
    expect(await members(t)).toHaveLength(2);
  });

  it('members made with other guards are not claimed (a branch always gets the configured guards)', async () => {
    const t = pooled(1);
    await fill(t);
    const other = { ...t, config: { ...t.config, guards: { ...t.config.guards, enabled: false } } };
    const e = await (await import('../../src/engine/api.js')).Engine.open(other.config, { quiet: true });
    try {
      expect((await e.ensure(sub('g'))).method).toBe('clone');
      expect(await e.poolStatus()).toMatchObject({ ready: 0, stale: 1 });
    } finally {
      await e.close();
    }
  });

  it('drain drops every member; a database whose stamp is not the pool stamp is forgotten, never dropped or renamed', async () => {
    const t = pooled(2);
    const { created } = await fill(t);
    // Someone re-stamps a member by hand: claim refuses it (and retires its record), drain/gc never drop it.
    await sql(`COMMENT ON DATABASE ${created[0]} IS 'mine now'`);
    const secondOid = (await dbRow(created[1]!))!.oid;
    const up = await t.run((e) => e.ensure(sub('d')));
    expect(up.method).toBe('claim');
    expect((await dbRow(up.branch))!.oid).toBe(secondOid);
    expect(await dbRow(created[0]!)).toMatchObject({ comment: 'mine now' });
    const d = await t.run((e) => e.drainPool());
    expect(d.dropped).toEqual([]);
    expect(await dbRow(created[0]!)).toMatchObject({ comment: 'mine now' });
    expect(await members(t)).toEqual([]);
    await sql(`DROP DATABASE ${created[0]}`);
    await fill(t);
    const d2 = await t.run((e) => e.drainPool());
    expect(d2.dropped).toHaveLength(2);
    expect(await memberDbs(t)).toEqual([]);
  });

  it('a stamp copied from another member does not vouch for a database: never claimed, never dropped', async () => {
    const t = pooled(2);
    const { created } = await fill(t);
    const [a, b] = created as [string, string];
    const bStamp = (await dbRow(b))!.comment!;
    await sql(`COMMENT ON DATABASE ${a} IS '${bStamp.replace(/'/g, "''")}'`); // a's stamp now names b
    const up = await t.run((e) => e.ensure(sub('copied')));
    expect(up.method).toBe('claim');
    expect((await dbRow(up.branch))!.oid).not.toBe((await dbRow(a))?.oid);
    expect(await dbRow(a)).toMatchObject({ comment: bStamp });
    expect((await t.run((e) => e.drainPool())).dropped).not.toContain(a);
    expect(await dbRow(a)).toMatchObject({ comment: bStamp });
    await sql(`DROP DATABASE ${a}`);
  });

  it('a foreign database appears under the branch name just before the claim: rolled back (member kept), ensure refuses', async () => {
    const t = pooled(1);
    await fill(t);
    const ready = (await members(t)).map((m) => m.name);
    const name = `agent_${t.host}_sess_taken`;
    let planted = false;
    const { Faults } = await import('../helpers/faults.js');
    const faults = new Faults();
    const e = await t.open({
      opened: faults.opened.bind(faults),
      before: async (text: string) => {
        if (/^BEGIN/.test(text) && !planted) {
          planted = true;
          await sql(`CREATE DATABASE ${name}`); // after the record claimed the name, before the member is renamed to it
        }
      },
    });
    try {
      await expect(e.ensure(sub('taken'))).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE' });
    } finally {
      await e.close();
    }
    expect(planted).toBe(true);
    expect(await dbRow(name)).toMatchObject({ comment: null });
    expect((await members(t)).map((m) => m.name)).toEqual(ready); // not consumed
    await sql(`DROP DATABASE ${name}`);
  });

  it('the background fill waits for a lull: no member is recorded within settleMs of the newest branch', async () => {
    const t = pooled(1);
    const burst = await t.run((e) => e.ensure(sub('burst'))); // a clone (the pool is empty): the burst's last branch
    const r = await t.run((e) => e.fillPool(undefined, { settleMs: 1500 }));
    expect(r.created).toHaveLength(1);
    const [gap] = await sql<{ ms: number }>(
      `SELECT (extract(epoch FROM p.created_at - b.created_at) * 1000)::float8 AS ms FROM pgx_pool p, pgx_branch b WHERE p.name = $1 AND b.name = $2`,
      [r.created[0], burst.branch],
      'pgx_registry',
    );
    expect(gap!.ms).toBeGreaterThanOrEqual(1500);
  });

  it('the filler is single-flight: a second fill while one runs does nothing', async () => {
    const t = pooled(1);
    await t.run((e) => e.ensure(sub('warm'))); // the template exists
    const { withAdmin } = await import('../helpers/pgx.js');
    const key = (await import('../../src/registry/locks.js')).LOCK.pool(t.template);
    await withAdmin(async (c) => {
      await c.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      expect(await t.run((e) => e.poolStatus())).toMatchObject({ filler_running: true });
      expect(await t.run((e) => e.fillPool())).toMatchObject({ busy: true, created: [] });
    }, 'pgx_registry');
    expect((await fill(t)).created).toHaveLength(1);
  });
});

describe.concurrent('warm pool: crash windows', () => {
  // Claim is one transaction: cut anywhere, the member is still a member and the branch is made on the next try.
  const claimWindows: [string, RegExp][] = [
    ['after the member is row-locked, before RENAME', /RENAME TO "agent_/],
    ['after RENAME, before the branch stamp', /^COMMENT ON DATABASE "agent_/],
    ['after the stamp, before allowing connections', /ALLOW_CONNECTIONS true/],
    ['before the member record is deleted', /^DELETE FROM pgx_pool/],
    ['before the branch record goes active', /^\s*UPDATE pgx_branch SET state = 'active'/],
    ['before COMMIT', /^COMMIT$/],
  ];
  for (const [name, before] of claimWindows) {
    it(`claim cut ${name}: the member stays a member, the next ensure claims it`, async () => {
      const t = pooled(1);
      const [member] = (await fill(t)).created;
      const oid = (await dbRow(member!))!.oid;
      await crashDuring(t, before, (e) => e.ensure(sub('k')));
      expect(await dbRow(member!)).toMatchObject({ oid, datallowconn: false });
      await expectCleanPool(t);
      const up = await t.run((e) => e.ensure(sub('k')));
      expect(up.method).toBe('claim');
      expect((await dbRow(up.branch))!.oid).toBe(oid);
      await expectNoOrphans(t);
      expect(await memberDbs(t)).toEqual([]);
    });
  }

  const fillWindows: [string, RegExp][] = [
    ['after the member is recorded, before CREATE DATABASE', /^CREATE DATABASE "pgx_pool_/],
    ['between CREATE DATABASE and the pool stamp', /^COMMENT ON DATABASE "pgx_pool_/],
    ['between the stamp and the guards', /^ALTER DATABASE "pgx_pool_.*" SET /],
    ['before the member is marked ready', /^UPDATE pgx_pool SET state = 'ready'/],
  ];
  for (const [name, before] of fillWindows) {
    it(`fill cut ${name}: nothing is claimable from it, and the next fill (or gc) drops it`, async () => {
      const t = pooled(1);
      await t.run((e) => e.ensure({ execId: 'warm' })); // exec branches: the subagent peak stays 0, the target 1
      await crashDuring(t, before, (e) => e.fillPool());
      // The dead filler's member, read now: a concurrent test's server-wide gc may take it any moment ('dropping'),
      // or have swept it already (nothing left).
      const left = await members(t);
      expect(left.length).toBeLessThanOrEqual(1);
      for (const m of left) expect(['filling', 'dropping']).toContain(m.state);
      const leftover = left[0]?.name;
      expect((await t.run((e) => e.ensure({ execId: 'x' }))).method).toBe('clone');
      const r = await fill(t);
      expect(r.created).toHaveLength(1);
      if (before.source.startsWith('^CREATE')) expect(r.swept).toEqual([]);
      else expect(r.swept.filter((n) => n !== leftover)).toEqual([]); // (or a concurrent test's gc swept it first)
      if (leftover) expect(await dbRow(leftover)).toBeUndefined();
      await expectCleanPool(t);
      await expectNoOrphans(t);
    });
  }

  it('fill cut after a member is recorded: gc also sweeps it when no filler runs', async () => {
    const t = pooled(1);
    await t.run((e) => e.ensure(sub('warm')));
    await crashDuring(t, /^COMMENT ON DATABASE "pgx_pool_/, (e) => e.fillPool());
    const [leftover] = await memberDbs(t);
    expect((await dbRow(leftover!))!.comment).toBeNull();
    const gc = await t.run((e) => e.gc());
    await untilPoolUnlocked(t.template); // (one still at it: this gc passed it by)
    // This gc sweeps it, unless a concurrent test's gc got there first: either way it is gone, and nothing else of ours.
    expect(ownDropped(t, gc.pool_dropped).filter((n) => n !== leftover)).toEqual([]);
    expect(await memberDbs(t)).toEqual([]);
    expect(await members(t)).toEqual([]);
  });
});

describe('pool size', () => {
  const cfg = { size: 4, max: 16, maxBytes: 1024 ** 3 };
  it('is max(size, recent peak), capped by pool_max and the disk budget counted from the template size', () => {
    expect(poolTarget(cfg, 0, 22e6)).toEqual({ target: 4, bound: 'size' });
    expect(poolTarget(cfg, 9, 22e6)).toEqual({ target: 9, bound: 'peak' });
    expect(poolTarget(cfg, 40, 22e6)).toEqual({ target: 16, bound: 'pool_max' });
    expect(poolTarget(cfg, 9, 300 * 1024 ** 2)).toEqual({ target: 3, bound: 'pool_max_bytes' });
    expect(poolTarget({ ...cfg, size: 0 }, 9, 1)).toEqual({ target: 0, bound: 'off' });
  });

  it('remembers the recent peak of concurrent subagents (recorded by the filler)', async () => {
    const t = pooled(1, 'pool_max = 5');
    await Promise.all(['p1', 'p2', 'p3'].map((a) => t.run((e) => e.ensure(sub(a)))));
    const r = await fill(t);
    expect(r).toMatchObject({ target: 3, bound: 'peak' });
    await t.run((e) => e.retire({ session: 'sess' }));
    expect(await t.run((e) => e.poolStatus())).toMatchObject({ peak: 3, target: 3 });
  });
});

describe('a registry made before the pool existed', () => {
  // On a server of its own: it drops the pool's tables, as an older pgx's registry lacks them.
  it('the first claim creates the pool tables and the ensure clones', async () => {
    await onOwnServer('[agent]\npool = 1\n', async (t, query) => {
      await t.run((e) => e.ensure({ execId: 'first' }));
      await query('DROP TABLE IF EXISTS pgx_pool, pgx_pool_demand', 'pgx_registry');
      expect((await t.run((e) => e.ensure(sub('old')))).method).toBe('clone');
      expect(await query(`SELECT to_regclass('pgx_pool') IS NOT NULL AS ok`, 'pgx_registry')).toEqual([{ ok: true }]);
      expect((await fill(t)).created).toHaveLength(1);
    });
  });
});
