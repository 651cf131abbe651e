// Fork points in the registry: which database a branch was cloned from, kept while a merge may need it, and the merge
// recorded (engine/fork-point.ts, engine/merge.ts). A fork point is the frozen copy a fork cloned (`fork_point`), or
// the template build (`base_template`, an oid) a template clone or a pool claim came from.
import { q } from './records.js';
import type { RegistryDb } from './connection.js';

/**
 * Which records keep a fork point: a subagent's branch (the only kind `pgx agent merge` takes) that exists, and has
 * not been merged and stopped since (an active branch that was merged may be merged again, from the same fork point).
 */
const KEEPS = `b.kind = 'subagent' AND NOT (b.merged_at IS NOT NULL AND b.state <> 'active')`;

/** The frozen copy a fork is about to clone, recorded before the clone (NULL: none, e.g. a fallback to the template). */
export async function setForkPoint(db: RegistryDb, name: string, copy: string | null): Promise<void> {
  await q(db, 'UPDATE pgx_branch SET fork_point = $2 WHERE name = $1', [name, copy]);
}

/** The branches that keep this frozen copy (none: gc may drop it). */
export async function branchesKeepingCopy(db: RegistryDb, copy: string): Promise<string[]> {
  const rows = await q<{ name: string }>(
    db,
    `SELECT b.name FROM pgx_branch b WHERE b.fork_point = $1 AND ${KEEPS} ORDER BY b.name`,
    [copy],
  );
  return rows.map((r) => r.name);
}

/** The branches that keep the template build with this oid (a refresh keeps it aside while any does). */
export async function branchesKeepingBuild(db: RegistryDb, oid: string): Promise<string[]> {
  const rows = await q<{ name: string }>(
    db,
    `SELECT b.name FROM pgx_branch b WHERE b.fork_point IS NULL AND b.base_template = $1::oid AND ${KEEPS} ORDER BY b.name`,
    [oid],
  );
  return rows.map((r) => r.name);
}

/** Every template build oid some branch keeps (the refresh's sweep and gc pass these by). */
export async function keptBuildOids(db: RegistryDb): Promise<Set<string>> {
  const rows = await q<{ oid: string }>(
    db,
    `SELECT DISTINCT b.base_template::text AS oid FROM pgx_branch b WHERE b.fork_point IS NULL AND b.base_template IS NOT NULL AND ${KEEPS}`,
  );
  return new Set(rows.map((r) => r.oid));
}

/**
 * `pgx agent merge` applied the branch's changes to `into`. A stopped branch's longer keep for having changed
 * something (keep_changed) ends: its work is in the parent now, so it goes at most its grace from now.
 */
export async function markMerged(db: RegistryDb, name: string, into: string): Promise<void> {
  await q(
    db,
    `UPDATE pgx_branch SET merged_into = $2, merged_at = now(),
            deadline = CASE WHEN state = 'retiring' THEN least(deadline, now() + grace_ms * interval '1 millisecond') ELSE deadline END
      WHERE name = $1`,
    [name, into],
  );
}

/** The doctor's read: how many branches keep each frozen copy ({} on a registry without fork points; nothing is made). */
export async function keptCopiesReadOnly(db: RegistryDb): Promise<Map<string, number>> {
  const [c] = await db.query<{ ok: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('pgx_branch') AND attname = 'merged_at') AS ok`,
  );
  if (!c!.ok) return new Map();
  const rows = await db.query<{ name: string; n: number }>(
    `SELECT b.fork_point AS name, count(*)::int AS n FROM pgx_branch b WHERE b.fork_point IS NOT NULL AND ${KEEPS} GROUP BY 1`,
  );
  return new Map(rows.map((r) => [r.name, r.n]));
}
