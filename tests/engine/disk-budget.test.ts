// The disk budget (engine/disk-budget.ts) against the real server, on the real file system of its data directory:
// with [disk] reserve set just under the free space, a copy of a ~50 MB database is refused (a template clone, a
// fork by dump and restore, a reset, a template refresh), the refusal names the figures and the fix, and nothing is
// left: no record, no half-made database. The warm pool's fill stops before twice the reserve and leaves nothing
// either. A small file system of its own (tmpfs, root only) is disk-budget-tmpfs.test.ts.
import { statfsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/api.js';
import { DiskBudgetError, withRoomFor } from '../../src/engine/disk-budget.js';
import type { EngineContext } from '../../src/engine/context.js';
import type { RegistryDb } from '../../src/registry/connection.js';
import { connect } from '../../src/server/db.js';
import { parseUrl } from '../../src/server/conn-params.js';
import type { Config } from '../../src/project/config.js';
import { dbRow, expectNoOrphans, registryRows, testProject, type TestProject } from '../helpers/engine.js';
import { pgInfo, sql } from '../helpers/pgx.js';

const MB = 1024 * 1024;

async function dataDir(): Promise<string> {
  return (await sql<{ data_directory: string }>('SHOW data_directory'))[0]!.data_directory;
}

/** The free space the budget works with: statfs's, less shared_buffers (pages the server may still write out). */
async function headroom(): Promise<number> {
  const s = statfsSync(await dataDir());
  const [{ b }] = await sql<{ b: string }>(`SELECT pg_size_bytes(current_setting('shared_buffers'))::text AS b`);
  return s.bavail * s.bsize - Number(b);
}

/** A source of about 50 MB (a table of 160 000 rows of 300 bytes). */
async function bigSource(): Promise<string> {
  const name = `big_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${name}`);
  await sql(`CREATE TABLE t AS SELECT g, repeat(md5(g::text), 9) AS pad FROM generate_series(1, 160000) g`, [], name);
  return name;
}

/** The project's config with the reserve `margin` under the free space (read now): only a copy can cross it. */
async function tight(t: TestProject, margin: number): Promise<Config> {
  return { ...t.config, disk: { reserve: { bytes: (await headroom()) - margin } } };
}

/** What a refusal must say: the figures, consistent with the reserve it was given, and the three fixes. */
function expectFigures(err: DiskBudgetError, reserve: number, atLeast: number): void {
  expect(err.code).toBe('DISK_RESERVE');
  expect(err.exitCode).toBe(7);
  const f = err.figures;
  expect(f.reserve).toBe(reserve);
  expect(f.needed).toBeGreaterThanOrEqual(atLeast);
  expect(f.owed).toBeGreaterThan(0);
  expect(f.free - f.owed - f.in_flight).toBeGreaterThanOrEqual(f.floor); // without the copy it fits: the copy crosses it
  expect(f.free - f.owed - f.in_flight - f.needed).toBeLessThan(f.floor);
  expect(err.message).toMatch(
    /^Not enough disk for .+: it needs ~\d+ MB on the file system of \/.+, which has [\d.]+ GB free of [\d.]+ GB \(less up to \d+ MB the server may still write from its buffers\); pgx keeps [\d.]+ GB free there \(\[disk\] reserve = "[\d.]+GB"\)/,
  );
  expect(err.hint).toMatch(/pgx agent gc/);
  expect(err.hint).toMatch(/pgx agent pool drain/);
  expect(err.hint).toMatch(/lower \[disk\] reserve in \/.+\.pgx\.toml/);
  expect(err.toJSON()).toMatchObject({
    code: 'DISK_RESERVE',
    exit_code: 7,
    disk: { free: f.free, needed: f.needed, reserve: reserve },
  });
}

/**
 * Runs `fn` on an engine whose reserve sits 20 MB under the free space measured just before, and returns its refusal.
 * The disk is shared with the other helpers' work on this machine (measured: 1 GB freed in 5 s), so an attempt the
 * disk's growth let through is undone (`undo`) and made again with a new measurement, at most 5 times.
 */
