// Stamps: every database pgx creates carries COMMENT ON DATABASE 'pgx:<kind>:…'. Nothing is dropped, renamed or
// altered by pgx without reading the stamp first; a database without one is never touched.
import { PgxError } from '../errors.js';
import type { Db } from '../server/db.js';

export const branchStamp = (identityKey: string) => `pgx:branch:${identityKey}`;
export const TEMPLATE_STAMP_PREFIX = 'pgx:template:';

export interface DatabaseInfo {
  exists: boolean;
  comment: string | null;
  allowConn: boolean;
  isTemplate: boolean;
}

export async function databaseInfo(db: Db, name: string): Promise<DatabaseInfo> {
  const [row] = await db.query<{ comment: string | null; datallowconn: boolean; datistemplate: boolean }>(
    `SELECT shobj_description(oid, 'pg_database') AS comment, datallowconn, datistemplate FROM pg_database WHERE datname = $1`,
    [name],
  );
  if (!row) return { exists: false, comment: null, allowConn: false, isTemplate: false };
  return { exists: true, comment: row.comment, allowConn: row.datallowconn, isTemplate: row.datistemplate };
}

/** Throws unless `name` carries a pgx branch stamp (and, when given, the stamp of this identity). */
export async function assertBranchStamp(db: Db, name: string, identityKey?: string): Promise<DatabaseInfo> {
  const info = await databaseInfo(db, name);
  if (!info.exists) return info;
  const ok = identityKey ? info.comment === branchStamp(identityKey) : !!info.comment?.startsWith('pgx:branch:');
  if (!ok) {
    throw new PgxError(
      'NOT_PGX_DATABASE',
      `Refusing to touch database "${name}": it does not carry ${identityKey ? "this branch's" : 'a'} pgx stamp.`,
      'pgx only drops, renames or alters databases it created. Use psql / dropdb yourself if you really mean it.',
    );
  }
  return info;
}

export async function setComment(db: Db, name: string, stamp: string): Promise<void> {
  await db.query(`COMMENT ON DATABASE ${db.ident(name)} IS ${db.literal(stamp)}`);
}
