// Which agent's routed command a process runs inside, judged from the process tree and never from the environment
// (decision 450). A subagent's command controls its own variables (CLAUDECODE, CLAUDE_*, PGX_*), so a pgx started
// from it with `env -u CLAUDECODE` looked like the user at a terminal and could act on any branch. What it cannot
// change is where it descends from: each routed command is recorded when pgx routes it, keyed by the pid, start time
// and PID namespace of the process that becomes the command (the sh launcher's pid, which `exec`s the command; or the
// node launcher that spawns it) plus the boot id, so a reused pid never matches. The namespace because sandboxes
// number their own processes: Codex runs each command in a bubblewrap PID namespace of its own, where two subagents'
// launchers started in the same clock tick had the same pid and start time, and one was refused as inside the other. Any pgx that must decide walks its own
// /proc ancestry (itself included: `bash -c` may have exec'd into it) and is confined to the agent it descends from.
//
// Records: in this process's memory (the broker's, which routes most commands and so keeps its own list a command
// cannot reach) and a 0600 file under the router's pgx home, for every other pgx process. The home is looked up in
// the exec-time environment of every process on the chain (/proc/<pid>/environ, which a descendant cannot rewrite),
// so a command that points PGX_HOME or HOME elsewhere still finds its ancestors' records. A node launcher on the chain
// (`node …/bin/pgx.js agent exec --agent <id> …`) confines to <id> by its argv alone, record or not.
//
// A walk that finds no record is "free" only when it saw the whole tree (decision 452): it reached the top (a process
// whose parent is 0) within MAX_DEPTH parents, in a PID namespace pgx trusts (pid-namespace.ts). Otherwise it is
// "unknown": judged inside a routed command whose agent pgx can't name, so nothing crosses (a routed exec still runs
// what pgx's hook routed: its ticket). Without that, a command 128 processes deep, or in a PID namespace of its own,
// got another agent's branch. Linux only: where there is no /proc (not Linux) there is no ancestry, and nothing is
// confined (security.md says so); on Linux an unreadable /proc/self is "unknown". Node built-ins only: the broker and
// the routed exec load it on their hot path.
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseRoutedExec } from './exec-argv.js';
import { namespaceOf, untrustedNamespace } from './pid-namespace.js';

/** What pgx routed: whose command it is, and the branch it ran on. */
export interface RoutedRecord {
  agent: string;
  session: string | null;
  project: string | null;
  branch: string | null;
}

/**
 * Where a process stands: outside any routed command, inside one agent's, under records of several (refused), or
 * where pgx can't see the whole tree (`why` and `hint`: what the refusal says), judged as inside an unnamed agent's.
 */
export type Confinement =
  | { kind: 'free' }
  | ({ kind: 'agent' } & RoutedRecord)
  | { kind: 'conflict'; agents: string[] }
  | { kind: 'unknown'; why: string; hint: string };

/** The most parents a walk reads; a deeper process is "unknown" (a routed command could be above the cut). */
export const MAX_DEPTH = 128;

interface Link {
  pid: number;
  start: string;
  comm: string;
  /** The inode of its PID namespace (`/proc/<pid>/ns/pid`), '' when unreadable. */
  ns: string;
}

const memory = new Map<string, RoutedRecord>();
let boot: string | undefined;

function bootId(): string {
  if (boot === undefined) {
    try {
      boot =
        readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')
          .trim()
          .replace(/[^0-9a-f-]/g, '') || 'boot';
    } catch {
      boot = 'boot';
    }
  }
  return boot;
}

/** `/proc/<pid>/stat`: the name, the parent and the start time (clock ticks since boot). The name may hold ')'. */
function procStat(pid: number): { comm: string; ppid: number; start: string } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = s.lastIndexOf(')');
    const f = s.slice(close + 2).split(' ');
    const ppid = Number(f[1]);
    return Number.isSafeInteger(ppid) && f[19]
      ? { comm: s.slice(s.indexOf('(') + 1, close), ppid, start: f[19] }
      : undefined;
  } catch {
    return undefined;
  }
}

const pidNamespace = (pid: number) => namespaceOf(pid);

let self: number | undefined;
/**
 * This process's pid as /proc numbers it: process.pid is the pid in its own namespace, which in a namespace of its
 * own with the host's /proc (`unshare -pf` without --mount-proc) names another process (pid 1: init, "free").
 */
