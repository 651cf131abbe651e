// The branch engine in-process against the real server: snapshot isolation, template refresh, guards, retire/gc by
// deadline, down, refusals, concurrency, name fallback. (The CLI wiring of the same commands: tests/blackbox/engine.test.ts.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { LOCK } from '../../src/registry/locks.js';
import { dbRow, makeSource, settingsOf, testProject, untilIdentityUnlocked } from '../helpers/engine.js';
import { pgInfo, schemaMd5, sql, templateMd5 } from '../helpers/pgx.js';
import { pollUntil, untilServerTimePast } from '../helpers/poll.js';
import { needs, smallCopyMethod } from '../helpers/client-programs.js';

function client(database: string): pg.Client {
  const i = pgInfo();
  const c = new pg.Client({ host: i.host, port: i.port, user: i.user, password: i.password, database });
  c.on('error', () => {});
  return c;
}

async function onBranch<T>(database: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = client(database);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

// Concurrent: every test has its own project (and host label), so none sees another's branches.
describe.concurrent('branch engine (in-process)', () => {
  it('never alters the source or the template; branches start from the source snapshot', async () => {
    const source = await makeSource();
    const t = testProject({ source });
    const before = schemaMd5(source);
    const srcRowBefore = await dbRow(source);
    const r = await t.run((e) => e.ensure({ execId: 'mig' }));
    await onBranch(r.branch, (c) =>
      c.query(
        "ALTER TABLE users ADD COLUMN admin bool; INSERT INTO users (email) VALUES ('c@x'); CREATE TABLE extra(x int);",
      ),
    );
    expect(
      await onBranch(r.branch, async (c) => (await c.query('select count(*)::int AS n from users')).rows[0].n),
    ).toBe(3);
    const tplRow = await dbRow(t.template);
    expect(tplRow).toMatchObject({ datallowconn: false, datistemplate: true });
    expect(tplRow!.comment).toMatch(/^pgx:template:/);
    expect(schemaMd5(source)).toBe(before);
    expect((await sql(`SELECT string_agg(email, ',' ORDER BY id) AS s FROM users`, [], source))[0].s).toBe('a@x,b@x');
    expect(await dbRow(source)).toEqual(srcRowBefore);
    expect(await templateMd5(t.template)).toBe(before);
    expect(await settingsOf(source)).toEqual([]);
    expect(await settingsOf(t.template)).toEqual([]);
  });

  it('refreshes the template while the source has an open connection (dump/restore), leaving the source alone', async () => {
    const source = await makeSource();
    const t = testProject({ source });
    const first = await t.run((e) => e.ensure({ execId: 'first' }));
    const holder = client(source);
    await holder.connect();
    try {
      await holder.query('CREATE TABLE orders (id int)');
      const before = schemaMd5(source);
      const r = await t.run((e) => e.refreshTemplate());
      const method = smallCopyMethod();
      expect(r).toMatchObject({ template: t.template, source, method });
      const second = await t.run((e) => e.ensure({ execId: 'second' }));
      const orders = (db: string) =>
        onBranch(
          db,
          async (c) => (await c.query("select count(*)::int AS n from pg_tables where tablename = 'orders'")).rows[0].n,
        );
      expect(await orders(second.branch)).toBe(1);
      expect(await orders(first.branch)).toBe(0);
      expect(schemaMd5(source)).toBe(before);
      expect((await holder.query('select 1 as one')).rows[0].one).toBe(1);
    } finally {
      await holder.end();
    }
  });

  it('sets the guards on every branch, as configured, and only there', async () => {
    const t = testProject();
    const r = await t.run((e) => e.ensure({ execId: 'guards' }));
    expect(await settingsOf(r.branch)).toEqual([
      'client_connection_check_interval=5000ms',
      'idle_in_transaction_session_timeout=900000ms',
      'statement_timeout=3600000ms',
    ]);
    const q = testProject({ toml: '[guards]\nstatement_timeout = "30s"\nclient_connection_check_interval = "off"\n' });
    expect(await settingsOf((await q.run((e) => e.ensure({ execId: 'guards' }))).branch)).toEqual([
      'idle_in_transaction_session_timeout=900000ms',
      'statement_timeout=30000ms',
    ]);
    const off = testProject({ toml: '[guards]\nenabled = false\n' });
    expect(await settingsOf((await off.run((e) => e.ensure({ execId: 'guards' }))).branch)).toEqual([]);
    expect(await settingsOf(t.template)).toEqual([]);
  });

  it('retires with a grace period, then gc drops what is past its deadline (idle measured from last activity)', async () => {
    const t = testProject({ toml: '[agent]\nidle_ttl = "2s"\ngrace = "1s"\n' });
    const e = await t.open();
    try {
      const idle = await e.ensure({ execId: 'idle' });
      const busy = await e.ensure({ execId: 'busy' });
      const tmp = await e.ensure({ execId: 'tmp' });
      expect(await e.retire({ id: 'tmp' })).toMatchObject([{ name: tmp.branch, action: 'retired' }]);
      await untilServerTimePast(new Date(new Date(idle.record.deadline).getTime() - 1000));
      await e.ensure({ execId: 'busy' }); // activity moves the deadline
      const by = Object.fromEntries((await e.list()).map((b) => [b.id, b]));
      expect(by.tmp).toMatchObject({ state: 'retiring', deadline_kind: 'grace' });
      expect(by.idle).toMatchObject({ state: 'active', deadline_kind: 'idle' });
      expect(new Date(by.busy!.deadline).getTime()).toBeGreaterThan(new Date(by.idle!.deadline).getTime() + 500);
      await untilServerTimePast(by.idle!.deadline);
      await untilServerTimePast(by.tmp!.deadline);
      // (A concurrent test's gc may drop them first: what counts is that they are gone and busy is not.)
      expect((await e.gc()).dropped.map((d) => d.name)).not.toContain(busy.branch);
      // A concurrent test's gc that holds one of them (SKIP LOCKED: this gc passes it by) drops it a moment later.
      const gone = async (name: string) => pollUntil(async () => (await dbRow(name)) === undefined, 15_000, 100);
      expect(await gone(idle.branch), idle.branch).toBe(true);
      expect(await gone(tmp.branch), tmp.branch).toBe(true);
      expect(await dbRow(busy.branch)).toBeDefined();
    } finally {
      await e.close();
    }
  });

  it('down terminates backends, retires (refusing new connections), revives, and --now drops', async () => {
    const t = testProject();
    const e = await t.open();
    try {
      const up = await e.ensure({ execId: 'd' });
      const c = client(up.branch);
      await c.connect();
      expect(await e.down({ id: 'd' })).toEqual([
        { name: up.branch, action: 'retired', role: up.record.role, backends_terminated: 1, backends_remaining: 0 },
      ]);
      await expect(c.query('select 1')).rejects.toThrow();
      expect((await dbRow(up.branch))!.datallowconn).toBe(false);
      expect(await e.ensure({ execId: 'd' })).toMatchObject({ branch: up.branch, method: 'revive' });
      expect((await e.down({ id: 'd' }, { now: true }))[0]).toMatchObject({ name: up.branch, action: 'dropped' });
      expect(await dbRow(up.branch)).toBeUndefined();
      await expect(e.down({ id: 'd' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await e.close();
    }
  });

  it('refuses to drop or alter a database it did not create, even one named like a branch', async () => {
    const t = testProject();
    for (const name of [`foreign_${t.host}`, `agent_${t.host}_deadbeef`]) {
      await sql(`CREATE DATABASE ${name}`);
      const before = await dbRow(name);
      await expect(t.run((e) => e.down({ branch: name }, { now: true }))).rejects.toMatchObject({
        code: 'NOT_PGX_DATABASE',
      });
      expect(await dbRow(name)).toEqual(before);
      await sql(`DROP DATABASE ${name}`);
    }
  });

  it('10 concurrent ensures for distinct ids all succeed; 2 concurrent for one id make one branch', async () => {
    const t = testProject();
    const runs = await Promise.all(Array.from({ length: 10 }, (_, i) => t.run((e) => e.ensure({ execId: `c${i}` }))));
    expect(new Set(runs.map((r) => r.branch)).size).toBe(10);
    const same = await Promise.all([0, 1].map(() => t.run((e) => e.ensure({ execId: 'same' }))));
    expect(same[0]!.branch).toBe(same[1]!.branch);
    expect(same.map((g) => g.method).sort()).toEqual(['attach', 'clone']);
    expect(await t.run((e) => e.list())).toHaveLength(11);
  });

  it('a name taken by another identity (or by any database) falls back to the hash name', async () => {
    const a = testProject();
    const b = testProject();
    // Same host label for both projects: their readable names collide.
    const bSameHost = { ...b, config: { ...b.config, host: a.host } };
    const ra = await a.run((e) => e.ensure({ execId: 'shared' }));
    const { Engine } = await import('../../src/engine/api.js');
    const eb = await Engine.open(bSameHost.config, { quiet: true });
    try {
      const rb = await eb.ensure({ execId: 'shared' });
      expect(ra.branch).toBe(`exec_${a.host}_shared`);
      expect(rb.branch).toMatch(new RegExp(`^exec_${a.host}_[0-9a-f]{16}$`));
      expect((await eb.ensure({ execId: 'shared' })).branch).toBe(rb.branch);
    } finally {
      await eb.close();
    }
  });

  it('attach repairs an active branch left refusing connections by a retire that was cut off', async () => {
    const t = testProject();
    const up = await t.run((e) => e.ensure({ execId: 'cut' }));
    await sql(`ALTER DATABASE ${up.branch} WITH ALLOW_CONNECTIONS false`);
    expect(await t.run((e) => e.ensure({ execId: 'cut' }))).toMatchObject({ branch: up.branch, method: 'attach' });
    expect(await onBranch(up.branch, async (c) => (await c.query('select current_database() AS d')).rows[0].d)).toBe(
      up.branch,
    );
  });

  it('gc leaves a branch alone while its identity lock is held (being ensured), and drops it afterwards', async () => {
    const t = testProject({ toml: '[agent]\nidle_ttl = "1s"\n' });
    const up = await t.run((e) => e.ensure({ execId: 'busy' }));
    const holder = client('pgx_registry');
    await holder.connect();
    try {
      // Locked before the deadline passes, so no gc (this test's or a concurrent one's) can take it first.
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [LOCK.identity(up.record.identity_key)]);
      await untilServerTimePast(up.record.deadline);
      expect((await t.run((e) => e.gc())).dropped.map((d) => d.name)).not.toContain(up.branch);
      expect(await dbRow(up.branch)).toBeDefined();
    } finally {
      await holder.end();
    }
    await untilIdentityUnlocked(up.record.identity_key); // the holder's session ends a moment after end() returns
    await t.run((e) => e.gc()); // (a concurrent test's gc may have dropped it first: either way it is gone)
    await untilIdentityUnlocked(up.record.identity_key); // (or be dropping it right now: this gc then passed it by)
    expect(await dbRow(up.branch)).toBeUndefined();
  });
});

// Not concurrent with anything: it puts a failing psql first on PATH for the whole process.
describe('dump/restore failure (in-process)', () => {
  it('dump/restore fails fast when psql dies early: no pg_dump left holding the source, no leftover database', async (ctx) => {
    needs(ctx, ['pg_dump', 'psql'], 'it makes the pg_dump | psql copy fail midway');
    const source = await makeSource();
    // Several MB of dump, far more than the pipes buffer: a pg_dump nobody reads from blocks for good.
    await sql(
      `CREATE TABLE big AS SELECT g AS id, repeat(md5(g::text), 8) AS pad FROM generate_series(1, 30000) g`,
      [],
      source,
    );
    const t = testProject({ source });
    const realPsql = spawnSync('sh', ['-c', 'command -v psql'], { encoding: 'utf8' }).stdout.trim();
    const shim = mkdtempSync(join(tmpdir(), 'pgx-shim-'));
    const seen = join(shim, 'comment');
    // A psql that reads none of its input and exits 3, after noting the stamp of the database it was to restore into.
    writeFileSync(
      join(shim, 'psql'),
      `#!/bin/sh
for a; do into=$a; done
PGDATABASE=postgres '${realPsql}' -X -Atc "select shobj_description(oid, 'pg_database') from pg_database where datname = '$into'" > '${seen}' 2>&1
echo 'psql: simulated failure' >&2
exit 3
`,
      { mode: 0o755 },
    );
    const holder = client(source);
    await holder.connect(); // so the template-copy path is skipped for pg_dump | psql
    const path = process.env.PATH;
    process.env.PATH = `${shim}:${path}`;
    try {
      await expect(t.run((e) => e.refreshTemplate())).rejects.toMatchObject({
        code: 'TEMPLATE_FAILED',
        message: expect.stringContaining('simulated failure'),
      });
      expect(readFileSync(seen, 'utf8')).toMatch(/^pgx:template-building:/); // stamped before any copy began
      const dumpSessions = async () =>
        (
          await sql(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'pg_dump'`,
            [source],
          )
        )[0].n;
      expect(await pollUntil(async () => (await dumpSessions()) === 0, 5000)).toBe(true);
      const dumps = readdirSync('/proc').filter((pid) => {
        try {
          return (
            /^\d+$/.test(pid) &&
            readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'pg_dump' &&
            readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`PGDATABASE=${source}`)
          );
        } catch {
          return false;
        }
      });
      expect(dumps).toEqual([]);
      expect(await sql(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${t.template}%`])).toEqual([]);
    } finally {
      process.env.PATH = path;
      await holder.end();
    }
  });
});
