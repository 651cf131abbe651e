// Where this machine has no psql (issue 39), a routed command's `psql` is the stand-in in ./psql-stand-in (a Node
// client that picks its server as libpq does: decision 513), so the tests that prove routing with psql inside an agent's
// command run on a bare machine too, instead of skipping. Where psql is installed, the real one runs.
import { join } from 'node:path';
import { onPath } from './client-programs.js';

export const PSQL_STAND_IN_DIR = join(import.meta.dirname, 'psql-stand-in');

/**
 * `env` with the stand-in first on its PATH when that PATH has no psql; `env` itself otherwise, or where the test says
 * the agent has no psql at all (PGX_TEST_PSQL=none: tests/e2e/pgx-bare.test.ts, whose agents use a Node client).
 * `loginShell`: the agent runs its commands with `bash -lc` (Codex), whose /etc/profile resets PATH: BASH_ENV (read
 * by a non-interactive bash after the profile files) puts the stand-in first again, unless the test set its own.
 */
export function withPsql(env: NodeJS.ProcessEnv, o: { loginShell?: boolean } = {}): NodeJS.ProcessEnv {
  const path = env.PATH ?? process.env.PATH ?? '';
  if (env.PGX_TEST_PSQL === 'none' || onPath('psql', path)) return env;
  const login = o.loginShell && env.BASH_ENV === undefined ? { BASH_ENV: join(PSQL_STAND_IN_DIR, 'bash-env.sh') } : {};
  return { ...env, ...login, PATH: `${PSQL_STAND_IN_DIR}:${path}` };
}
