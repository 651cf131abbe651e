// Server checks: reachable and which version; the admin role can create databases.
import { currentRole, fixStatement, GUARD_MIN_VERSION } from '../engine/inspect.js';
import { sqlFix } from './sql-fix.js';
import { fail, ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

/** The guard that needs the newest server: client_connection_check_interval (PostgreSQL 14). */
const CHECK_INTERVAL_MIN = GUARD_MIN_VERSION.client_connection_check_interval;

export async function serverCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok) return { name: 'server', status: s.status, detail: s.detail, ...(s.fix ? { fix: s.fix } : {}) };
  const detail = `PostgreSQL ${s.version} at ${s.where}`;
  const wantsInterval =
    ctx.config?.guards.enabled && ctx.config.guards.settings.client_connection_check_interval !== null;
  if (s.db.serverVersionNum < CHECK_INTERVAL_MIN && wantsInterval) {
    return warn(
      'server',
      `${detail}: client_connection_check_interval needs PostgreSQL 14+, so that guard is skipped (a dead client's ` +
        `query runs until statement_timeout)`,
      `upgrade the server to 14+, or set client_connection_check_interval = "off" in [guards] of ${ctx.config?.file ?? '.pgx.toml'}`,
    );
  }
  return ok('server', detail);
}

export async function roleCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok) return skipNoServer('role', ctx);
  const r = await currentRole(s.db);
  if (r?.rolsuper) return ok('role', `"${r.rolname}" is a superuser`);
  if (r?.rolcreatedb) return ok('role', `"${r.rolname}" has CREATEDB`);
  const role = r?.rolname ?? s.admin.user;
  return fail(
    'role',
    `role "${role}" cannot create databases, so no branch can be made`,
    `${sqlFix(ctx.config, s.admin, fixStatement.grantCreatedb(role))}  (as a superuser)`,
  );
}
