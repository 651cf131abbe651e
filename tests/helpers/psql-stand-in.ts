// Where this machine has no psql (issue 39), a routed command's `psql` is the stand-in in ./psql-stand-in (a Node
// client that picks its server as libpq does: decision 513), so the tests that prove routing with psql inside an agent's
// command run on a bare machine too, instead of skipping. Where psql is installed, the real one runs.
import { join } from 'node:path';
import { onPath } from './client-programs.js';

export const PSQL_STAND_IN_DIR = join(import.meta.dirname, 'psql-stand-in');

/**
 * `env` with the stand-in first on its PATH when that PATH has no psql; `env` itself otherwise, or where the test says
 * the agent has no psql at all (PGX_TEST_PSQL=none: tests/e2e/pgx-bare.test.ts, whose agents use a Node client).
 */
export function withPsql(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const path = env.PATH ?? process.env.PATH ?? '';
  if (env.PGX_TEST_PSQL === 'none' || onPath('psql', path)) return env;
  return { ...env, PATH: `${PSQL_STAND_IN_DIR}:${path}` };
}
