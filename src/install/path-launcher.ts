// Where a project-scope hook will find pgx: the first executable `pgx` on PATH, as the hook's `command -v pgx` does,
// resolved to the file node runs. That resolved path is what the hook's launcherPath() returns, so it is what the
// rewrite starts with and what the machine's wrapper rule must name (hooks/claude/launcher.ts).
import { executableOnPath } from '../lib/fsutil.js';
import { PORTABLE_LAUNCHER } from './hook-events.js';

export function pgxOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  // a relative PATH entry depends on the hook's cwd: not something to promise
  return executableOnPath(PORTABLE_LAUNCHER, env, { absoluteOnly: true });
}
