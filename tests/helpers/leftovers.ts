// What a test run leaves behind, found and cleared: processes that outlive their test file (a broker idling for ten
// minutes, a pool filler, a server, a child with an open pipe), directories, loop mounts, and a local server's data
// under /var/lib/pgx (where pgx puts it when run as root). Read from /proc (Linux); elsewhere the process checks find
// nothing and only the directories are checked.
//
// Used by tests/helpers/file-hygiene.ts (per test file) and tests/helpers/global-setup.ts (once, after the suite).
// Node built-ins only, plus the broker's own client for its `stop` request.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, rmSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { askBroker } from '../../src/broker/client.js';
import type { BrokerStatus } from '../../src/broker/protocol.js';

export interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
  cwd: string;
  /** Clock ticks since boot at which it started (/proc/<pid>/stat field 22). */
  started: number;
}

const read = (f: string): string | undefined => {
  try {
    return readFileSync(f, 'utf8');
  } catch {
    return undefined;
  }
};

function proc(pid: number): (Proc & { env: string }) | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after its last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (f[0] === 'Z') return undefined; // a zombie holds nothing; its parent reaps it
  let cwd = '';
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    // another user's process, or gone
  }
  return {
    pid,
    ppid: Number(f[1]),
    started: Number(f[19]),
    cmd: (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim(),
    cwd,
    env: read(`/proc/${pid}/environ`) ?? '',
  };
}

/** Every process this user can see (but this one), with its environment. */
function allProcs(): (Proc & { env: string })[] {
  let pids: number[] = [];
  try {
    pids = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
  return pids.filter((p) => p !== process.pid).flatMap((p) => proc(p) ?? []);
}

/** Now, in the clock ticks /proc/<pid>/stat counts in (USER_HZ, 100 on Linux). */
export function ticksNow(): number {
  const up = read('/proc/uptime');
  return up ? Math.floor(Number(up.split(' ')[0]) * 100) : 0;
}

const under = (path: string, root: string) => path === root || path.startsWith(root + '/');

/**
 * Processes that belong to `roots`: running in one of them, named in their argv, or in their environment (a HOME,
 * PGX_HOME or TMPDIR there), or descended from one of `parents` (a child still attached to the test worker).
 * `ignore` leaves some out (the test runner's own processes).
 */
export function processesOf(roots: string[], opts: { parents?: number[]; ignore?: (p: Proc) => boolean } = {}): Proc[] {
  const procs = allProcs();
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const descends = (p: Proc): boolean => {
    for (let q: Proc | undefined = p, n = 0; q && n < 64; q = byPid.get(q.ppid), n++)
      if (opts.parents?.includes(q.ppid)) return true;
    return false;
  };
  return procs
    .filter((p) => !opts.ignore?.(p))
    .filter((p) => roots.some((r) => under(p.cwd, r) || p.cmd.includes(r) || p.env.includes(r)) || descends(p))
    .map(({ env: _env, ...p }) => p);
}

/** Every process this user can see, but this one. */
export function processes(): Proc[] {
  return allProcs().map(({ env: _env, ...p }) => p);
}

export function alive(pid: number): boolean {
  return proc(pid) !== undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits up to `ms` for the processes to end; returns those still running. */
export async function untilGone(procs: Proc[], ms: number): Promise<Proc[]> {
  const deadline = Date.now() + ms;
  let left = procs.filter((p) => alive(p.pid));
  while (left.length && Date.now() < deadline) {
    await sleep(100);
    left = left.filter((p) => alive(p.pid));
  }
  return left;
}

/** A postmaster: SIGTERM would be a smart shutdown, which waits for every client to leave. */
const isPostmaster = (p: Proc) => /(^|\/)postgres\s.*-D\s/.test(p.cmd);

/** SIGTERM (SIGINT, a fast shutdown, for a postmaster), then SIGKILL for whatever is still there after 3 s. */
export async function terminate(procs: Proc[]): Promise<void> {
  const signal = (p: Proc, s: NodeJS.Signals) => {
    try {
      process.kill(p.pid, s);
    } catch {
      // gone already
    }
  };
  for (const p of procs) signal(p, isPostmaster(p) ? 'SIGINT' : 'SIGTERM');
  for (const p of await untilGone(procs, 3000)) signal(p, 'SIGKILL');
  await untilGone(procs, 2000);
}

export const isBroker = (p: Proc) => / agent broker serve\b/.test(p.cmd);

/**
 * Stops a broker the way `pgx agent broker stop` does (its `stop` request), picked out of its socket directory (the
 * broker's cwd) by the pid its status reports: a shared directory's other brokers are never asked.
 */
export async function stopBroker(p: Proc): Promise<boolean> {
  let socks: string[] = [];
  try {
    socks = readdirSync(p.cwd).filter((f) => /^b-[0-9a-f]{24}\.sock$/.test(f));
  } catch {
    return false;
  }
  for (const f of socks) {
    const addr = { fp: f.slice(2, 26), fpm: '', dir: p.cwd, path: join(p.cwd, f) };
    const st = await askBroker(addr, { op: 'status' }, 2000);
    const status = st.answer && 'status' in st.answer ? (st.answer.status as BrokerStatus) : undefined;
    if (status?.pid === p.pid) return !!(await askBroker(addr, { op: 'stop' }, 2000)).answer;
  }
  return false;
}

/** Mount points at or under `root` (a test's loop-mounted XFS image). */
export function mountsUnder(root: string): string[] {
  return (read('/proc/mounts') ?? '')
    .split('\n')
    .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && under(m, root));
}

/** Files named `name` up to `depth` levels below `root` (not into node_modules or through links). */
export function findFiles(root: string, name: string, depth: number): string[] {
  const found: string[] = [];
  const walk = (dir: string, d: number) => {
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === name && e.isFile()) found.push(join(dir, e.name));
      else if (e.isDirectory() && d > 0 && e.name !== 'node_modules') walk(join(dir, e.name), d - 1);
    }
  };
  walk(root, depth);
  return found;
}

