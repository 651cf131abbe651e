// The template: a frozen snapshot of the project's source database (or an empty one when there is no source),
// with datallowconn = false so that nobody's open session can make a clone fail with 55006. Branches are cloned
// from it, never from the source; the source itself is only ever read.
import { createHash, randomBytes } from 'node:crypto';
import { PgxError } from '../errors.js';
import type { Db } from '../server/db.js';
import { dumpRestore } from './dump-restore.js';
import { schemaFingerprint } from './fingerprint.js';
import { withAdvisoryLock } from '../registry.js';
import { databaseInfo, setComment, TEMPLATE_STAMP_PREFIX } from './stamp.js';
import type { Engine } from './context.js';

export interface TemplateStamp {
  project: string;
  source: string | null;
  fingerprint: string | null;
  refreshed_at: string;
  method: 'empty' | 'template-copy' | 'dump-restore';
}

export function templateName(project: string, source: string | undefined): string {
  const slug = project.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 24) || 'project';
  const h = createHash('sha256').update(JSON.stringify([project, source ?? null])).digest('hex').slice(0, 8);
  return `pgx_tpl_${slug}_${h}`;
}

export function parseTemplateStamp(comment: string | null): TemplateStamp | undefined {
  if (!comment?.startsWith(TEMPLATE_STAMP_PREFIX)) return undefined;
  try {
    return JSON.parse(comment.slice(TEMPLATE_STAMP_PREFIX.length)) as TemplateStamp;
  } catch {
    return undefined;
  }
}

/**
 * Crash safety: a template is never built under its final name. It is built into a unique `<name>_b<6>`, stamped
 * `pgx:template-building:{…}` right after its CREATE DATABASE (before any copy), finished (final stamp, no
 * connections, IS_TEMPLATE) and only then renamed into place. A process killed mid-build therefore leaves a
 * building-stamped leftover under a name nobody else uses, never an unstamped database under the template's name
 * (which every later ensure would refuse as "not made by pgx", forever). Leftovers are dropped, stamp-checked, by
 * the next build under the template's advisory lock; an unstamped database is never touched.
 */
export const TEMPLATE_BUILDING_PREFIX = 'pgx:template-building:';

