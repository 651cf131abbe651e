// `pgx local down --purge`: stop the local server and delete everything pgx keeps for it. Only the paths pgx itself
// derives from PGX_HOME are removed (never a path read from state.json, which could name anything): the state and
// data under $PGX_HOME/local, the data under /var/lib/pgx/local-<hash of PGX_HOME> (a root install), and the
// passfiles. The hook log ($PGX_HOME/agent) is kept: it is the audit trail.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
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

/** What `--purge` would delete, with sizes (nothing is touched). */
export function purgeTargets(home: string): PurgeTarget[] {
  const tag = createHash('sha256').update(home).digest('hex').slice(0, 10);
  const candidates = [
    { path: join(home, 'local'), what: 'local server state (and its data, when not run as root)' },
    { path: join('/var/lib/pgx', `local-${tag}`), what: 'local server data (run as the postgres user)' },
    { path: join(home, 'passfiles'), what: 'passfiles of `pgx local env` / `agent up`' },
    { path: join(home, 'agent', 'passfiles'), what: 'session passfiles' },
  ];
  return candidates.filter((c) => existsSync(c.path)).map((c) => ({ ...c, bytes: sizeOf(c.path) }));
}

export function purgeLocalServer(home: string): { stopped: boolean; removed: PurgeTarget[] } {
  const { stopped } = stopLocalServer(home);
  const removed = purgeTargets(home);
  for (const t of removed) rmSync(t.path, { recursive: true, force: true });
  return { stopped, removed };
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
