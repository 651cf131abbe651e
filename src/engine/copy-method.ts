// How pgx copies a database it cannot clone by template (a busy parent's frozen copy, a reset from a connected parent,
// a template built from a busy source, an import): `pg_dump | psql` where a pg_dump of at least the server's major is
// on the machine and is the faster way for this database, else the Node copy (src/copy/: Node and the server alone).
// The choice is logged (~/.pgx/agent/copies.log), recorded by the caller (a frozen copy's `method`, a template's
// stamp) and returned for `--json` (decision 480).
import { appendFileSync, chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PgxError } from '../lib/errors.js';
import type { ConnParams } from '../server/conn-params.js';
import { clientToolMajor, clientToolPath } from '../server/client-tools.js';
import { connect } from '../server/db.js';
import { databaseShape } from '../server/copy-catalog.js';
import type { EngineContext } from './context.js';
import { copyByDump } from './dump-restore.js';

export type CopyMethod = 'dump-restore' | 'node-copy';

export interface CopyChoice {
  method: CopyMethod;
  /** Why, in a few words: for the log, `--json` and the doctor. */
  why: string;
  /** The choice read the source's size over a session of its own (a frozen copy's signature counts it). */
  probed?: boolean;
}

export interface DatabaseCopy extends CopyChoice {
  privileges: 'kept' | 'dropped';
  /** Where the copy is less faithful than pg_dump's (the Node copy says so: decision 481). */
  warnings: string[];
  elapsed_ms: number;
  /** Sessions the copy opened on the source (a frozen copy's signature allows for exactly these). */
  sourceSessions: number;
}

/**
 * The rule (measured: decision 480). The Node copy pays a fixed cost pg_dump does not (reading both catalogs through
 * the schema library, ~1–3 s, superlinear in objects: 45 s of planning at 3,000 tables), and is as fast or faster on
 * data (binary COPY with FREEZE, tables in parallel). So pg_dump, where it can copy this server, for a database under
 * NODE_FROM_BYTES or over NODE_MAX_RELATIONS relations (tables, partitions, views, matviews, sequences); the Node
 * copy otherwise.
 */
export const NODE_FROM_BYTES = 64 * 1024 * 1024;
export const NODE_MAX_RELATIONS = 1500;

/** pg_dump and psql that can copy a server of `serverMajor`, or why not. */
export function dumpTools(home: string, serverMajor: number): { pgDump: string; psql: string } | { missing: string } {
  const pgDump = clientToolPath('pg_dump', home);
  const psql = clientToolPath('psql', home);
  if (!pgDump || !psql) return { missing: `no ${pgDump ? 'psql' : 'pg_dump'} on this machine` };
  const major = clientToolMajor(pgDump);
  if (major === undefined) return { missing: `${pgDump} --version is unreadable` };
  if (major < serverMajor) return { missing: `pg_dump ${major} is older than the server (${serverMajor})` };
  return { pgDump, psql };
}

/**
 * PGX_COPY_METHOD=node|dump forces a method (tests, benches; `dump` without usable tools is refused); else the rule.
 * `source` is connected to for its size and relation count only when pg_dump could be used.
 */
export async function chooseCopyMethod(home: string, source: ConnParams, serverMajor: number): Promise<CopyChoice> {
  const forced = process.env.PGX_COPY_METHOD;
  const tools = dumpTools(home, serverMajor);
  if (forced === 'node') return { method: 'node-copy', why: 'PGX_COPY_METHOD=node' };
  if (forced === 'dump') {
    if ('missing' in tools)
      throw new PgxError(
        'USAGE',
        `PGX_COPY_METHOD=dump, but ${tools.missing}.`,
        'Unset PGX_COPY_METHOD, or install them.',
      );
    return { method: 'dump-restore', why: 'PGX_COPY_METHOD=dump' };
  }
  if ('missing' in tools) return { method: 'node-copy', why: tools.missing };
  const db = await connect({ ...source, statementTimeoutMs: undefined });
  try {
    const { bytes, relations } = await databaseShape(db);
    const size = `${Math.round(bytes / 1048576)} MB, ${relations} relations`;
    if (relations > NODE_MAX_RELATIONS || bytes < NODE_FROM_BYTES)
      return { method: 'dump-restore', why: `pg_dump is faster for ${size}`, probed: true };
    return { method: 'node-copy', why: `the Node copy is faster for ${size}`, probed: true };
  } finally {
    await db.close();
  }
}

/**
 * Copies database `source` into the EMPTY database `into` on the engine's server, by the chosen method; logged. On
 * failure the caller drops `into` (it is unstamped, or stamped as unfinished: never taken for a finished copy).
 */
export async function copyDatabase(
  e: Pick<EngineContext, 'admin' | 'config' | 'gate'> & { registry?: { serverVersionNum: number } },
  source: string,
  into: string,
  o: { progress?: (msg: string) => void } = {},
): Promise<DatabaseCopy> {
  const t0 = performance.now();
  const from = { ...e.admin, database: source };
  const major = Math.floor((e.registry?.serverVersionNum || (await serverVersionAt(e.admin))) / 10000);
  const choice = await chooseCopyMethod(e.config.home, from, major);
  let privileges: 'kept' | 'dropped';
  let warnings: string[] = [];
  let sessions = choice.probed ? 1 : 0;
  try {
    if (choice.method === 'dump-restore') {
      privileges = await copyByDump(e, source, into);
      sessions += privileges === 'kept' ? 1 : 2; // a pg_dump each
    } else {
      const { nodeCopy } = await import('../copy/node-copy.js');
      const r = await nodeCopy(from, { ...e.admin, database: into }, { gate: e.gate, progress: o.progress });
      privileges = r.privileges;
      warnings = r.warnings;
      sessions += r.source_sessions;
    }
  } catch (err) {
    const { method, why } = choice;
    logCopy(e.config.home, {
      from: source,
      into,
      method,
      why,
      ok: false,
      elapsed_ms: ms(t0),
      error: (err as Error).message,
    });
    throw err;
  }
  const { method, why } = choice;
  const done = { method, why, privileges, warnings, elapsed_ms: ms(t0), sourceSessions: sessions };
  logCopy(e.config.home, {
    from: source,
    into,
    method,
    why,
    privileges,
    warnings,
    elapsed_ms: done.elapsed_ms,
    ok: true,
  });
  return done;
}

const versions = new Map<string, number>();

/** The server's version number (asked once per server and process). */
export async function serverVersionAt(p: ConnParams): Promise<number> {
  const key = `${p.host}:${p.port}`;
  if (!versions.has(key)) {
    const db = await connect({ ...p, statementTimeoutMs: undefined });
    versions.set(key, db.serverVersionNum);
    await db.close();
  }
  return versions.get(key)!;
}

/** One JSON line per copy in ~/.pgx/agent/copies.log (0600): database names, method, why, outcome; never a URL. */
export function logCopy(home: string, line: Record<string, unknown>): void {
  try {
    const dir = join(home, 'agent');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, 'copies.log');
    appendFileSync(file, JSON.stringify({ time: new Date().toISOString(), ...line }) + '\n', { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // a log that can't be written never fails a copy
  }
}

const ms = (t0: number) => Math.round(performance.now() - t0);