function selfPid(): number | undefined {
  if (self === undefined) {
    try {
      self = Number(readlinkSync('/proc/self'));
    } catch {
      return undefined;
    }
  }
  return Number.isSafeInteger(self) && self > 0 ? self : undefined;
}

/**
 * `pid` and its ancestors up to the top, each with its start time and PID namespace; `top`: the walk reached a
 * process whose parent is 0 (init, or a namespace's first process) or one it can't read (another user's, under
 * hidepid; an ancestor that just exited), not MAX_DEPTH first.
 */
function ancestry(pid: number): { chain: Link[]; top: boolean } {
  const chain: Link[] = [];
  for (let p = pid; chain.length < MAX_DEPTH;) {
    const s = procStat(p);
    if (!s) return { chain, top: true };
    chain.push({ pid: p, start: s.start, comm: s.comm, ns: pidNamespace(p) });
    if (s.ppid <= 0 || p === 1) return { chain, top: true };
    p = s.ppid;
  }
  return { chain, top: false };
}

function nulList(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** The pgx homes a process's exec-time environment names (PGX_HOME, else $HOME/.pgx: project/home.ts's rule). */
function homesOf(pid: number): string[] {
  let pgxHome: string | undefined;
  let home: string | undefined;
  for (const kv of nulList(`/proc/${pid}/environ`)) {
    if (kv.startsWith('PGX_HOME=')) pgxHome = kv.slice(9);
    else if (kv.startsWith('HOME=')) home = kv.slice(5);
  }
  return pgxHome ? [resolve(pgxHome)] : home ? [join(home, '.pgx')] : [];
}

const recordsDir = (home: string) => join(home, 'agent', 'routed', bootId());
const keyOf = (l: Pick<Link, 'pid' | 'start' | 'ns'>) => `${l.pid}-${l.start}-${l.ns}`;

/** Names a launcher process can have: node's, or the script's own (the kernel names a `#!` script after its file). */
const LAUNCHER_COMMS = new Set(['node', 'pgx.js', 'pgx']);

/** A node launcher in the rewrite's form on the chain: `node <dir>/pgx.js agent exec --agent <id> …`. */
function launcherAgent(pid: number): string | undefined {
  const argv = nulList(`/proc/${pid}/cmdline`);
  const i = argv.findIndex((a) => basename(a) === 'pgx.js' || basename(a) === 'pgx');
  if (i < 0 || i > 1) return undefined;
  const [a, b, flag, id] = argv.slice(i + 1);
  return a === 'agent' && b === 'exec' && flag === '--agent' && id ? id : undefined;
}

function readRecord(file: string): RoutedRecord | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<RoutedRecord>;
    if (typeof v.agent !== 'string' || !v.agent) return undefined;
    const s = (x: unknown) => (typeof x === 'string' ? x : null);
    return { agent: v.agent, session: s(v.session), project: s(v.project), branch: s(v.branch) };
  } catch {
    return undefined;
  }
}

/**
 * Records that `pid` is now `rec.agent`'s routed command (the router calls it once route() succeeded). In memory and
 * in `home`; best effort on disk: the broker's memory and the launcher's argv still confine without the file.
 */
export function recordRoutedCommand(home: string, caller: number, rec: RoutedRecord): void {
  const pid = caller === process.pid ? selfPid() : caller;
  const s = pid === undefined ? undefined : procStat(pid);
  if (pid === undefined || !s) return;
  const key = keyOf({ pid, start: s.start, ns: pidNamespace(pid) });
  memory.set(key, rec);
  try {
    const dir = recordsDir(home);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, key), JSON.stringify(rec), { mode: 0o600 });
  } catch {
    // a read-only home: memory and argv remain
  }
  if (memory.size > 4096 || Math.random() < 1 / 64) pruneRoutedRecords(home);
}

/** Drops the records of processes that are gone (a pid whose start time or namespace differs is another process). */
export function pruneRoutedRecords(home: string): void {
  const alive = (key: string) => {
    const [pid, start, ns] = key.split('-');
    return ns !== undefined && procStat(Number(pid))?.start === start && pidNamespace(Number(pid)) === ns;
  };
  for (const key of memory.keys()) if (!alive(key)) memory.delete(key);
  const dir = recordsDir(home);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (!alive(n)) rmSync(join(dir, n), { force: true });
}

/**
 * Where `pid` stands: the agent whose routed command it is or descends from. `homes`: where else to look for records
 * (the caller's own pgx home), besides the homes every process on the chain was started with.
 */
