// Imported sources: where each copy came from (never its password), and the copies in flight. The registry is the
// home because only the admin connects to it (a database's comment, the stamp, is readable by every role on the
// server, so the origin's host and user stay out of it).
import { q } from './records.js';
import type { RegistryDb } from './connection.js';
import { sqlstateOf, SQLSTATE } from '../server/sqlstate.js';

export type OriginKind = 'url' | 'env' | 'file';

export interface SourceRecord {
  /** The source's name on this server ([project] source). */
  database: string;
  project: string;
  /** The current copy's nonce: its stamp carries it (catalog.isOwnSourceCopy). */
  nonce: string;
  origin_kind: OriginKind;
  /** The URL without its password, or the dump file's / directory's absolute path. */
  origin: string;
  /** --from-env: the variable's name, and where it was read from (`$VAR` for the environment, else the dotenv file). */
  origin_env: string | null;
  origin_env_file: string | null;
  format: string;
  /** The origin's schema fingerprint when it was copied (null: a dump file's, which pgx cannot read in place). */
  origin_fingerprint: string | null;
  imported_at: Date;
}

export type NewSourceRecord = Omit<SourceRecord, 'imported_at'>;

export async function findSource(db: RegistryDb, database: string): Promise<SourceRecord | undefined> {
  const [row] = await q<SourceRecord>(db, 'SELECT * FROM pgx_source WHERE database = $1', [database]);
  return row;
}

/** The doctor's read: changes nothing, so a registry made before pgx_source existed answers "no record". */
export async function findSourceReadOnly(db: RegistryDb, database: string): Promise<SourceRecord | undefined> {
  try {
    const [row] = await db.query<SourceRecord>('SELECT * FROM pgx_source WHERE database = $1', [database]);
    return row;
  } catch (e) {
    if (sqlstateOf(e) === SQLSTATE.UNDEFINED_TABLE) return undefined;
    throw e;
  }
}

/** The record of the copy now under `database` (in the swap's transaction, with the renames). */
export async function putSource(db: RegistryDb, r: NewSourceRecord): Promise<void> {
  await q(
    db,
    `INSERT INTO pgx_source (database, project, nonce, origin_kind, origin, origin_env, origin_env_file, format, origin_fingerprint, imported_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9, now())
     ON CONFLICT (database) DO UPDATE SET project = EXCLUDED.project, nonce = EXCLUDED.nonce, origin_kind = EXCLUDED.origin_kind,
       origin = EXCLUDED.origin, origin_env = EXCLUDED.origin_env, origin_env_file = EXCLUDED.origin_env_file, format = EXCLUDED.format,
       origin_fingerprint = EXCLUDED.origin_fingerprint, imported_at = now()`,
    [
      r.database,
      r.project,
      r.nonce,
      r.origin_kind,
      r.origin,
      r.origin_env,
      r.origin_env_file,
      r.format,
      r.origin_fingerprint,
    ],
  );
}

export interface CopyRecord {
  name: string;
  database: string;
  project: string;
  nonce: string;
  state: 'new' | 'old';
}

/** Recorded BEFORE the copy's database is created ('new'), or with the swap that sets the old copy aside ('old'). */
export async function recordCopy(db: RegistryDb, c: CopyRecord): Promise<void> {
  await q(db, 'INSERT INTO pgx_source_copy (name, database, project, nonce, state) VALUES ($1,$2,$3,$4,$5)', [
    c.name,
    c.database,
    c.project,
    c.nonce,
    c.state,
  ]);
}

export async function forgetCopy(db: RegistryDb, name: string): Promise<void> {
  await q(db, 'DELETE FROM pgx_source_copy WHERE name = $1', [name]);
}

/** The recorded copies of a source (under its lock: none of them is being made). */
export async function copiesOf(db: RegistryDb, database: string): Promise<CopyRecord[]> {
  return q<CopyRecord>(
    db,
    'SELECT name, database, project, nonce, state FROM pgx_source_copy WHERE database = $1 ORDER BY started_at, name',
    [database],
  );
}

/** The doctor's read of the copies left behind (no schema changes). */
export async function copiesOfReadOnly(db: RegistryDb, database: string): Promise<CopyRecord[]> {
  try {
    return await db.query<CopyRecord>(
      'SELECT name, database, project, nonce, state FROM pgx_source_copy WHERE database = $1 ORDER BY name',
      [database],
    );
  } catch (e) {
    if (sqlstateOf(e) === SQLSTATE.UNDEFINED_TABLE) return [];
    throw e;
  }
}