const rand6 = () => Array.from(randomBytes(6), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

/** Returns the project's template, making it on first use. */
export async function ensureTemplate(e: Engine): Promise<string> {
  const name = templateName(e.config.project, e.config.source);
  const info = await databaseInfo(e.db, name);
  if (info.exists) {
    if (!parseTemplateStamp(info.comment)) throw foreignTemplate(name);
    return name;
  }
  return withAdvisoryLock(e.db, sha(name), async () => {
    const again = await databaseInfo(e.db, name);
    if (again.exists) {
      if (!parseTemplateStamp(again.comment)) throw foreignTemplate(name);
      return name;
    }
    await dropLeftovers(e, name);
    const built = await buildTemplate(e, name);
    await renameOrDrop(e, built, name);
    return name;
  });
}

/** `pgx template refresh`: rebuild the snapshot from the source and swap it in. */
export async function refreshTemplate(e: Engine, progress: (msg: string) => void = () => {}): Promise<{ template: string; source: string | null; method: string; fingerprint: string | null; elapsed_ms: number }> {
  const t0 = performance.now();
  const name = templateName(e.config.project, e.config.source);
  return withAdvisoryLock(e.db, sha(name), async () => {
    const before = await databaseInfo(e.db, name);
    if (before.exists && !parseTemplateStamp(before.comment)) throw foreignTemplate(name);
    await dropLeftovers(e, name);
    progress(`building a new template from ${e.config.source ? `"${e.config.source}"` : 'an empty database'} …`);
    const built = await buildTemplate(e, name);
    let old: string | undefined;
    const current = await databaseInfo(e.db, name);
    if (current.exists) {
      if (!parseTemplateStamp(current.comment)) {
        await dropOurs(e, built.into);
        throw foreignTemplate(name);
      }
      // A unique name: a leftover `_o` of an earlier crashed refresh can never block this one.
      old = `${name}_o${rand6()}`;
      try {
        await e.db.query(`ALTER DATABASE ${e.db.ident(name)} RENAME TO ${e.db.ident(old)}`);
      } catch (err) {
        await dropOurs(e, built.into).catch(() => false); // the current template stays as it was
        throw err;
      }
    }
    try {
      await renameOrDrop(e, built, name);
    } catch (err) {
      // Put the old template back rather than leave the project without one until the next build.
      if (old) await e.db.query(`ALTER DATABASE ${e.db.ident(old)} RENAME TO ${e.db.ident(name)}`).catch(() => {});
      throw err;
    }
    if (old) await dropTemplateDb(e.db, old);
    progress(`template ${name} refreshed (${built.stamp.method})`);
    return { template: name, source: built.stamp.source, method: built.stamp.method, fingerprint: built.stamp.fingerprint, elapsed_ms: Math.round(performance.now() - t0) };
  });
}

async function dropTemplateDb(db: Db, name: string): Promise<void> {
  const info = await databaseInfo(db, name);
  if (!info.exists) return;
  if (!parseTemplateStamp(info.comment)) throw foreignTemplate(name);
  await db.query(`ALTER DATABASE ${db.ident(name)} WITH IS_TEMPLATE false`);
  await db.query(`DROP DATABASE ${db.ident(name)}`);
}

/** A database of this project's template builds: a building stamp or a finished template stamp of this project. */
function isOurBuild(comment: string | null, project: string): boolean {
  if (comment?.startsWith(TEMPLATE_BUILDING_PREFIX)) {
    try {
      return (JSON.parse(comment.slice(TEMPLATE_BUILDING_PREFIX.length)) as { project?: unknown }).project === project;
    } catch {
      return false;
    }
  }
  return parseTemplateStamp(comment)?.project === project;
}

/** Drops `name` only if its stamp says it is one of this project's template builds; anything else is left alone. */
async function dropOurs(e: Engine, name: string): Promise<boolean> {
  const { db } = e;
  const info = await databaseInfo(db, name);
  if (!info.exists || !isOurBuild(info.comment, e.config.project)) return false;
  if (info.isTemplate) await db.query(`ALTER DATABASE ${db.ident(name)} WITH IS_TEMPLATE false`);
  await db.query(`DROP DATABASE ${db.ident(name)}`);
  return true;
}

/**
 * Under the template's advisory lock no build of it is running, so any `<name>_b…`/`<name>_o…` (and the fixed
 * `<name>_n`/`<name>_o` of older pgx versions) carrying this project's building or template stamp is what a killed
 * build or refresh left behind. Best effort: a leftover that cannot be dropped now never blocks the build, whose
 * name is unique.
 */
async function dropLeftovers(e: Engine, name: string): Promise<void> {
  const rows = await e.db.query<{ datname: string }>('SELECT datname FROM pg_database WHERE left(datname, $2) = $1', [`${name}_`, name.length + 1]);
  const pattern = new RegExp(`^${name}_(?:[bo][a-z0-9]{6}|n|o)$`);
  for (const { datname } of rows) {
    if (pattern.test(datname)) await dropOurs(e, datname).catch(() => false);
  }
}

/** Rename the finished build into place; if that fails (a database took the name meanwhile), drop the build. */
async function renameOrDrop(e: Engine, built: { into: string }, name: string): Promise<void> {
  try {
    await e.db.query(`ALTER DATABASE ${e.db.ident(built.into)} RENAME TO ${e.db.ident(name)}`);
  } catch (err) {
    await dropOurs(e, built.into).catch(() => false);
    throw err;
  }
}

function foreignTemplate(name: string): PgxError {
  return new PgxError('NOT_PGX_DATABASE', `A database named "${name}" exists but was not made by pgx.`, 'Rename or drop that database yourself, or change [project] name in .pgx.toml.');
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** CREATE DATABASE, then the building stamp at once: from here on a crash leaves a database pgx recognises. */
async function createBuilding(e: Engine, into: string, from: string): Promise<void> {
  const { db } = e;
  await db.query(`CREATE DATABASE ${db.ident(into)} TEMPLATE ${db.ident(from)}`);
  await setComment(db, into, TEMPLATE_BUILDING_PREFIX + JSON.stringify({ project: e.config.project, started_at: new Date().toISOString() }));
}

/** Builds the template for `name` under a fresh unique name, finished and stamped but not yet renamed into place. */
async function buildTemplate(e: Engine, name: string): Promise<{ into: string; stamp: TemplateStamp }> {
  const { db, config } = e;
  const into = `${name}_b${rand6()}`; // ≤ 41 + 8 bytes: well under the 63-byte identifier limit
  const source = config.source ?? null;
  let method: TemplateStamp['method'] = 'empty';
  if (source) {
    const src = await databaseInfo(db, source);
    if (!src.exists) {
      throw new PgxError('TEMPLATE_FAILED', `The source database "${source}" does not exist on the server.`, `Load your existing database as "${source}" with \`pgx source import --from <postgres://… | dump file>\`, or create it (\`pgx local psql -c 'CREATE DATABASE ${source}'\` on pgx's local server); or fix [project] source in .pgx.toml (remove it to start branches from an empty database).`);
    }
  }
  try {
    if (!source) await createBuilding(e, into, 'template0');
    else method = await copyOrDump(e, source, into);
    const stamp: TemplateStamp = {
      project: config.project,
      source,
      fingerprint: source ? await schemaFingerprint(e, source) : null,
      refreshed_at: new Date().toISOString(),
      method,
    };
    await setComment(db, into, TEMPLATE_STAMP_PREFIX + JSON.stringify(stamp));
    await db.query(`ALTER DATABASE ${db.ident(into)} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
    return { into, stamp };
  } catch (err) {
    await dropOurs(e, into).catch(() => false); // stamp-checked: an unstamped database is never dropped
    throw err;
  }
}

/** A TEMPLATE copy when nobody is connected to the source; dump/restore otherwise (a copy would wait, then fail 55006). */
async function copyOrDump(e: Engine, source: string, into: string): Promise<TemplateStamp['method']> {
  const { db } = e;
  const [busy] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [source]);
  if (busy!.n === 0) {
    try {
      await createBuilding(e, into, source);
      return 'template-copy';
    } catch (err) {
      if ((err as { code?: string }).code !== '55006') throw err;
    }
  }
  await createBuilding(e, into, 'template0');
  await dumpRestore(e, source, into); // on failure buildTemplate drops `into`, stamp-checked
  return 'dump-restore';
}
