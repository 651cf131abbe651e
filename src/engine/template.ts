// The template: a frozen snapshot of the project's source database (or an empty one when there is no source),
// with datallowconn = false so that nobody's open session can make a clone fail with 55006. Branches are cloned
// from it, never from the source; the source itself is only ever read.
//
// Crash safety: a template is never built under its final name. Every build (first use and refresh alike) goes into
// a unique `<name>_b<6>`, recorded in the registry before it is created and stamped `pgx:template-building:`
// right after it; it is finished (template stamp, no connections, IS_TEMPLATE) and only then swapped in. A current
// template is renamed aside to a unique `<name>_o<6>` for the swap and dropped after it. So a process killed at any
// point leaves either the old template or the new one under the name, plus leftovers that the next build (under the
// template's lock, so no build of it is running) recognises by record or stamp and drops. A database that is neither
// recorded nor stamped as this project's is never touched.
import { createHash, randomBytes } from 'node:crypto';
import { PgxError } from '../lib/errors.js';
import { shellQuote } from '../lib/shell.js';
import { buildsOf, forgetBuild, recordBuild } from '../registry/template-builds.js';
import { keptBuildOids } from '../registry/fork-points.js';
import { findSource } from '../registry/sources.js';
import { withTemplateLock } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import type { Stamp, TemplateStamp } from '../server/catalog.js';
import { withRoomFor } from './disk-budget.js';
import { rulesDigest } from '../mask/rules.js';
import { schemaFingerprint } from './fingerprint.js';
import type { EngineContext } from './context.js';

export type { TemplateStamp };

export function templateName(project: string, source: string | undefined): string {
  const slug =
    project
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 24) || 'project';
  const h = createHash('sha256')
    .update(JSON.stringify([project, source ?? null]))
    .digest('hex')
    .slice(0, 8);
  return `pgx_tpl_${slug}_${h}`;
}

/** The template stamp a comment carries, if any (doctor reads it). */
export function parseTemplateStamp(comment: string | null): TemplateStamp | undefined {
  const s = catalog.parseStamp(comment);
  if (s?.kind !== 'template') return undefined;
  const { kind: _, ...stamp } = s;
  return stamp;
}