export function confinementOf(pid: number, homes: readonly string[] = []): Confinement {
  const judged = pid === process.pid ? selfPid() : pid;
  const { chain, top } = judged === undefined ? { chain: [], top: true } : ancestry(judged);
  if (!chain.length) return process.platform === 'linux' ? unreadable(pid) : { kind: 'free' };
  const dirs = new Set(homes.map(recordsDir));
  for (const l of chain) if (l.pid !== 1) for (const h of homesOf(l.pid)) dirs.add(recordsDir(h));
  const found: RoutedRecord[] = [];
  for (const [i, l] of chain.entries()) {
    const key = keyOf(l);
    const rec = memory.get(key) ?? [...dirs].map((d) => readRecord(join(d, key))).find(Boolean);
    if (rec) found.push(rec);
    // the caller's own argv is what is being judged, not a confinement
    const agent = i > 0 && LAUNCHER_COMMS.has(l.comm) ? launcherAgent(l.pid) : undefined;
    if (agent !== undefined) found.push({ agent, session: null, project: null, branch: null });
  }
  if (!found.length) {
    if (!top)
      return {
        kind: 'unknown',
        why: `pgx stopped following its parent processes after ${MAX_DEPTH} of them, before the top of the tree`,
        hint: `Run pgx from a shell fewer than ${MAX_DEPTH} processes deep.`,
      };
    const ns = untrustedNamespace(chain[0]!.ns);
    return ns ? { kind: 'unknown', ...ns } : { kind: 'free' };
  }
  const agents = [...new Set(found.map((r) => r.agent))];
  const sessions = new Set(found.map((r) => r.session).filter((s) => s !== null));
  if (agents.length > 1 || sessions.size > 1) return { kind: 'conflict', agents };
  // the fullest record (the launcher's argv knows only the agent)
  const best = found.find((r) => r.branch !== null) ?? found[0]!;
  return { kind: 'agent', ...best };
}

/** On Linux, a process whose own /proc entry can't be read (a /proc hidden under another mount, or already gone). */
function unreadable(pid: number): Confinement {
  return {
    kind: 'unknown',
    why: `pgx can't read ${pid === process.pid ? 'its own' : `process ${pid}'s`} entry in /proc, so it can't follow its parent processes`,
    hint: "pgx needs the system's /proc mounted where it runs.",
  };
}

/**
 * Is `pid` the launcher that asks for this exec (its argv the rewrite's form with these values)? The broker routes a
 * request only for the process it will record: a request naming another pid (one outside any routed command, to
 * escape its own) is not answered (the client then routes in its own process, where its own tree is judged).
 */
export function isLauncherOf(
  pid: number | undefined,
  req: { agent?: string; session?: string; cwdFlag?: string; command: readonly string[] },
): boolean {
  if (pid === undefined || !Number.isSafeInteger(pid) || pid <= 1) return false;
  const argv = nulList(`/proc/${pid}/cmdline`);
  for (let k = 1; k <= 3 && k < argv.length; k++) {
    const r = parseRoutedExec(argv.slice(k));
    if (
      r &&
      r.agent === req.agent &&
      r.session === req.session &&
      r.cwd === req.cwdFlag &&
      r.command.length === req.command.length &&
      r.command.every((c, i) => c === req.command[i])
    )
      return true;
  }
  return false;
}

/**
 * A hook entry run from inside a routed command: hooks speak for Claude Code or Codex (a forged SubagentStop retires
 * another agent's branch), and those never start them from a routed command. Refused: the text, exit 6.
 */
export function refuseHookInsideRoutedCommand(pid = process.pid): boolean {
  const c = confinementOf(pid);
  if (c.kind === 'free') return false;
  process.stderr.write(
    c.kind === 'unknown'
      ? `pgx: refused: a pgx hook was started where pgx can't see whether it runs inside a subagent's routed ` +
          `command: ${c.why}. Hooks are Claude Code's, Codex's and Copilot's to run, never a command's. ${c.hint}\n`
      : `pgx: refused: a pgx hook was started inside ${c.kind === 'agent' ? `subagent ${c.agent}'s` : 'a'} routed ` +
          `command. Hooks are Claude Code's and Codex's to run, never a command's (pgx judges this by the process ` +
          `tree, not the environment).\n`,
  );
  process.exitCode = 6; // EXIT.refused (lib/errors.ts), not imported into the light entries
  return true;
}
