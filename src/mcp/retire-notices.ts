// "This branch retired": SubagentStop and SessionEnd leave a notice per branch they retire, and every pgx front that
// runs a copy of a user's MCP server on that branch stops it (one server per branch, stopped when the branch
// retires). Notices are empty files named by the branch (pgx's names are [a-z0-9_]); fronts watch the directory, and
// old notices are swept (a branch revived later gets a copy again on its next call: the notice is older than it).
import { mkdirSync, readdirSync, rmSync, statSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

const KEEP_MS = 24 * 3_600_000;
const BRANCH = /^[a-z0-9_]{1,63}$/;

export function noticesDir(home: string): string {
  return join(home, 'mcp', 'retired');
}

export function noteRetired(home: string, branch: string): void {
  if (!BRANCH.test(branch)) return;
  mkdirSync(noticesDir(home), { recursive: true, mode: 0o700 });
  writeFileSync(join(noticesDir(home), branch), '', { mode: 0o600 });
}

/** The branches retired since `since` (epoch ms), by their notices: branch → when. */
export function retiredSince(home: string, since: number): Map<string, number> {
  const out = new Map<string, number>();
  let names: string[];
  try {
    names = readdirSync(noticesDir(home));
  } catch {
    return out;
  }
  const now = Date.now();
  for (const n of names) {
    try {
      const m = statSync(join(noticesDir(home), n)).mtimeMs;
      if (now - m > KEEP_MS) rmSync(join(noticesDir(home), n), { force: true });
      else if (m >= since && BRANCH.test(n)) out.set(n, m);
    } catch {
      // swept by another front
    }
  }
  return out;
}

/** Calls `onChange` when a notice may have arrived (inotify where it works, and a poll every `pollMs` regardless). */
export function watchNotices(home: string, onChange: () => void, pollMs = 5000): { close(): void } {
  mkdirSync(noticesDir(home), { recursive: true, mode: 0o700 });
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(noticesDir(home), () => onChange());
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  const timer = setInterval(onChange, pollMs);
  timer.unref();
  return {
    close() {
      clearInterval(timer);
      watcher?.close();
    },
  };
}
