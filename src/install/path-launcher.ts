// Where a project-scope hook will find pgx: the first executable `pgx` on PATH, as the hook's `command -v pgx` does,
// resolved to the file node runs. That resolved path is what the hook's launcherPath() returns, so it is what the
// rewrite starts with and what the machine's wrapper rule must name (hooks/claude/launcher.ts).
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { PORTABLE_LAUNCHER } from './hook-events.js';

export function pgxOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue; // a relative PATH entry depends on the hook's cwd: not something to promise
    const file = join(dir, PORTABLE_LAUNCHER);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return realpathSync(file);
    } catch {
      // not there, or not executable: sh goes on to the next entry too
    }
  }
  return undefined;
}