async function refusedUnder(
  t: TestProject,
  fn: (e: Engine) => Promise<unknown>,
  undo: (e: Engine) => Promise<unknown> = async () => {},
): Promise<DiskBudgetError & { reserveGiven: number }> {
  for (let attempt = 1; ; attempt++) {
    const cfg = await tight(t, 20 * MB);
    const e = await open(cfg);
    try {
      const out = await fn(e).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (out instanceof DiskBudgetError) return Object.assign(out, { reserveGiven: cfg.disk.reserve.bytes! });
      if (out !== undefined || attempt === 5)
        throw out ?? new Error('never refused in 5 attempts: the disk kept growing faster than the copy needs');
      console.warn(`[disk-budget] attempt ${attempt} not refused: the shared disk grew meanwhile; again`);
      await undo(e);
    } finally {
      await e.close();
    }
  }
}

async function open(config: Config): Promise<Engine> {
  return Engine.open(config, { quiet: true });
}

describe("disk budget on the data directory's file system", () => {
  it('a template clone of ~50 MB is refused with the reserve 20 MB under the free space; made with room; nothing left', async () => {
    const t = testProject({ source: await bigSource() });
    await t.run((e) => e.ensure({ execId: 'first' })); // the template (a copy too), with the default reserve
    const size = Number((await sql<{ s: string }>(`SELECT pg_database_size($1)::text AS s`, [t.template]))[0]!.s);
    expect(size).toBeGreaterThan(40 * MB);

    const err = await refusedUnder(
      t,
      (e) => e.ensure({ execId: 'second' }),
      (e) => e.down({ id: 'second' }, { now: true }),
    );
    expectFigures(err, err.reserveGiven, size);
    expect(err.figures.what).toMatch(/^branch "exec_.+_second" \(a clone of the template "pgx_tpl_/);
    // nothing of the refused branch: no record, no pgx_new_<nonce>
    expect((await registryRows(t.name)).filter((r) => r.host === t.host).map((r) => r.name)).toEqual([
      `exec_${t.host}_first`,
    ]);
    expect(
      await sql(
        `SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_new\\_%' AND shobj_description(oid, 'pg_database') LIKE $1`,
        [`%${t.host}%second%`],
      ),
    ).toEqual([]);
    await expectNoOrphans(t);

    // The control: the same copy with room (reserve 2 GB under the free space) is made.
    const roomy = await open(await tight(t, 2048 * MB));
    try {
      expect((await roomy.ensure({ execId: 'second' })).method).toBe('clone');
    } finally {
      await roomy.close();
    }
    await expectNoOrphans(t);
  }, 120_000);

  it('a fork of a changed, connected session branch (dump and restore) is refused, not replaced by the template; a reset and a template refresh too', async () => {
    const t = testProject({ source: await bigSource() });
    const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
    // The parent migrates and keeps its connection open: a fork would be pg_dump | psql.
    const parent = new pg.Client({
      host: s.conn.host,
      port: s.conn.port,
      user: s.conn.user,
      password: s.conn.password,
      database: s.conn.database,
    });
    parent.on('error', () => {});
    await parent.connect();
    try {
      await parent.query('ALTER TABLE t ADD COLUMN note text; CREATE TABLE migrated (id int)');
      // Each refusal on an engine of its own, its reserve measured right before: the disk is shared with other tests,
      // and one of them freeing 100 MB between the measurement and the copy would let the copy through.
      const err = await refusedUnder(
        t,
        (e) => e.ensure({ sessionId: 's1', agentId: 'a1' }),
        (e) => e.down({ branch: `agent_${t.host}_s1_a1` }, { now: true }),
      );
      expectFigures(err, err.reserveGiven, 40 * MB);
      // a fork copies its parent once, into the frozen copy its forks share (engine/freeze.ts): that copy is the one refused
      expect(err.figures.what).toMatch(new RegExp(`^the frozen copy "pgx_frz_[a-z0-9]+" of "${s.branch}"$`));
      // the parent's session and its branch are untouched
      expect((await parent.query(`SELECT count(*)::int AS n FROM migrated`)).rows[0].n).toBe(0);

      // A reset of the session's branch to the template: also a copy, also refused; the branch is unchanged.
      let before = '';
      const r = await refusedUnder(t, async (e) => {
        before = (await dbRow(s.branch))!.oid;
        return e.reset({ session: 's1' }, 'template');
      });
      expect(r.figures.what).toBe(`the reset of "${s.branch}" (a clone of the template "${t.template}")`);
      expect((await dbRow(s.branch))!.oid).toBe(before);

      // A template refresh copies the source: refused before its build exists.
      const f = await refusedUnder(t, (e) => e.refreshTemplate());
      expect(f.figures.what).toMatch(
        new RegExp(
          `^the template's build "${t.template}_b[a-z0-9]{6}" \\((a copy|a dump and restore) of "${t.config.source}"\\)$`,
        ),
      );
    } finally {
      await parent.end();
    }
    const rows = (await registryRows(t.name)).filter((r) => r.host === t.host);
    expect(rows.map((r) => r.name)).toEqual([s.branch]);
    expect(rows[0]).toMatchObject({ state: 'active' });
    await expectNoOrphans(t); // also: no template build left recorded or named
  }, 120_000);

  it("the pool's fill stops before twice the reserve: no member made, none recorded, bound disk_reserve", async () => {
    const t = testProject({ source: await bigSource(), toml: '[agent]\npool = 3\n' });
    await t.run((e) => e.ensure({ execId: 'first' })); // the template
    // the pool keeps 2 × reserve free: with 2 × reserve just under the free space, not one member fits (a fill the
    // shared disk's growth let through is drained and made again, at most 5 times: see refusedUnder)
    const under = async () =>
      open({ ...t.config, disk: { reserve: { bytes: Math.floor(((await headroom()) - 20 * MB) / 2) } } });
    let e = await under();
    try {
      let r = await e.fillPool();
      for (let attempt = 1; ; attempt++) {
        for (let i = 0; r.busy && i < 100; i++)
          r = await new Promise((res) => setTimeout(res, 100)).then(() => e.fillPool());
        if (r.created.length === 0 || attempt === 5) break;
        await e.drainPool();
        await e.close();
        e = await under();
        r = await e.fillPool();
      }
      expect(r).toMatchObject({ busy: false, created: [], ready: 0, target: 3, bound: 'disk_reserve' });
      expect(r.disk_note).toMatch(
        /^Not enough disk for warm-pool member "pgx_pool_[^"]+" \(a clone of the template "pgx_tpl_[^"]+"\): it needs ~\d+ MB .+, and the warm pool leaves twice that \(/,
      );
      // a branch asked for still gets the room the pool left
      expect((await e.ensure({ execId: 'second' })).method).toBe('clone');
    } finally {
      await e.close();
    }
    expect(await sql(`SELECT name FROM pgx_pool WHERE template = $1`, [t.template], 'pgx_registry')).toEqual([]);
    const prefix = `${t.template.replace(/^pgx_tpl_/, 'pgx_pool_')}_`;
    expect(await sql(`SELECT datname FROM pg_database WHERE left(datname, $2) = $1`, [prefix, prefix.length])).toEqual(
      [],
    );
    await expectNoOrphans(t);
  }, 120_000);

  it("a server whose data directory pgx can't see (the role may not read data_directory) is not budgeted: the copy runs", async () => {
    const t = testProject({ source: await bigSource() });
    const role = `r_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE ROLE ${role} LOGIN CREATEDB PASSWORD 'pw_${role}'`);
    await sql(`GRANT CONNECT ON DATABASE ${t.config.source} TO ${role}`);
    const admin = { ...parseUrl(pgInfo().url), user: role, password: `pw_${role}` };
    const db = await connect(admin);
    try {
      // a reserve of 90% would refuse every copy on a file system pgx can see
      const e = {
        config: { ...t.config, disk: { reserve: { percent: 90 } } },
        admin,
        registry: db as RegistryDb,
      } as EngineContext;
      expect(
        await withRoomFor(e, { from: t.config.source!, way: 'wal-log', what: 'a test copy' }, async () => 'made'),
      ).toBe('made');
    } finally {
      await db.close();
      await sql(`REVOKE CONNECT ON DATABASE ${t.config.source} FROM ${role}`);
      await sql(`DROP ROLE ${role}`);
    }
  });
});