/**
 * As root, pgx keeps a local server's data under /var/lib/pgx/local-<sha256(PGX_HOME)[:10]> (src/server/local.ts),
 * outside every test directory: those of the PGX_HOMEs under `root` that ran `pgx local up` (a state file), whether
 * or not they are still there.
 */
export function localDataRootsOf(root: string): string[] {
  if (process.getuid?.() !== 0) return [];
  return findFiles(root, 'state.json', 6)
    .filter((f) => f.endsWith('/local/state.json'))
    .map((f) =>
      join(
        '/var/lib/pgx',
        `local-${createHash('sha256').update(f.slice(0, -'/local/state.json'.length)).digest('hex').slice(0, 10)}`,
      ),
    );
}

/** Removes a directory tree, unmounting what is mounted inside it first. Returns why it could not, if it could not. */
export function removeTree(dir: string): string | undefined {
  // A test that died before its own stop() leaves its loop mount: rm would empty the mounted file system instead.
  for (const m of mountsUnder(dir).reverse()) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    return undefined;
  } catch (e) {
    return `${dir}: ${(e as Error).message}`;
  }
}

/** A process as a leftover line: pid, cwd, argv, and the variables that say whose it is. */
export function describeProc(p: Proc): string {
  const env = (read(`/proc/${p.pid}/environ`) ?? '')
    .split('\0')
    .filter((v) => /^(HOME|PGX_HOME|TMPDIR|XDG_RUNTIME_DIR)=/.test(v));
  return `pid ${p.pid} (cwd ${p.cwd || '?'}${env.length ? `; ${env.join(' ')}` : ''}): ${p.cmd.length > 200 ? p.cmd.slice(0, 200) + '…' : p.cmd}`;
}
