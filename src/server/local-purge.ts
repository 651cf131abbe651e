// `pgx local down --purge`: stop the local server and delete everything pgx keeps for it. Only the paths pgx itself
// derives from PGX_HOME are removed (never a path read from state.json, which could name anything): the state and
// data under $PGX_HOME/local, the data under /var/lib/pgx/local-<hash of PGX_HOME> (a root install), the passfiles,
// the per-server cache, and under $PGX_HOME/agent the files pgx writes there, by name (the hook log included: the
// listing shown before the purge names it). Anything else in those directories is not pgx's and stays; a directory
// pgx made is removed only once empty (decision 133).
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stopLocalServer } from './local.js';

export interface PurgeTarget {
  path: string;
  bytes: number;
  what: string;
}

function sizeOf(path: string): number {
  let total = 0;
  const walk = (p: string) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    total += st.size;
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(path);
  return total;
}

/** What pgx writes under $PGX_HOME/agent, by name: session env files and passfiles, routing tickets, logs, pid files. */
const AGENT_ENTRIES: { re: RegExp; what: string }[] = [
  { re: /^passfiles$/, what: 'session passfiles' },
  { re: /^sessions$/, what: 'session markers' },
  { re: /^tickets$/, what: 'routing tickets' },
  { re: /^(bash-env\.sh|zdotdir|server-url)$/, what: "sessions' shell environment files" },
  { re: /^hooks\.log(\.1)?$/, what: 'hook log' },
  { re: /^pool-fill\.log$/, what: 'pool filler log' },
  { re: /^pool-fill-[A-Za-z0-9_.-]+\.pid$/, what: 'pool filler pid file' },
  { re: /^handoffs$/, what: "subagents' handoffs to their parent session" },
  { re: /^routed$/, what: "records of routed commands (which subagent's command a process runs in)" },
  { re: /^freeze-[0-9a-f]{24}\.pid$/, what: 'frozen-copy maker pid file' },
  { re: /^copies\.log$/, what: 'log of the copies pgx made without a template (engine/copy-method.ts)' },
  { re: /^claude-code-verdicts\.json$/, what: 'Claude Code versions verified on this machine' },
  { re: /^claude-code-verify-[0-9.]+\.running$/, what: 'a Claude Code verification under way' },
];

/** What `--purge` would delete, with sizes (nothing is touched). */
export function purgeTargets(home: string): PurgeTarget[] {
  const tag = createHash('sha256').update(home).digest('hex').slice(0, 10);
  const candidates = [
    { path: join(home, 'local'), what: 'local server state (and its data, when not run as root)' },
    { path: join('/var/lib/pgx', `local-${tag}`), what: 'local server data (run as the postgres user)' },
    { path: join(home, 'passfiles'), what: 'passfiles of `pgx local env` / `agent up`' },
    { path: join(home, 'servers'), what: 'what pgx learnt about each server (clone method)' },
    { path: join(home, 'mcp'), what: "pgx's MCP fronts: recorded calls, retired-branch notices, fronts" },
  ];
  let agent: string[] = [];
  try {
    agent = readdirSync(join(home, 'agent')).sort();
  } catch {
    // no agent directory
  }
  for (const name of agent) {
    const known = AGENT_ENTRIES.find((e) => e.re.test(name));
    if (known) candidates.push({ path: join(home, 'agent', name), what: known.what });
  }
  return candidates.filter((c) => existsSync(c.path)).map((c) => ({ ...c, bytes: sizeOf(c.path) }));
}

/** Removes a directory pgx made if nothing is left in it (never its contents). */
export function removeIfEmpty(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false; // not empty (something that is not pgx's), or gone already
  }
}

export function purgeLocalServer(home: string): { stopped: boolean; removed: PurgeTarget[]; removed_dirs: string[] } {
  const { stopped } = stopLocalServer(home);
  const removed = purgeTargets(home);
  for (const t of removed) rmSync(t.path, { recursive: true, force: true });
  const varLib = removed.some((t) => t.path.startsWith('/var/lib/pgx/')) ? ['/var/lib/pgx'] : [];
  const removedDirs = [join(home, 'agent'), home, ...varLib].filter((d) => existsSync(d) && removeIfEmpty(d));
  return { stopped, removed, removed_dirs: removedDirs };
}

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
