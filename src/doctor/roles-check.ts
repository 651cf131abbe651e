// The roles check: which role the branches' commands connect as ([agent] roles, and what `auto` resolves to on this
// server), and branch roles left without a branch (a drop that found the role still owning something elsewhere, or
// a crash): stamped roles that no record names.
import {
  canCreateRoles,
  currentRole,
  fixStatement,
  recordedRoles,
  roleDependentDatabases,
  stampedRoles,
} from '../engine/inspect.js';
import { urlWithoutPassword } from '../server/conn-params.js';
import { shellQuote } from '../lib/shell.js';
import { fail, ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

/** PostgreSQL ≤ 14 lets every role create objects in the public schema of every database that kept the default. */
const PUBLIC_SCHEMA_NOTE =
  'PostgreSQL ≤ 14: a branch role can still create tables in the public schema of databases that keep the ' +
  'default grant (postgres, maybe your source; see docs/pgx/local-dev/security.md)';

export async function rolesCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('roles', ctx);
  const configured = ctx.config.roles;
  const admin = await currentRole(s.db);
  const name = admin?.rolname ?? s.admin.user;
  const can = canCreateRoles(admin);
  const psql = (sql: string) => `psql ${shellQuote(urlWithoutPassword(s.admin))} -c ${shellQuote(sql)}`;
  if (configured === 'per-branch' && !can) {
    return fail(
      'roles',
      `[agent] roles = "per-branch", but "${name}" can't create roles: no branch can be made`,
      `${psql(fixStatement.grantCreaterole(name))}  (as a superuser), or [agent] roles = "auto" in ${ctx.config?.file ?? '.pgx.toml'}`,
    );
  }
  const mode = configured === 'admin' || !can ? 'admin' : 'per-branch';
  const old = s.db.serverVersionNum < 150000 && mode === 'per-branch' ? `; ${PUBLIC_SCHEMA_NOTE}` : '';
  let detail =
    mode === 'per-branch'
      ? `per-branch (roles = "${configured}"; ${can}): each branch's commands connect as its own role, which reaches that branch only${old}`
      : `admin (roles = "${configured}"): routed commands connect as "${name}"${admin?.rolsuper ? ', a superuser' : ''}, ` +
        `and can reach the source, other branches and pgx_registry`;

  const reg = await ctx.registry();
  let left: string[] = [];
  try {
    const recorded = new Set(reg ? await recordedRoles(reg) : []);
    left = (await stampedRoles(s.db)).filter((r) => !recorded.has(r));
  } catch {
    detail += '; the registry predates branch roles (no role recorded yet)';
  }
  if (left.length) {
    const where = await Promise.all(
      left
        .slice(0, 5)
        .map(async (r) => `${r} (${(await roleDependentDatabases(s.db, r)).join(', ') || 'owns nothing'})`),
    );
    return warn(
      'roles',
      `${detail}; ${left.length} branch role(s) left without a branch: ${where.join(', ')}${left.length > 5 ? ', …' : ''}`,
      `in each database named: ${psql(fixStatement.dropLeftRole(left[0]!, name))}; then ${psql(fixStatement.dropRole(left[0]!))}`,
    );
  }
  if (mode === 'admin' && configured === 'auto') {
    return warn(
      'roles',
      `${detail}: "auto" fell back because "${name}" is neither a superuser nor has CREATEROLE`,
      `${psql(fixStatement.grantCreaterole(name))}  (as a superuser) for per-branch roles, or [agent] roles ` +
        `= "admin" in ${ctx.config?.file ?? '.pgx.toml'} to accept this`,
    );
  }
  return ok('roles', detail);
}
