// Guards: per-database settings that bound what a dead or runaway agent can leave behind. Applied by
// ALTER DATABASE … SET on branches only (checked by stamp), never on the source or the template.
import type { Config, GuardName } from '../config.js';
import type { Db } from '../server/db.js';

/** client_connection_check_interval appeared in PostgreSQL 14. */
export const GUARD_MIN_VERSION: Record<GuardName, number> = {
  client_connection_check_interval: 140000,
  idle_in_transaction_session_timeout: 90600,
  statement_timeout: 0,
};

export interface GuardResult {
  applied: Partial<Record<GuardName, number>>;
  skipped: { name: GuardName; reason: string }[];
}

export async function applyGuards(db: Db, branch: string, config: Config): Promise<GuardResult> {
  const result: GuardResult = { applied: {}, skipped: [] };
  if (!config.guards.enabled) return result;
  for (const [name, ms] of Object.entries(config.guards.settings) as [GuardName, number | null][]) {
    if (ms === null) {
      result.skipped.push({ name, reason: 'disabled in .pgx.toml' });
      continue;
    }
    if (db.serverVersionNum < GUARD_MIN_VERSION[name]) {
      result.skipped.push({ name, reason: `needs PostgreSQL ${Math.floor(GUARD_MIN_VERSION[name] / 10000)}+` });
      continue;
    }
    // ms is an integer from the validated config; ALTER … SET takes no bind parameters, so it goes through literal().
    await db.query(`ALTER DATABASE ${db.ident(branch)} SET ${db.ident(name)} = ${db.literal(`${ms}ms`)}`);
    result.applied[name] = ms;
  }
  return result;
}

/** The guard settings actually stored for a database (pg_db_role_setting, role-independent rows). */
export async function readGuards(db: Db, database: string): Promise<Record<string, string>> {
  const rows = await db.query<{ setconfig: string[] | null }>(
    `SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1 AND s.setrole = 0`,
    [database],
  );
  const out: Record<string, string> = {};
  for (const kv of rows[0]?.setconfig ?? []) {
    const i = kv.indexOf('=');
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}
