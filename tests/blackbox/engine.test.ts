import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { jsonOf, makeProject, pgInfo, runPgx, runPgxAsync, schemaMd5, sql, templateMd5 } from '../helpers/pgx.js';
import { templateName } from '../../src/engine/template.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function makeSource(): Promise<string> {
  const name = `src_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${name}`);
  await sql(`CREATE TABLE users (id serial primary key, email text not null); INSERT INTO users (email) VALUES ('a@x'), ('b@x');`, [], name);
  return name;
}


const dbRow = async (name: string) =>
  (await sql(`SELECT oid::text, datallowconn, datistemplate, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`, [name]))[0];
const settingsOf = async (name: string): Promise<string[]> =>
  ((await sql(`SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1`, [name]))[0]?.setconfig ?? []).sort();

describe('branch engine', () => {
  it('never alters the source or the template; branches start from the source snapshot', async () => {
    const source = await makeSource();
    const p = makeProject({ source });
    const before = schemaMd5(source);
    const data = async () => (await sql(`SELECT string_agg(email, ',' ORDER BY id) AS s FROM users`, [], source))[0].s;
    const dataBefore = await data();
    const srcRowBefore = await dbRow(source);

    const r = runPgx(['agent', 'exec', '--id', 'mig', '--keep', '--', 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', "ALTER TABLE users ADD COLUMN admin bool; INSERT INTO users (email) VALUES ('c@x'); CREATE TABLE extra(x int);"], p);
    expect(r.status, r.stderr).toBe(0);
    const seen = runPgx(['agent', 'exec', '--id', 'mig', '--', 'psql', '-X', '-Atc', 'select count(*) from users'], p);
    expect(seen.stdout.trim()).toBe('3');

    const tpl = templateName(p.name, source);
    const tplRow = await dbRow(tpl);
    expect(tplRow).toMatchObject({ datallowconn: false, datistemplate: true });
    expect(tplRow.comment).toMatch(/^pgx:template:/);
    expect(await templateMd5(tpl)).toBe(before);

    // After branch work: source schema, data and catalog row identical; template identical too.
    expect(schemaMd5(source)).toBe(before);
    expect(await data()).toBe(dataBefore);
    expect(await dbRow(source)).toEqual(srcRowBefore);
    expect(await dbRow(tpl)).toEqual(tplRow);
    expect(await templateMd5(tpl)).toBe(before);
    expect(await settingsOf(source)).toEqual([]);
    expect(await settingsOf(tpl)).toEqual([]);
  });

  it('refreshes the template while the source has an open connection (dump/restore), leaving the source alone', async () => {
    const source = await makeSource();
    const p = makeProject({ source });
    expect(runPgx(['agent', 'up', '--id', 'first', '--json'], p).status).toBe(0);
    const info = pgInfo();
    const holder = new pg.Client({ host: info.host, port: info.port, user: info.user, password: info.password, database: source });
    await holder.connect();
    try {
      await holder.query('CREATE TABLE orders (id int)');
      const before = schemaMd5(source);
      const r = runPgx(['template', 'refresh', '--json'], p);
      expect(r.status, r.stderr + r.stdout).toBe(0);
      expect(jsonOf(r)).toMatchObject({ template: templateName(p.name, source), source, method: 'dump-restore' });
      const n = runPgx(['agent', 'exec', '--id', 'second', '--', 'psql', '-X', '-Atc', "select count(*) from pg_tables where tablename = 'orders'"], p);
      expect(n.stdout.trim()).toBe('1');
      const old = runPgx(['agent', 'exec', '--id', 'first', '--', 'psql', '-X', '-Atc', "select count(*) from pg_tables where tablename = 'orders'"], p);
      expect(old.stdout.trim()).toBe('0');
      expect(schemaMd5(source)).toBe(before);
      expect((await holder.query('select 1 as one')).rows[0].one).toBe(1); // the developer's session survived
    } finally {
      await holder.end();
    }
  });

  it('a template build killed mid-copy blocks nothing: its stamped leftover is dropped, unstamped ones are left alone', async () => {
    const source = await makeSource();
    const p = makeProject({ source });
    const tpl = templateName(p.name, source);
    const building = (project: string) => `pgx:template-building:${JSON.stringify({ project, started_at: new Date().toISOString() })}`;
    const crashed = `${tpl}_bcrash1`; // what a build killed after its CREATE DATABASE leaves
    const unstamped = `${tpl}_bnostmp`; // not provably pgx's: must survive
    const otherProject = `${tpl}_bother1`; // a building stamp, but another project's
    await sql(`CREATE DATABASE ${crashed}`);
    await sql(`COMMENT ON DATABASE ${crashed} IS '${building(p.name)}'`);
    await sql(`CREATE DATABASE ${unstamped}`);
    await sql(`CREATE DATABASE ${otherProject}`);
    await sql(`COMMENT ON DATABASE ${otherProject} IS '${building('someone-else')}'`);
    try {
      const r = runPgx(['agent', 'up', '--id', 'after-crash', '--json'], p);
      expect(r.status, r.stderr + r.stdout).toBe(0);
      expect((await dbRow(tpl)).comment).toMatch(/^pgx:template:/);
      expect(await dbRow(crashed)).toBeUndefined();
      expect(await dbRow(unstamped)).toMatchObject({ comment: null });
      expect((await dbRow(otherProject)).comment).toContain('someone-else');
      // Nothing else of the build is left beside the template.
      const names = (await sql(`SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1`, [`${tpl}%`])).map((x: any) => x.datname);
      expect(names).toEqual([tpl, otherProject, unstamped].sort());
    } finally {
      for (const n of [crashed, unstamped, otherProject]) await sql(`DROP DATABASE IF EXISTS ${n}`);
    }
  });

  it('refresh is not blocked by what an older crashed refresh left (_n unstamped, _o stamped)', async () => {
    const p = makeProject();
    expect(runPgx(['agent', 'up', '--id', 'r', '--json'], p).status).toBe(0);
    const tpl = templateName(p.name, undefined);
    const stamp = `pgx:template:${JSON.stringify({ project: p.name, source: null, fingerprint: null, refreshed_at: new Date().toISOString(), method: 'empty' })}`;
    await sql(`CREATE DATABASE ${tpl}_n`); // an older pgx killed mid-copy into <name>_n: never stamped
    await sql(`CREATE DATABASE ${tpl}_o`); // an older pgx killed after renaming the old template aside
    await sql(`COMMENT ON DATABASE ${tpl}_o IS '${stamp}'`);
    try {
      const before = (await dbRow(tpl)).oid;
      const r = runPgx(['template', 'refresh', '--json'], p);
      expect(r.status, r.stderr + r.stdout).toBe(0);
      expect((await dbRow(tpl)).oid).not.toBe(before); // swapped in
      expect(await dbRow(`${tpl}_o`)).toBeUndefined();
      expect(await dbRow(`${tpl}_n`)).toMatchObject({ comment: null });
      const names = (await sql(`SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1`, [`${tpl}%`])).map((x: any) => x.datname);
      expect(names).toEqual([tpl, `${tpl}_n`]);
      // A second refresh still works (its own aside name is unique, not a fixed _o).
      expect(runPgx(['template', 'refresh', '--json'], p).status).toBe(0);
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${tpl}_n`);
    }
  });

  it('dump/restore fails fast when psql dies early: no pg_dump left holding the source, no leftover database', async () => {
    const source = await makeSource();
    // Several MB of dump, far more than the pipes buffer: a pg_dump nobody reads from blocks for good.
    await sql(`CREATE TABLE big AS SELECT g AS id, repeat(md5(g::text), 8) AS pad FROM generate_series(1, 30000) g`, [], source);
    const p = makeProject({ source });
    const tpl = templateName(p.name, source);
    const realPsql = spawnSync('sh', ['-c', 'command -v psql'], { encoding: 'utf8' }).stdout.trim();
    const shim = mkdtempSync(join(tmpdir(), 'pgx-shim-'));
    const seen = join(shim, 'comment');
    // A psql that reads none of its input and exits 3, after noting the stamp of the database it was to restore into.
    writeFileSync(
      join(shim, 'psql'),
      `#!/bin/sh
for a; do into=$a; done
'${realPsql}' -X -Atd postgres -c "select shobj_description(oid, 'pg_database') from pg_database where datname = '$into'" > '${seen}' 2>&1
echo 'psql: simulated failure' >&2
exit 3
`,
      { mode: 0o755 },
    );
    p.env.PATH = `${shim}:${process.env.PATH}`;
    const info = pgInfo();
    const holder = new pg.Client({ host: info.host, port: info.port, user: info.user, password: info.password, database: source });
    await holder.connect(); // so the template-copy path is skipped for pg_dump | psql
    try {
      const t0 = Date.now();
      const r = runPgx(['template', 'refresh', '--json'], { ...p, timeout: 30_000 });
      expect(r.signal, 'pgx hung and was killed by the test timeout').toBeNull();
      expect(r.status, r.stderr + r.stdout).toBe(7);
      expect(Date.now() - t0).toBeLessThan(10_000);
      const err = jsonOf(r).error;
      expect(err.code).toBe('TEMPLATE_FAILED');
      expect(err.message).toContain('simulated failure'); // psql's stderr tail is in the error
      // The database being restored into was stamped as a build before any copy began.
      expect(readFileSync(seen, 'utf8')).toMatch(/^pgx:template-building:/);
      // No pg_dump left: neither as a process nor as a session (with its snapshot) on the source.
      const dumpSessions = async () => (await sql(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'pg_dump'`, [source]))[0].n;
      for (let i = 0; i < 20 && (await dumpSessions()) > 0; i++) await sleep(100);
      expect(await dumpSessions()).toBe(0);
      const dumps = readdirSync('/proc').filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'pg_dump' && readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`PGDATABASE=${source}`);
        } catch {
          return false;
        }
      });
      expect(dumps).toEqual([]);
      expect(await sql(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${tpl}%`])).toEqual([]);
    } finally {
      await holder.end();
    }
  });

  it('sets the guards on every branch, as configured, and only there', async () => {
    // Not `--id g`: doctor.test.ts alters exec_testhost_g on the same server, and would alter this test's branch.
    const p = makeProject();
    const r = jsonOf(runPgx(['agent', 'up', '--id', 'guards', '--json'], p));
    expect(await settingsOf(r.branch)).toEqual(['client_connection_check_interval=5000ms', 'idle_in_transaction_session_timeout=900000ms', 'statement_timeout=3600000ms']);
    const q = makeProject({ toml: '[guards]\nstatement_timeout = "30s"\nclient_connection_check_interval = "off"\n' });
    const r2 = jsonOf(runPgx(['agent', 'up', '--id', 'guards', '--json'], q));
    expect(await settingsOf(r2.branch)).toEqual(['idle_in_transaction_session_timeout=900000ms', 'statement_timeout=30000ms']);
    const off = makeProject({ toml: '[guards]\nenabled = false\n' });
    const r3 = jsonOf(runPgx(['agent', 'up', '--id', 'guards', '--json'], off));
    expect(await settingsOf(r3.branch)).toEqual([]);
    expect(await settingsOf(templateName(p.name, undefined))).toEqual([]);
  });

  it('retires with a grace period, then gc drops what is past its deadline (idle measured from last activity)', async () => {
    // Generous margins (a loaded 2-core CI machine starts node 3-5x slower): idle 4 s, busy refreshed at 2.5 s.
    const p = makeProject({ toml: '[agent]\nidle_ttl = "4s"\ngrace = "1s"\n' });
    expect(runPgx(['agent', 'up', '--id', 'idle', '--json'], p).status).toBe(0);
    expect(runPgx(['agent', 'up', '--id', 'busy', '--json'], p).status).toBe(0);
    // A throwaway exec id is retired when its command ends.
    const t = runPgx(['agent', 'exec', '--id', 'tmp', '--json', '--', 'true'], p);
    expect(JSON.parse(t.stderr.trim().split('\n').pop()!)).toMatchObject({ retired: true });
    await sleep(2500);
    expect(runPgx(['agent', 'exec', '--id', 'busy', '--', 'true'], p).status).toBe(0); // activity moves the deadline
    const ls = jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches;
    const by = Object.fromEntries(ls.map((b: any) => [b.id, b]));
    expect(by.tmp).toMatchObject({ state: 'retiring', deadline_kind: 'grace' });
    expect(by.idle).toMatchObject({ state: 'active', deadline_kind: 'idle' });
    expect(new Date(by.busy.deadline).getTime()).toBeGreaterThan(new Date(by.idle.deadline).getTime() + 1000);
    // wait (by the server's clock, as gc judges) until idle's deadline has passed; busy's is ~2.5 s later
    const until = new Date(by.idle.deadline).getTime() + 300;
    while ((await sql('SELECT (now() > $1::timestamptz) AS past', [new Date(until).toISOString()]))[0].past === false) await sleep(100);
    const gc = jsonOf(runPgx(['agent', 'gc', '--json'], p));
    const dropped = gc.dropped.map((d: any) => d.name).sort();
    expect(dropped).toEqual(expect.arrayContaining(['exec_testhost_idle', 'exec_testhost_tmp']));
    expect(dropped).not.toContain('exec_testhost_busy');
    expect((await sql(`SELECT datname FROM pg_database WHERE datname IN ('exec_testhost_idle','exec_testhost_tmp')`))).toEqual([]);
  });

  it('down terminates backends, retires (refusing new connections), and --now drops', async () => {
    const p = makeProject();
    const up = jsonOf(runPgx(['agent', 'up', '--id', 'd', '--json'], p));
    const info = pgInfo();
    const c = new pg.Client({ host: info.host, port: info.port, user: info.user, password: info.password, database: up.branch });
    c.on('error', () => {});
    await c.connect();
    const down = jsonOf(runPgx(['agent', 'down', '--id', 'd', '--json'], p));
    expect(down.branches).toEqual([{ name: up.branch, action: 'retired', backends_terminated: 1, backends_remaining: 0 }]);
    await expect(c.query('select 1')).rejects.toThrow();
    expect((await dbRow(up.branch)).datallowconn).toBe(false);
    // attaching again revives it
    const again = jsonOf(runPgx(['agent', 'up', '--id', 'd', '--json'], p));
    expect(again).toMatchObject({ branch: up.branch, method: 'revive' });
    const now = jsonOf(runPgx(['agent', 'down', '--id', 'd', '--now', '--json'], p));
    expect(now.branches[0]).toMatchObject({ name: up.branch, action: 'dropped' });
    expect(await dbRow(up.branch)).toBeUndefined();
    expect(runPgx(['agent', 'down', '--id', 'd'], p).status).toBe(5);
  });

  it('refuses to drop or alter a database it did not create', async () => {
    const p = makeProject();
    for (const name of ['foreign_app', 'agent_testhost_deadbeef']) {
      await sql(`CREATE DATABASE ${name}`);
      const before = await dbRow(name);
      const r = runPgx(['agent', 'down', '--branch', name, '--now', '--json'], p);
      expect(r.status).toBe(6);
      expect(jsonOf(r).error.code).toBe('NOT_PGX_DATABASE');
      expect(await dbRow(name)).toEqual(before);
      await sql(`DROP DATABASE ${name}`);
    }
  });

  it('20 concurrent ups for distinct ids all succeed; 2 concurrent for one id make one branch', async () => {
    const p = makeProject();
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => runPgxAsync(['agent', 'up', '--id', `c${i}`, '--json'], p)));
    for (const r of runs) expect(r.status, r.stderr + r.stdout).toBe(0);
    const names = new Set(runs.map((r) => JSON.parse(r.stdout).branch));
    expect(names.size).toBe(20);
    const same = await Promise.all([0, 1].map(() => runPgxAsync(['agent', 'up', '--id', 'same', '--json'], p)));
    for (const r of same) expect(r.status, r.stderr).toBe(0);
    const got = same.map((r) => JSON.parse(r.stdout));
    expect(got[0].branch).toBe(got[1].branch);
    expect(got.map((g) => g.method).sort()).toEqual(['attach', 'clone']);
    const ls = jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches;
    expect(ls.length).toBe(21);
  });

  it('a name taken by another identity (or by any database) falls back to the hash name', async () => {
    const a = makeProject();
    const b = makeProject();
    const ra = jsonOf(runPgx(['agent', 'up', '--id', 'shared', '--json'], a));
    const rb = jsonOf(runPgx(['agent', 'up', '--id', 'shared', '--json'], b));
    expect(ra.branch).toBe('exec_testhost_shared');
    expect(rb.branch).toMatch(/^exec_testhost_[0-9a-f]{16}$/);
    // and the same identity keeps mapping to its branch
    expect(jsonOf(runPgx(['agent', 'up', '--id', 'shared', '--json'], b)).branch).toBe(rb.branch);
  });

  it('finishes a creation interrupted between CREATE DATABASE and the stamp', async () => {
    const p = makeProject();
    const first = jsonOf(runPgx(['agent', 'up', '--id', 'crash', '--json'], p));
    // Simulate the crash: the record goes back to 'creating' and the stamp is gone (as if never written).
    await sql(`UPDATE pgx_branch SET state = 'creating' WHERE name = $1`, [first.branch], 'pgx_registry');
    await sql(`COMMENT ON DATABASE ${first.branch} IS NULL`);
    const again = jsonOf(runPgx(['agent', 'up', '--id', 'crash', '--json'], p));
    expect(again.branch).toBe(first.branch);
    expect((await dbRow(first.branch)).comment).toMatch(/^pgx:branch:[0-9a-f]{64}$/);
    expect(jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches[0].state).toBe('active');
  });
});

describe('branch engine under interruption', () => {
  it('attach repairs an active branch left refusing connections by a retire that was cut off', async () => {
    const p = makeProject();
    const up = jsonOf(runPgx(['agent', 'up', '--id', 'cut', '--json'], p));
    await sql(`ALTER DATABASE ${up.branch} WITH ALLOW_CONNECTIONS false`); // as if the retire died right after its ALTER
    const r = runPgx(['agent', 'exec', '--id', 'cut', '--keep', '--', 'psql', '-X', '-Atc', 'select current_database()'], p);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(up.branch);
  });

  it('gc leaves a branch alone while its identity lock is held (being ensured), and drops it afterwards', async () => {
    const { identityKey } = await import('../../src/identity.js');
    const p = makeProject({ toml: '[agent]\nidle_ttl = "1s"\n' });
    const up = jsonOf(runPgx(['agent', 'up', '--id', 'busy', '--json'], p));
    await sleep(1300);
    const info = pgInfo();
    const holder = new pg.Client({ host: info.host, port: info.port, user: info.user, password: info.password, database: 'pgx_registry' });
    await holder.connect();
    const { LOCK } = await import('../../src/registry/locks.js');
    const key = LOCK.identity(identityKey({ project: p.name, host: 'testhost', execId: 'busy' }));
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      const during = jsonOf(runPgx(['agent', 'gc', '--json'], p));
      expect(during.dropped.map((d: any) => d.name)).not.toContain(up.branch);
      expect(await dbRow(up.branch)).toBeDefined();
    } finally {
      await holder.end();
    }
    const after = jsonOf(runPgx(['agent', 'gc', '--json'], p));
    expect(after.dropped.map((d: any) => d.name)).toContain(up.branch);
    expect(await dbRow(up.branch)).toBeUndefined();
  });
});
