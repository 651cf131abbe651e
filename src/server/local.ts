// The embedded default server: a PostgreSQL cluster pgx runs itself when no [server] url is configured.
// Loopback only, scram password auth, a free port recorded in a state file, logs kept beside the data.
// As root, initdb refuses to run: the cluster then runs as an unprivileged user (postgres, else nobody) and, since
// that user cannot traverse root's 0700 home, its data lives under /var/lib/pgx/ (a path derived from PGX_HOME).
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { PgxError } from '../lib/errors.js';
import { findBinaries, type Binaries } from './binaries.js';
import { urlWithoutPassword, type ConnParams } from './conn-params.js';
import { withFileLock, writeFileAtomic } from '../lib/fsutil.js';
import { killLeftoverInit, runInitGroup, type RunAs } from './init-process.js';

export const LOCAL_SUPERUSER = 'pgx';

export type { RunAs };

export interface LocalState {
  version: number; // state file format
  major: number;
  pg_version: string;
  bindir: string;
  binaries: Binaries['source'];
  data_dir: string;
  log_file: string;
  port: number;
  user: string;
  password: string;
  /** false while initdb runs (absent in state files of older pgx: a finished cluster). */
  initialized?: boolean;
}

export interface LocalStatus {
  url: string | null; // without password
  port: number | null;
  version: string | null;
  data_dir: string | null;
  log_file: string | null;
  running: boolean;
  pid: number | null;
  initialized: boolean;
  binaries: string | null;
  state_file: string;
}

function lookupUser(name: string): RunAs | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name) return { name, uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // no /etc/passwd (not Linux-like)
  }
  return undefined;
}

/** Root must hand the cluster to an unprivileged user; anyone else runs it as themselves. */
export function clusterUser(): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const u = lookupUser(process.env.PGX_CLUSTER_USER ?? 'postgres') ?? lookupUser('nobody');
  if (!u)
    throw new PgxError(
      'LOCAL_SERVER',
      'Running as root, and no unprivileged user (postgres or nobody) to run PostgreSQL as.',
      'Create a "postgres" user, or run pgx as a normal user.',
    );
  return u;
}

export function stateFile(home: string): string {
  return join(home, 'local', 'state.json');
}

function dataRoot(home: string, major: number, runAs: RunAs | undefined): string {
  if (!runAs) return join(home, 'local', String(major));
  const tag = createHash('sha256').update(home).digest('hex').slice(0, 10);
  return join('/var/lib/pgx', `local-${tag}`, String(major));
}

export function readState(home: string): LocalState | undefined {
  try {
    return JSON.parse(readFileSync(stateFile(home), 'utf8')) as LocalState;
  } catch {
    return undefined;
  }
}

/** The postmaster's pid when the cluster is running (postmaster.pid present and the process alive). */
export function runningPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!pid) return null;
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

function run(runAs: RunAs | undefined, cmd: string, args: string[], what: string, logFile?: string): void {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    uid: runAs?.uid,
    gid: runAs?.gid,
    cwd: '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' },
    timeout: 120_000,
  });
  if (r.status !== 0) {
    const detail = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new PgxError(
      'LOCAL_SERVER',
      `${what} failed: ${detail || r.error?.message || `exit ${r.status}`}`,
      logFile
        ? `See ${logFile}; \`pgx local status\` shows the paths.`
        : 'Check that the PostgreSQL binaries run on this machine (`pgx local status`).',
    );
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

function mkdirOwned(dir: string, runAs: RunAs | undefined): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (runAs) {
    // Every ancestor up to /var/lib/pgx must be traversable by the cluster user.
    let d = dir;
    while (d.startsWith('/var/lib/pgx')) {
      chmodSync(d, d === dir ? 0o700 : 0o755);
      if (d === '/var/lib/pgx') break;
      d = dirname(d);
    }
    chownSync(dir, runAs.uid, runAs.gid);
  }
}

export interface ClusterSpec {
  bindir: string;
  dataDir: string;
  logFile: string;
  port: number;
  user: string;
  password: string;
  runAs?: RunAs;
  /** Extra postgresql.conf lines (the test harness turns fsync off; the user's server keeps defaults). */
  extraConf?: string[];
}

