// Guards: per-database settings that bound what a dead or runaway agent can leave behind. Set on branches only
// (right after their stamp), never on the source or the template.
import type { Config, GuardName } from '../project/config.js';
import { setDatabaseSetting } from '../server/catalog.js';
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
    await setDatabaseSetting(db, branch, name, `${ms}ms`);
    result.applied[name] = ms;
  }
  return result;
}
