// What the records name, for the doctor's orphan checks (engine/inspect.ts): a stamped database or role that no
// record names is pgx's leftover, or a stranger's copy of its stamp; either way nothing pgx can hand out.
import { ROLE_STAMP, STAMP_PREFIX } from '../server/catalog.js';
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

/**
 * Branch roles pgx made (stamped) that no branch or pool-member record names and that own nothing and hold no
 * privilege anywhere (no pg_shdepend row: the frozen copy that kept one after its branch's drop is gone too). gc drops
 * them (engine/roles.ts dropRolesLeftBehind); a role that still owns something is the doctor's to list.
 */
export async function rolesLeftBehind(db: RegistryDb, limit: number): Promise<string[]> {
  const rows = await q<{ rolname: string }>(
    db,
    `SELECT r.rolname FROM pg_roles r
      WHERE shobj_description(r.oid, 'pg_authid') = $1
        AND NOT EXISTS (SELECT 1 FROM pgx_branch b WHERE b.role = r.rolname)
        AND NOT EXISTS (SELECT 1 FROM pgx_pool p WHERE p.role = r.rolname)
        AND NOT EXISTS (SELECT 1 FROM pg_shdepend d WHERE d.refclassid = 'pg_authid'::regclass AND d.refobjid = r.oid)
      ORDER BY 1 LIMIT $2`,
    [ROLE_STAMP, limit],
  );
  return rows.map((r) => r.rolname);
}
