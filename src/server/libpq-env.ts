import { urlWithoutPassword, type ConnParams } from './db.js';

/**
 * Variables that pick WHICH server/database/role libpq connects to, or override session settings. All are removed
 * before pgx sets its own, so a decoy inherited from the user's shell (DATABASE_URL pointing at the source, a
 * PGSERVICE with a pg_service.conf, PGOPTIONS='-c statement_timeout=0') can never redirect or unguard a command.
 */
const TARGETING = ['PGSERVICE', 'PGSERVICEFILE', 'PGHOST', 'PGHOSTADDR', 'PGPORT', 'PGUSER', 'PGDATABASE', 'PGPASSWORD', 'PGPASSFILE', 'PGOPTIONS', 'PGTARGETSESSIONATTRS', 'DATABASE_URL'];

/** The environment for a child process connected to `p`. The password goes into PGPASSWORD only, never a URL or argv. */
export function libpqEnv(base: NodeJS.ProcessEnv, p: ConnParams): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of TARGETING) delete env[k];
  env.PGHOST = p.host;
  env.PGPORT = String(p.port);
  env.PGUSER = p.user;
  env.PGDATABASE = p.database;
  env.DATABASE_URL = urlWithoutPassword(p);
  if (p.password) env.PGPASSWORD = p.password;
  return env;
}

export { TARGETING as LIBPQ_TARGETING_VARS };