const rand6 = () => Array.from(randomBytes(6), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

/** Returns the project's template, building it on first use. */
export async function ensureTemplate(e: EngineContext): Promise<string> {
  const name = templateName(e.config.project, e.config.source);
  if (await usableTemplate(e, name)) return name;
  return withTemplateLock(e.registry, name, async () => {
    if (!(await usableTemplate(e, name))) await rebuild(e, name);
    return name;
  });
}

/**
 * Is there a template to clone? With [mask] rules, one masked with other rules (or built before them, unmasked) is
 * not: it is rebuilt, so that no branch is cloned from data the rules now mask (decision 465). Same one statement.
 */
async function usableTemplate(e: EngineContext, name: string): Promise<boolean> {
  const info = await catalog.databaseInfo(e.registry, name);
  if (info.exists && info.stamp?.kind !== 'template') throw foreignTemplate(name, e.config.file);
  if (!info.exists || info.stamp?.kind !== 'template') return false;
  const want = rulesDigest(e.config.mask);
  // An empty template (no source) has nothing to mask.
  return want === null || info.stamp.source === null || (info.stamp.mask ?? null) === want;
}

export interface RefreshResult {
  template: string;
  source: string | null;
  method: TemplateStamp['method'];
  /** Owners and GRANTs of the source's objects kept, or dropped (a dump/restore the admin role lacked the rights for). */
  privileges: TemplateStamp['privileges'] | null;
  fingerprint: string | null;
  /**
   * The source is pgx's copy of another database (`pgx source import`): the template was refreshed from that copy,
   * not from the origin, whose later changes only `pgx source sync` brings in. Null: the source is itself the
   * database (or there is none).
   */
  copy_of: { origin: string; imported_at: string } | null;
  elapsed_ms: number;
}

/** `pgx template refresh`: rebuild the snapshot from the source and swap it in. */
export async function refreshTemplate(
  e: EngineContext,
  progress: (msg: string) => void = () => {},
): Promise<RefreshResult> {
  const t0 = performance.now();
  const name = templateName(e.config.project, e.config.source);
  return withTemplateLock(e.registry, name, async () => {
    await templateExists(e, name); // refuses a foreign database under the name before any work
    const rec = e.config.source ? await findSource(e.registry, e.config.source) : undefined;
    const copyOf = rec ? { origin: rec.origin, imported_at: new Date(rec.imported_at).toISOString() } : null;
    const what = e.config.source
      ? `"${e.config.source}"${copyOf ? ` (pgx's copy of ${copyOf.origin})` : ''}`
      : 'an empty database';
    progress(`building a new template from ${what} …`);
    const stamp = await rebuild(e, name, progress);
    progress(`template ${name} refreshed (${stamp.method})`);
    if (stamp.privileges === 'dropped') {
      progress(
        `the source was busy, and the role in [server] url may not take on its objects' owner roles: the template's ` +
          `objects are owned by that role and carry no GRANTs (a refresh while nobody is connected to the source keeps them)`,
      );
    }
    return {
      template: name,
      source: stamp.source,
      method: stamp.method,
      privileges: stamp.privileges ?? null,
      fingerprint: stamp.fingerprint,
      copy_of: copyOf,
      elapsed_ms: Math.round(performance.now() - t0),
    };
  });
}

/** Is there a template under the name? A database there without a template stamp is refused, never replaced. */
async function templateExists(e: EngineContext, name: string): Promise<boolean> {
  const info = await catalog.databaseInfo(e.registry, name);
  if (info.exists && info.stamp?.kind !== 'template') throw foreignTemplate(name, e.config.file);
  return info.exists;
}

/** Under the template's lock: clear what killed builds left, build into a new name, swap it in. */
async function rebuild(
  e: EngineContext,
  name: string,
  progress: (msg: string) => void = () => {},
): Promise<TemplateStamp> {
  await dropLeftovers(e, name);
  const into = `${name}_b${rand6()}`; // ≤ 41 + 8 bytes: well under the 63-byte identifier limit
  const stamp = await build(e, name, into, progress);
  await swapIn(e, into, name);
  await forgetBuild(e.registry, into);
  return stamp;
}

/**
 * Renames the finished build into place. A current template is renamed aside first and dropped afterwards; if the
 * build cannot take the name, the current one is renamed back, so the project never loses its template.
 */
async function swapIn(e: EngineContext, into: string, name: string): Promise<void> {
  const reg = e.registry;
  let aside: string | undefined;
  try {
    if (await templateExists(e, name)) {
      const asideName = `${name}_o${rand6()}`; // unique: an earlier crashed refresh's aside never blocks this one
      await catalog.renameDatabase(reg, name, asideName);
      aside = asideName;
    }
    await catalog.renameDatabase(reg, into, name);
  } catch (err) {
    if (aside) await catalog.renameDatabase(reg, aside, name).catch(() => {});
    await discardBuild(e, into);
    throw err;
  }
  // Best effort: a leftover aside is dropped by the next build. One that a subagent's branch keeps as its fork point
  // (fork-point.ts) stays until no branch does.
  if (aside && !(await keptAsForkPoint(e, aside))) await dropIfOurs(e, aside).catch(() => false);
}

/** A template build a subagent's branch was cloned from, and may still be merged from (its oid is its fork point). */
async function keptAsForkPoint(e: EngineContext, name: string): Promise<boolean> {
  const oid = await catalog.databaseOid(e.registry, name);
  return oid !== undefined && (await keptBuildOids(e.registry)).has(oid);
}

/** A stamp this project's builds write: building, or a finished template of this project. */
function isOurBuild(stamp: Stamp | undefined, project: string): boolean {
  return (stamp?.kind === 'building' || stamp?.kind === 'template') && stamp.project === project;
}

/** Drops `name` only if its stamp says it is one of this project's builds (or `unstampedToo` and it has no comment). */
async function dropIfOurs(e: EngineContext, name: string, unstampedToo = false): Promise<boolean> {
  const info = await catalog.databaseInfo(e.registry, name);
  if (!info.exists) return false;
  if (!isOurBuild(info.stamp, e.config.project) && !(unstampedToo && info.comment === null)) return false;
  await catalog.dropDatabase(e.registry, name, { isTemplate: info.isTemplate });
  return true;
}

/** A failed build: dropped (recorded, so even unstamped it is ours) and forgotten. Best effort: else the next build does it. */
async function discardBuild(e: EngineContext, into: string): Promise<void> {
  try {
    await dropIfOurs(e, into, true);
    await forgetBuild(e.registry, into);
  } catch {
    // the record stays, and with it the next build's duty to drop `into`
  }
}

/**
 * Under the template's lock no build of it is running, so what a killed build or refresh left is dropped: recorded
 * builds (stamped, or still unstamped: killed between its creation and the stamp) and this project's stamped
 * `<name>_b…`/`<name>_o…`. Best effort: a leftover that cannot be dropped never blocks the build (its name is unique).
 */
async function dropLeftovers(e: EngineContext, name: string): Promise<void> {
  const reg = e.registry;
  for (const build of await buildsOf(reg, name)) {
    const dropped = await dropIfOurs(e, build, true).catch(() => undefined);
    if (dropped !== undefined) await forgetBuild(reg, build);
  }
  const aside = new RegExp(`^${name}_[bo][a-z0-9]{6}$`);
  for (const db of await catalog.databasesNamedLike(reg, `${name}_`)) {
    if (aside.test(db) && !(await keptAsForkPoint(e, db))) await dropIfOurs(e, db).catch(() => false);
  }
}

function foreignTemplate(name: string, file: string | undefined): PgxError {
  return new PgxError(
    'NOT_PGX_DATABASE',
    `A database named "${name}" exists but was not made by pgx.`,
    `Rename or drop that database yourself, or change [project] name in ${file ?? '.pgx.toml'}.`,
  );
}

/** Builds the template for `name` into `into`: recorded, created, stamped as building, filled, finished. */
async function build(
  e: EngineContext,
  name: string,
  into: string,
  progress: (msg: string) => void,
): Promise<TemplateStamp> {
  const { registry: reg, config } = e;
  const source = config.source ?? null;
  if (source && !(await catalog.databaseInfo(reg, source)).exists) {
    // The usual way here is a purged local server (`pgx local down --purge`) under a .pgx.toml that still names the
    // source: the fix is the source (import or create it) or the config, never a template refresh.
    const where = config.serverUrl
      ? 'on the server'
      : "on pgx's local server (which starts empty again after `pgx local down --purge`)";
    const create = shellQuote(catalog.fixStatement.createDatabase(source));
    const createEmpty = config.serverUrl ? `psql -c ${create}` : `\`pgx local sql -c ${create}\``;
    throw new PgxError(
      'TEMPLATE_FAILED',
      `The source database "${source}" ([project] source in ${config.file ?? '.pgx.toml'}) does not exist ${where}.`,
      `Re-create it: \`pgx source import --from <postgres://… | dump file>\` loads your database as "${source}" ` +
        `(or create it empty: ${createEmpty}); ` +
        `or change [project] source in ${config.file ?? '.pgx.toml'} (remove it to start branches empty; \`pgx ` +
        `init --force\` rewrites the file). Until then subagents' commands are refused; \`pgx agent uninstall ` +
        `claude\` removes pgx's hooks.`,
    );
  }
  const imported = source ? await importedMask(e, source) : null;
  await recordBuild(reg, into, name, config.project);
  try {
    const copied = source
      ? await copyOrDump(e, source, into)
      : { method: await createBuilding(e, into, 'template0', 'empty') };
    // The user's own database with [mask] rules: the build is the masked intermediate copy, scanned and masked while
    // it is still stamped as building, so a template never holds an unmasked value (decision 460).
    let mask = imported?.mask ?? null;
    if (source && !imported && config.mask.length) {
      const { scanAndMask } = await import('../mask/apply.js');
      mask = (
        await scanAndMask(
          { admin: e.admin, registry: reg, gate: e.gate, project: config.project, file: config.file ?? '.pgx.toml' },
          into,
          config.mask,
          progress,
        )
      ).digest;
    }
    const stamp: TemplateStamp = {
      project: config.project,
      source,
      fingerprint: source ? await schemaFingerprint(e, source) : null,
      refreshed_at: new Date().toISOString(),
      ...copied,
      ...(mask ? { mask } : {}),
    };
    await catalog.writeStamp(reg, into, { kind: 'template', ...stamp });
    await catalog.freezeAsTemplate(reg, into);
    return stamp;
  } catch (err) {
    await discardBuild(e, into);
    throw err;
  }
}

/**
 * A source pgx imported was masked at its import or sync (source-import.ts): its stamp says with which rules. Null:
 * the source is the user's own database. Refused when the rules have changed since: the copy may hold a column the
 * new rules mask, unmasked, and only a sync re-imports it from the origin to mask it.
 */
async function importedMask(e: EngineContext, source: string): Promise<{ mask: string | null } | null> {
  const stamp = (await catalog.databaseInfo(e.registry, source)).stamp;
  if (stamp?.kind !== 'source') return null;
  const digest = rulesDigest(e.config.mask);
  if (digest !== null && stamp.mask !== digest) {
    throw new PgxError(
      'REFUSED',
      `The [mask] rules in ${e.config.file ?? '.pgx.toml'} changed since "${source}" was imported${stamp.mask ? '' : ' (it was copied without masking)'}: ` +
        `a template of it could hold values the rules now mask.`,
      'Run `pgx source sync`: it copies the origin again and masks it with the current rules, then builds the template.',
    );
  }
  return { mask: stamp.mask ?? null };
}

/**
 * Create the build's database, then the building stamp at once. A copy of the source is budgeted (disk-budget.ts:
 * PostgreSQL 15+'s default strategy, WAL_LOG); template0 for an empty build or a restore's target is a few MB.
 */
async function createBuilding<M extends TemplateStamp['method']>(
  e: EngineContext,
  into: string,
  from: string,
  method: M,
): Promise<M> {
  const create = async () => {
    await catalog.createDatabase(e.registry, into, { template: from });
    await catalog.writeStamp(e.registry, into, {
      kind: 'building',
      project: e.config.project,
      started_at: new Date().toISOString(),
    });
  };
  if (from === 'template0') await create();
  else
    await withRoomFor(
      e,
      {
        from,
        way: e.registry.serverVersionNum >= 150000 ? 'wal-log' : 'file-copy',
        what: `the template's build "${into}" (a copy of "${from}")`,
      },
      create,
    );
  return method;
}

/** A TEMPLATE copy when nobody is connected to the source; else a copy by copy-method.ts (a TEMPLATE copy would wait, then fail 55006). */
async function copyOrDump(
  e: EngineContext,
  source: string,
  into: string,
): Promise<Pick<TemplateStamp, 'method' | 'privileges'>> {
  if ((await catalog.countBackends(e.registry, source)) === 0) {
    try {
      return { method: await createBuilding(e, into, source, 'template-copy'), privileges: 'kept' };
    } catch (err) {
      if (catalog.sqlstateOf(err) !== catalog.SQLSTATE.OBJECT_IN_USE) throw err;
    }
  }
  // on failure build() drops `into`; a refusal of the disk budget comes before it exists
  const copy = await withRoomFor(
    e,
    { from: source, way: 'dump-restore', what: `the template's build "${into}" (a copy of the busy "${source}")` },
    async () => {
      await createBuilding(e, into, 'template0', 'dump-restore');
      const { copyDatabase } = await import('./copy-method.js'); // on demand: dist/copy.cjs in the hot-path bundles
      return copyDatabase(e, source, into);
    },
  );
  return { method: copy.method, privileges: copy.privileges };
}
