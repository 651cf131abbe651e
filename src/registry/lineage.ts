// A branch's lineage in the registry: what it was forked from, what a fork reads of its parent in one round trip,
// and a reset's or adopt's replacement in flight (engine/fork.ts, engine/reset.ts). The swap's nonce is recorded
// before its database exists, as a branch's name is (records.ts).
import { PgxError } from '../lib/errors.js';
import type { RegistryDb } from './connection.js';
import { q, statsMark, type BranchKind, type BranchRecord, type BranchState } from './records.js';

/** The branch's lineage, recorded before its database is made: forked from `parent` (null: the template). */
export async function setLineage(db: RegistryDb, name: string, parent: string | null): Promise<BranchRecord> {
  const [row] = await q<BranchRecord>(
    db,
    `UPDATE pgx_branch SET parent = $2, forked_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END WHERE ` +
      `name = $1 RETURNING *`,
    [name, parent],
  );
  if (!row)
    throw new PgxError(
      'BRANCH_FAILED',
      `The registry record of "${name}" disappeared while the branch was being made.`,
      'Retry.',
    );
  return row;
}

/** A reset's replacement: its nonce recorded before pgx_new_<nonce> exists (null: none in flight). */
export async function setSwapNonce(db: RegistryDb, name: string, swap: string | null): Promise<BranchRecord> {
  const [row] = await q<BranchRecord>(db, `UPDATE pgx_branch SET swap_nonce = $2 WHERE name = $1 RETURNING *`, [
    name,
    swap,
  ]);
  if (!row)
    throw new PgxError('BRANCH_FAILED', `The registry record of "${name}" disappeared during the reset.`, 'Retry.');
  return row;
}

/** The reset's leftovers are gone: nothing in flight (a statement of its own, so a test can stop right before it). */
export async function clearSwap(db: RegistryDb, name: string): Promise<BranchRecord> {
  const [row] = await q<BranchRecord>(db, `UPDATE pgx_branch SET swap_nonce = NULL WHERE name = $1 RETURNING *`, [
    name,
  ]);
  if (!row)
    throw new PgxError('BRANCH_FAILED', `The registry record of "${name}" disappeared during the reset.`, 'Retry.');
  return row;
}

/**
 * The swap's record half (inside the swap's transaction): the branch's nonce becomes the replacement's, and
 * swap_nonce the old one's (its database is now pgx_old_<old nonce>, dropped next). The baseline is taken as in
 * markActive; `forkedAt`: the lineage's time moves (a reset to the parent forks it again).
 */
export async function commitSwap(
  db: RegistryDb,
  name: string,
  newNonce: string,
  oldNonce: string,
  baseline: { template: string | null },
  forkedAt: boolean,
): Promise<BranchRecord> {
  const [row] = await q<BranchRecord>(
    db,
    `UPDATE pgx_branch SET nonce = $2, swap_nonce = $3,
            base_mark = (SELECT ${statsMark(db, 'd')} FROM pg_database d WHERE d.datname = $1), base_template = $4::oid,
            forked_at = CASE WHEN $5 THEN now() ELSE forked_at END, last_seen_at = now(),
            -- its contents are new: the summary of what it had changed is gone, and so is a retiring branch's longer
            -- keep for having changed something (keep_changed): at most its grace from now
            changes = NULL,
            -- and so is its fork point (what it was cloned from) and any merge of what it had
            fork_point = NULL, merged_into = NULL, merged_at = NULL,
            deadline = CASE WHEN state = 'active' THEN now() + idle_ttl_ms * interval '1 millisecond'
                            ELSE least(deadline, now() + grace_ms * interval '1 millisecond') END
      WHERE name = $1 RETURNING *`,
    [name, newNonce, oldNonce, baseline.template, forkedAt],
  );
  if (!row)
    throw new PgxError('BRANCH_FAILED', `The registry record of "${name}" disappeared during the reset.`, 'Retry.');
  return row;
}

/** What a fork needs to know of its parent, in one round trip (engine/fork.ts). */
export interface ForkParent {
  name: string;
  identity_key: string;
  nonce: string | null;
  state: BranchState;
  kind: BranchKind;
  parent: string | null;
  base_mark: string | null;
  base_template: string | null;
  /** pg_database: does it exist, and its comment (its stamp). */
  db_exists: boolean;
  comment: string | null;
  /** Sessions on it right now (pg_stat_activity). */
  backends: number;
  /** Its statistics mark now (statsMark). */
  mark: string | null;
  /** The oid of the template build the project's template name holds now. */
  template_oid: string | null;
  track_counts: boolean;
}

/** The parent's record, its database's stamp, its backends and statistics mark, and the current template build. */
export async function forkParent(
  db: RegistryDb,
  where: { identityKey: string } | { name: string },
): Promise<ForkParent | undefined> {
  const [row] = await q<ForkParent>(
    db,
    `SELECT b.name, b.identity_key, b.nonce, b.state, b.kind, b.parent, b.base_mark, b.base_template::text,
            (d.oid IS NOT NULL) AS db_exists, shobj_description(d.oid, 'pg_database') AS comment,
            (SELECT count(*) FROM pg_stat_activity a WHERE a.datid = d.oid AND a.pid <> pg_backend_pid())::int AS backends,
            ${statsMark(db, 'd')} AS mark,
            (SELECT t.oid::text FROM pg_database t WHERE t.datname = b.template) AS template_oid,
            current_setting('track_counts')::bool AS track_counts
       FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name
      WHERE ${'identityKey' in where ? 'b.identity_key' : 'b.name'} = $1`,
    ['identityKey' in where ? where.identityKey : where.name],
  );
  return row;
}