/**
 * initdb with scram auth for a superuser whose password never appears in argv (it goes through a 0600 pwfile). initdb
 * runs in a process group of its own (runInitGroup), so that no part of it outlives a killed pgx for long.
 */
export async function initCluster(spec: ClusterSpec): Promise<void> {
  const root = dirname(spec.dataDir);
  mkdirOwned(root, spec.runAs);
  const pwfile = join(root, `.pwfile-${process.pid}`);
  writeFileSync(pwfile, spec.password + '\n', { mode: 0o600 });
  if (spec.runAs) chownSync(pwfile, spec.runAs.uid, spec.runAs.gid);
  try {
    const args = [
      '-D',
      spec.dataDir,
      '-U',
      spec.user,
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ];
    await runInitGroup(spec.runAs, join(spec.bindir, 'initdb'), args, spec.dataDir, 'initdb', {
      onKilled: () => rmSync(pwfile, { force: true }),
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
  const conf = [
    '',
    '# written by pgx',
    "listen_addresses = '127.0.0.1'",
    "unix_socket_directories = ''", // TCP only: no dependency on /var/run/postgresql existing
    'max_connections = 200', // 20 parallel agents, each with a few clients, plus pgx's own
    ...(spec.extraConf ?? []),
    '',
  ];
  appendFileSync(join(spec.dataDir, 'postgresql.conf'), conf.join('\n'));
}

export function startCluster(spec: Pick<ClusterSpec, 'bindir' | 'dataDir' | 'logFile' | 'port' | 'runAs'>): void {
  if (spec.runAs && !existsSync(spec.logFile)) {
    writeFileSync(spec.logFile, '', { mode: 0o600 });
    chownSync(spec.logFile, spec.runAs.uid, spec.runAs.gid);
  }
  run(
    spec.runAs,
    join(spec.bindir, 'pg_ctl'),
    ['-D', spec.dataDir, '-l', spec.logFile, '-o', `-p ${spec.port}`, '-w', '-t', '60', 'start'],
    'pg_ctl start',
    spec.logFile,
  );
}

export function stopCluster(
  spec: Pick<ClusterSpec, 'bindir' | 'dataDir' | 'runAs'>,
  mode: 'fast' | 'immediate' = 'fast',
): boolean {
  if (!runningPid(spec.dataDir)) return false;
  run(
    spec.runAs,
    join(spec.bindir, 'pg_ctl'),
    ['-D', spec.dataDir, '-m', mode, '-w', '-t', '60', 'stop'],
    'pg_ctl stop',
  );
  return true;
}

function progress(msg: string, quiet: boolean): void {
  if (!quiet) process.stderr.write(`pgx: ${msg}\n`);
}

/**
 * The data directory's path is deterministic (dataRoot), so a lost or unreadable state.json does NOT mean there is no
 * cluster there: it may be complete, hold the user's databases, even be running. Only a directory that initdb never
 * finished (no PG_VERSION) and that no live postmaster uses is removed; anything else makes pgx refuse, because
 * re-initialising would delete the data and start a second postmaster beside the first.
 */
async function clearHalfMadeInit(dataDir: string, home: string): Promise<void> {
  await clearInitLeftovers(dataDir);
  if (!existsSync(dataDir)) return;
  const pid = runningPid(dataDir);
  if (!existsSync(join(dataDir, 'PG_VERSION')) && pid === null) {
    rmSync(dataDir, { recursive: true, force: true }); // an init that died half-way: nothing in it to keep
    return;
  }
  throw new PgxError(
    'LOCAL_SERVER',
    `A PostgreSQL cluster already exists in ${dataDir}${pid !== null ? ` (running, postmaster pid ${pid})` : ''}, ` +
      `but pgx's state file ${stateFile(home)} is missing or unreadable, so its port and password are unknown.`,
    `Restore ${stateFile(home)} (port, password) from a backup, or stop that cluster and move ${dataDir} ` +
      `aside to start over with a new one; pgx will not delete it.`,
  );
}

/**
 * What a pgx killed during initdb left: the initdb process tree (still writing into the directory) and the password
 * file it was reading (the superuser's password, 0600).
 */
async function clearInitLeftovers(dataDir: string): Promise<void> {
  await killLeftoverInit(dataDir);
  const root = dirname(dataDir);
  try {
    for (const f of readdirSync(root)) if (f.startsWith('.pwfile-')) rmSync(join(root, f), { force: true });
  } catch {
    // no such directory yet
  }
}

/** `pgx local up`: idempotent, safe under concurrent callers (a file lock), returns admin connection params. */
export async function ensureLocalServer(home: string, opts: { quiet?: boolean } = {}): Promise<ConnParams> {
  const fast = readState(home);
  if (fast && runningPid(fast.data_dir)) return paramsOf(fast);
  return withFileLock(join(home, 'local', 'up.lock'), async () => {
    let state = readState(home);
    if (state && runningPid(state.data_dir)) return paramsOf(state);
    const runAs = clusterUser();
    if (!state || state.initialized === false || !existsSync(join(state.data_dir, 'PG_VERSION'))) {
      // Our own init that never finished (state written first, initialized:false; e.g. a hook killed mid-initdb):
      // redo it. initdb writes PG_VERSION early, so only this flag tells a finished cluster from a half-made one.
      if (state?.initialized === false) {
        await clearInitLeftovers(state.data_dir); // else rm fails (ENOTEMPTY) under an initdb that is still writing
        if (existsSync(state.data_dir) && runningPid(state.data_dir) === null)
          rmSync(state.data_dir, { recursive: true, force: true });
      }
      const bins = findBinaries();
      const root = dataRoot(home, bins.major, runAs);
      state = {
        version: 1,
        major: bins.major,
        pg_version: bins.version,
        bindir: bins.bindir,
        binaries: bins.source,
        data_dir: join(root, 'data'),
        log_file: join(root, 'postgres.log'),
        port: await freePort(),
        user: LOCAL_SUPERUSER,
        password: randomBytes(18).toString('base64url'),
      };
      await clearHalfMadeInit(state.data_dir, home);
      progress(
        `initialising the local PostgreSQL ${bins.version} (${bins.source}) in ${state.data_dir} …`,
        !!opts.quiet,
      );
      // State first: if this process dies during initdb, the next one knows the cluster (and its password) is ours.
      writeFileAtomic(stateFile(home), JSON.stringify({ ...state, initialized: false }, null, 2) + '\n', 0o600);
      await initCluster({ ...state, bindir: state.bindir, dataDir: state.data_dir, logFile: state.log_file, runAs });
      state.initialized = true;
    }
    if (!(await portFree(state.port))) state.port = await freePort();
    writeFileAtomic(stateFile(home), JSON.stringify(state, null, 2) + '\n', 0o600);
    progress(`starting the local PostgreSQL on 127.0.0.1:${state.port} …`, !!opts.quiet);
    startCluster({ bindir: state.bindir, dataDir: state.data_dir, logFile: state.log_file, port: state.port, runAs });
    return paramsOf(state);
  });
}

export function stopLocalServer(home: string): { stopped: boolean } {
  const state = readState(home);
  if (!state) return { stopped: false };
  return { stopped: stopCluster({ bindir: state.bindir, dataDir: state.data_dir, runAs: clusterUser() }) };
}

export function localStatus(home: string): LocalStatus {
  const state = readState(home);
  const pid = state ? runningPid(state.data_dir) : null;
  return {
    url: state ? urlWithoutPassword(paramsOf(state)) : null, // the one URL builder: quoting, IPv6, no password
    port: state?.port ?? null,
    version: state?.pg_version ?? null,
    data_dir: state?.data_dir ?? null,
    log_file: state?.log_file ?? null,
    running: pid !== null,
    pid,
    initialized: !!state && existsSync(join(state.data_dir, 'PG_VERSION')),
    binaries: state ? `${state.binaries}: ${state.bindir}` : null,
    state_file: stateFile(home),
  };
}

function paramsOf(s: LocalState): ConnParams {
  // No TLS on loopback, whatever PGSSLMODE the user's shell has (it would fail the connection, or demand a cert).
  return {
    host: '127.0.0.1',
    port: s.port,
    user: s.user,
    password: s.password,
    database: 'postgres',
    sslmode: 'disable',
  };
}
