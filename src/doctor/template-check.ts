// Is the project's template there, made by pgx, and in step with the source? "In step" compares the schema
// fingerprint stored in the template's stamp at its last refresh with the source's fingerprint now. For an imported
// source (pgx's copy of another database), the origin check compares the origin's fingerprint now with the one
// recorded when it was copied: the template can be in step with the copy while the copy is behind its origin.
import { statSync } from 'node:fs';
import { findDatabaseUrl } from '../project/dotenv.js';
import {
  copiesLeftBehind,
  databaseInfo,
  fingerprintAt,
  fixStatement,
  importRecordOf,
  parseTemplateStamp,
  schemaFingerprint,
  templateName,
  type SourceRecord,
} from '../engine/inspect.js';
import { relativeTime } from '../lib/output.js';
import { classifyInput } from '../project/source-input.js';
import { sqlFix } from './sql-fix.js';
import { fail, ok, warn, skip, skipNoServer, type Check, type DoctorContext } from './types.js';

const REFRESH = 'pgx template refresh';
const SYNC = 'pgx source sync';
/** The origin is another server, perhaps far or down: the doctor does not wait on it for long. */
const ORIGIN_CONNECT_TIMEOUT_MS = 2000;

/** pgx's record of the source as an import, if it has one (read only; no registry: none). */
async function importRecord(ctx: DoctorContext, source: string): Promise<SourceRecord | undefined> {
  const reg = await ctx.registry();
  return reg ? importRecordOf(reg, source) : undefined;
}

export async function templateCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('template', ctx);
  const config = ctx.config;
  const name = templateName(config.project, config.source);
  if (config.source && !(await databaseInfo(s.db, config.source)).exists) {
    // pgx imported it once and remembers from where: the same command brings it back.
    const rec = await importRecord(ctx, config.source);
    if (rec)
      return fail(
        'template',
        `the source database "${config.source}" ([project] source), pgx's copy of ${rec.origin}, does not exist ` +
          `on the server any more`,
        `${SYNC} (copies it again from ${rec.origin})`,
      );
    return fail(
      'template',
      `the source database "${config.source}" ([project] source) does not exist on the server`,
      `pgx source import --from <postgres://… | dump file> (loads your existing database as "${config.source}"), ` +
        `or create it empty: ${sqlFix(config, s.admin, fixStatement.createDatabase(config.source))}; or fix/remove ` +
        `[project] source in ${config.file ?? '.pgx.toml'}`,
    );
  }
  const info = await databaseInfo(s.db, name);
  if (!info.exists)
    return warn(
      'template',
      `${name} not built yet (the first branch builds it, which makes that branch slow)`,
      REFRESH,
    );
  const stamp = parseTemplateStamp(info.comment);
  if (!stamp)
    return fail(
      'template',
      `a database named ${name} exists but was not made by pgx`,
      `rename or drop ${name} yourself, or change [project] name in ${config.file ?? '.pgx.toml'}`,
    );
  const age = `refreshed ${relativeTime(stamp.refreshed_at)} by ${stamp.method}`;
  if (!config.source) return ok('template', `${name} (empty: no [project] source), ${age}`);
  // An imported source is named as pgx's copy: "in step" then says nothing about the origin (the origin check does).
  const copy = (await importRecord(ctx, config.source)) ? `pgx's copy "${config.source}"` : `"${config.source}"`;
  const now = await schemaFingerprint({ admin: s.admin }, config.source);
  if (stamp.fingerprint !== now) {
    return warn(
      'template',
      `${name} is behind ${copy}: its schema changed since the template was ${age}; new branches get the old schema`,
      REFRESH,
    );
  }
  return ok('template', `${name} in step with ${copy}, ${age}`);
}

/** An imported source against its origin: the origin's schema now versus at the copy (a dump file: its mtime). */
export async function originCheck(ctx: DoctorContext): Promise<Check> {
  const c = await originCompared(ctx);
  if (c.status !== 'ok' || !ctx.config?.source) return c;
  // Copies an interrupted import or sync left (recorded, so provably pgx's): the next sync drops them.
  const reg = await ctx.registry();
  const left = reg ? await copiesLeftBehind(reg, ctx.config.source) : [];
  if (!left.length) return c;
  return warn(
    'origin',
    `${c.detail}; ${left.length} copy/copies left by an interrupted import or sync take space (${left.map((l) => l.name).join(', ')})`,
    `${SYNC} (drops them first)`,
  );
}

async function originCompared(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('origin', ctx);
  const source = ctx.config.source;
  if (!source) return ok('origin', 'no [project] source: nothing imported');
  const rec = await importRecord(ctx, source);
  if (!rec) return ok('origin', `"${source}" is not a pgx import: the template snapshots it as it is (${REFRESH})`);
  const copied = `copied ${relativeTime(rec.imported_at)}`;
  if (rec.origin_kind === 'file') {
    let mtime: number;
    try {
      mtime = statSync(rec.origin).mtimeMs;
    } catch {
      return skip(
        'origin',
        `"${source}" is pgx's copy of ${rec.origin} (${copied}), which is gone; \`${SYNC} --from <url|file|dir>\` imports from elsewhere`,
      );
    }
    if (mtime > new Date(rec.imported_at).getTime())
      return warn(
        'origin',
        `the dump ${rec.origin} changed after pgx copied it into "${source}" (${copied}): new branches lack what it added`,
        SYNC,
      );
    return ok(
      'origin',
      `"${source}" is pgx's copy of the dump ${rec.origin} (${copied}); the dump has not changed since`,
    );
  }
  let url: string | undefined = rec.origin;
  if (rec.origin_kind === 'env') url = findDatabaseUrl(ctx.projectDir, rec.origin_env!)?.value;
  if (!url)
    return skip(
      'origin',
      `"${source}" is pgx's copy of the database named by $${rec.origin_env} (${copied}), which is not set now: not compared`,
    );
  let now: string;
  try {
    const conn = classifyInput(url, ctx.projectDir).conn!;
    now = await fingerprintAt({ ...conn, connectTimeoutMs: ORIGIN_CONNECT_TIMEOUT_MS });
  } catch (e) {
    // Never the error's text: an env origin's URL carries its password, and a driver may quote it.
    const why =
      (e as { code?: string }).code === 'CONFIG_INVALID' || (e as { code?: string }).code === 'USAGE'
        ? 'its URL is not valid now'
        : 'not reachable now';
    return skip(
      'origin',
      `"${source}" is pgx's copy of ${rec.origin} (${copied}); the origin is ${why}, so it was not compared`,
    );
  }
  const then = rec.origin_fingerprint ?? (await schemaFingerprint({ admin: s.admin }, source));
  if (now !== then) {
    return warn(
      'origin',
      `the origin ${rec.origin} has a schema change since pgx copied it into "${source}" (${copied}): new branches ` +
        `lack it (a template refresh only re-reads pgx's copy)`,
      SYNC,
    );
  }
  return ok(
    'origin',
    `"${source}" is in step with its origin ${rec.origin} (schema; ${copied}; data changes since are not compared)`,
  );
}
