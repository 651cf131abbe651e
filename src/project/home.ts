// Where pgx keeps its own state (local server, hook log, passfiles, tickets). Its own module: the hooks' fast path
// needs it without loading the config parser.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function pgxHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.PGX_HOME ? resolve(env.PGX_HOME) : join(homedir(), '.pgx');
}
