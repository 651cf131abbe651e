// The absolute path of the pgx launcher this process was started as: what install writes into the hooks and the
// wrapper rule, and what the rewrite starts with. PGX_LAUNCHER overrides (tests; a wrapper script).
import { realpathSync } from 'node:fs';

export function launcherPath(): string {
  if (process.env.PGX_LAUNCHER) return process.env.PGX_LAUNCHER;
  try {
    return realpathSync(process.argv[1]!);
  } catch {
    return process.argv[1]!;
  }
}
