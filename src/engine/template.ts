// The template: a frozen snapshot of the project's source database (or an empty one when there is no source),
// with datallowconn = false so that nobody's open session can make a clone fail with 55006. Branches are cloned
// from it, never from the source; the source itself is only ever read.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { libpqEnv } from '../server/libpq-env.js';
import { createHash } from 'node:crypto';
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
    if (again.exists) return name;
    await buildTemplate(e, name);
    return name;
  });
}

/** `pgx template refresh`: rebuild the snapshot from the source and swap it in. */
export async function refreshTemplate(e: Engine, progress: (msg: string) => void = () => {}): Promise<{ template: string; source: string | null; method: string; fingerprint: string | null; elapsed_ms: number }> {
  const t0 = performance.now();
  const name = templateName(e.config.project, e.config.source);
  return withAdvisoryLock(e.db, sha(name), async () => {
    const fresh = `${name}_n`;
    const old = `${name}_o`;
    for (const leftover of [fresh, old]) await dropTemplateDb(e.db, leftover);
    progress(`building a new template from ${e.config.source ? `"${e.config.source}"` : 'an empty database'} …`);
    const stamp = await buildTemplate(e, fresh);
    const current = await databaseInfo(e.db, name);
    if (current.exists) {
      if (!parseTemplateStamp(current.comment)) throw foreignTemplate(name);
      await e.db.query(`ALTER DATABASE ${e.db.ident(name)} RENAME TO ${e.db.ident(old)}`);
    }
    await e.db.query(`ALTER DATABASE ${e.db.ident(fresh)} RENAME TO ${e.db.ident(name)}`);
    if (current.exists) await dropTemplateDb(e.db, old);
    progress(`template ${name} refreshed (${stamp.method})`);
    return { template: name, source: stamp.source, method: stamp.method, fingerprint: stamp.fingerprint, elapsed_ms: Math.round(performance.now() - t0) };
  });
}

async function dropTemplateDb(db: Db, name: string): Promise<void> {
  const info = await databaseInfo(db, name);
  if (!info.exists) return;
  if (!parseTemplateStamp(info.comment)) throw foreignTemplate(name);
  await db.query(`ALTER DATABASE ${db.ident(name)} WITH IS_TEMPLATE false`);
  await db.query(`DROP DATABASE ${db.ident(name)}`);
}

function foreignTemplate(name: string): PgxError {
  return new PgxError('NOT_PGX_DATABASE', `A database named "${name}" exists but was not made by pgx.`, 'Rename or drop that database yourself, or change [project] name in .pgx.toml.');
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

async function buildTemplate(e: Engine, into: string): Promise<TemplateStamp> {
  const { db, config } = e;
  const source = config.source ?? null;
  let method: TemplateStamp['method'] = 'empty';
  if (!source) {
    await db.query(`CREATE DATABASE ${db.ident(into)} TEMPLATE template0`);
  } else {
    const src = await databaseInfo(db, source);
    if (!src.exists) {
      throw new PgxError('TEMPLATE_FAILED', `The source database "${source}" does not exist on the server.`, 'Create it, or fix [project] source in .pgx.toml (remove it to start branches from an empty database).');
    }
    method = await copyOrDump(e, source, into);
  }
  const stamp: TemplateStamp = {
    project: config.project,
    source,
    fingerprint: source ? await schemaFingerprint(e, source) : null,
    refreshed_at: new Date().toISOString(),
    method,
  };
  await setComment(db, into, TEMPLATE_STAMP_PREFIX + JSON.stringify(stamp));
  await db.query(`ALTER DATABASE ${db.ident(into)} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
  return stamp;
}

/** A TEMPLATE copy when nobody is connected to the source; dump/restore otherwise (a copy would wait, then fail 55006). */
async function copyOrDump(e: Engine, source: string, into: string): Promise<TemplateStamp['method']> {
  const { db } = e;
  const [busy] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [source]);
  if (busy!.n === 0) {
    try {
      await db.query(`CREATE DATABASE ${db.ident(into)} TEMPLATE ${db.ident(source)}`);
      return 'template-copy';
    } catch (err) {
      if ((err as { code?: string }).code !== '55006') throw err;
    }
  }
  await db.query(`CREATE DATABASE ${db.ident(into)} TEMPLATE template0`);
  try {
    await dumpRestore(e, source, into);
  } catch (err) {
    await db.query(`DROP DATABASE IF EXISTS ${db.ident(into)}`).catch(() => {});
    throw err;
  }
  return 'dump-restore';
}

function findTool(tool: string): string {
  for (const dir of [process.env.PGX_PG_BINDIR, ...(process.env.PATH ?? '').split(':')]) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new PgxError('TEMPLATE_FAILED', `The source has open connections, so the template needs ${tool}, which is not on PATH.`, `Install the PostgreSQL client tools, or close the connections to the source and run \`pgx template refresh\`.`);
}

/** pg_dump | psql, the password passed in the children's environment only. */
function dumpRestore(e: Engine, source: string, into: string): Promise<void> {
  const env = libpqEnv(process.env, { ...e.admin, database: source });
  const run = (cmd: string, args: string[], stdio: StdioOptions) => spawn(findTool(cmd), args, { env, stdio });
  return new Promise((resolve, reject) => {
    const dump = run('pg_dump', ['--no-owner', '--no-privileges'], ['ignore', 'pipe', 'pipe']);
    const restore = run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', into], ['pipe', 'ignore', 'pipe']);
    dump.stdout!.pipe(restore.stdin!);
    let errText = '';
    dump.stderr!.on('data', (d) => (errText += d));
    restore.stderr!.on('data', (d) => (errText += d));
    const exited = (p: ChildProcess) => new Promise<number | null>((res) => p.on('close', res).on('error', () => res(-1)));
    Promise.all([exited(dump), exited(restore)]).then(([d, r]) => {
      if (d === 0 && r === 0) resolve();
      else reject(new PgxError('TEMPLATE_FAILED', `Copying "${source}" by pg_dump | psql failed: ${errText.trim().split('\n').slice(-3).join(' ')}`, 'Check that pg_dump is at least the server version; `pgx agent doctor` shows both.'));
    });
  });
}
