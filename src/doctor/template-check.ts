// Is the project's template there, made by pgx, and in step with the source? "In step" compares the schema
// fingerprint stored in the template's stamp at its last refresh with the source's fingerprint now.
import { databaseInfo, fixStatement } from '../server/catalog.js';
import { schemaFingerprint } from '../engine/fingerprint.js';
import { parseTemplateStamp, templateName } from '../engine/template.js';
import { relativeTime } from '../output.js';
import { sqlFix } from './sql-fix.js';
import { fail, ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

const REFRESH = 'pgx template refresh';

export async function templateCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('template', ctx);
  const config = ctx.config;
  const name = templateName(config.project, config.source);
  if (config.source && !(await databaseInfo(s.db, config.source)).exists) {
    return fail('template', `the source database "${config.source}" ([project] source) does not exist on the server`, `pgx source import --from <postgres://… | dump file> (loads your existing database as "${config.source}"), or create it empty: ${sqlFix(config, s.admin, fixStatement.createDatabase(config.source))}; or fix/remove [project] source in ${config.file ?? '.pgx.toml'}`);
  }
  const info = await databaseInfo(s.db, name);
  if (!info.exists) return warn('template', `${name} not built yet (the first branch builds it, which makes that branch slow)`, REFRESH);
  const stamp = parseTemplateStamp(info.comment);
  if (!stamp) return fail('template', `a database named ${name} exists but was not made by pgx`, `rename or drop ${name} yourself, or change [project] name in ${config.file ?? '.pgx.toml'}`);
  const age = `refreshed ${relativeTime(stamp.refreshed_at)} by ${stamp.method}`;
  if (!config.source) return ok('template', `${name} (empty: no [project] source), ${age}`);
  const now = await schemaFingerprint({ admin: s.admin }, config.source);
  if (stamp.fingerprint !== now) {
    return warn('template', `${name} is behind "${config.source}": its schema changed since the template was ${age}; new branches get the old schema`, REFRESH);
  }
  return ok('template', `${name} in step with "${config.source}", ${age}`);
}
