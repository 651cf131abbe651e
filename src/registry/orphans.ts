// What the records name, for the doctor's orphan checks (engine/inspect.ts): a stamped database or role that no
// record names is pgx's leftover, or a stranger's copy of its stamp; either way nothing pgx can hand out.
import { STAMP_PREFIX } from '../server/catalog.js';
import type { RegistryDb } from './connection.js';
import { q } from './records.js';

/**
 * Every role a branch or pool-member record names (doctor: a stamped role no record names is left without a branch).
 * Not through q(): doctor changes nothing, so a registry without these columns or tables is the caller's to report.
 */
export async function recordedRoles(db: RegistryDb): Promise<string[]> {
  const rows = await db.query<{ role: string }>(
    `SELECT role FROM pgx_branch WHERE role IS NOT NULL UNION SELECT role FROM pgx_pool WHERE role IS NOT NULL ORDER BY 1`,
  );
  return rows.map((r) => r.role);
}

/**
 * Databases stamped as branches that no record names (a registry that was dropped, a record forgotten, or a copied
 * stamp), apart from creations in flight (`pgx_new_<nonce>` of a record). pgx cannot prove any of them is its own.
 */
export async function orphanDatabases(db: RegistryDb): Promise<string[]> {
  const rows = await q<{ datname: string }>(
    db,
    `SELECT d.datname FROM pg_database d
      WHERE left(shobj_description(d.oid, 'pg_database'), $2) = $1
        AND NOT EXISTS (SELECT 1 FROM pgx_branch b WHERE b.name = d.datname OR 'pgx_new_' || b.nonce = d.datname
                          OR 'pgx_' || substr(b.swap_nonce, 1, 3) || '_' || substr(b.swap_nonce, 5) = d.datname) ORDER BY 1`,
    [STAMP_PREFIX.branch, STAMP_PREFIX.branch.length],
  );
  return rows.map((r) => r.datname);
}
