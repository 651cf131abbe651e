// Fork misses (engine/fork-miss.ts, decision 485): the subagents whose fork of their session's branch could not be made
// in time, one row per subagent. Written by the engine, read by the parent's hook (to say it in pgx's own words: the
// handoff inbox carries only the branch and `at`, decision 451) and by the doctor.
import { q } from './records.js';
import type { RegistryDb } from './connection.js';

/** client-tools: the copy needed a client program that is missing; timeout: still being made; copy-failed: any other. */
export type ForkMissReason = 'client-tools' | 'copy-failed' | 'timeout';

export interface ForkMissRow {
  identity_key: string;
  project: string;
  session_id: string | null;
  agent_id: string | null;
  /** The subagent's branch (made from the template under fallback "template"; else not made yet). */
  branch: string;
  /** The session's branch it could not copy. */
  parent: string;
  reason: ForkMissReason;
  /** A code, never a message: a SQLSTATE, a pgx error code, or the missing program's name. */
  cause: string | null;
  /** Connections on the parent when the copy was given up. */
  backends: number | null;
  /** How long the try that gave up waited for the copy (ms). */
  waited_ms: number | null;
  fallback: 'wait' | 'template';
  /** When this miss began (ISO): the doorbell's `at`. */
  at: string;
  last_at: Date;
  misses: number;
  resolved_at: Date | null;
}

/** Misses older than this go when the next one is written: the doctor looks back a day. */
const KEEP = '7 days';

/**
 * Records a miss (or one more of the same): `first` when this one begins a miss (none recorded for the subagent, or the
 * last one was resolved, or of another parent), which is when the parent's doorbell is rung.
 */
export async function recordForkMiss(
  db: RegistryDb,
  m: Omit<ForkMissRow, 'last_at' | 'misses' | 'resolved_at'>,
): Promise<{ at: string; first: boolean }> {
  await q(db, `DELETE FROM pgx_fork_miss WHERE last_at < now() - interval '${KEEP}'`);
  const anew = `pgx_fork_miss.resolved_at IS NOT NULL OR pgx_fork_miss.parent <> EXCLUDED.parent`;
  const [r] = await q<{ at: string; misses: number }>(
    db,
    `INSERT INTO pgx_fork_miss (identity_key, project, session_id, agent_id, branch, parent, reason, cause, backends, waited_ms, fallback, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (identity_key) DO UPDATE SET
       at = CASE WHEN ${anew} THEN EXCLUDED.at ELSE pgx_fork_miss.at END,
       misses = CASE WHEN ${anew} THEN 1 ELSE pgx_fork_miss.misses + 1 END,
       project = EXCLUDED.project, branch = EXCLUDED.branch, parent = EXCLUDED.parent, reason = EXCLUDED.reason,
       cause = EXCLUDED.cause, backends = EXCLUDED.backends, waited_ms = EXCLUDED.waited_ms, fallback = EXCLUDED.fallback, last_at = now(), resolved_at = NULL
     RETURNING at, misses`,
    [
      m.identity_key,
      m.project,
      m.session_id,
      m.agent_id,
      m.branch,
      m.parent,
      m.reason,
      m.cause,
      m.backends,
      m.waited_ms,
      m.fallback,
      m.at,
    ],
  );
  return { at: r!.at, first: r!.misses === 1 };
}

/** A fork made after all (the session's state, at last): its open miss is resolved. No miss: nothing written. */
export async function resolveForkMiss(db: RegistryDb, identityKey: string): Promise<void> {
  await q(db, `UPDATE pgx_fork_miss SET resolved_at = now() WHERE identity_key = $1 AND resolved_at IS NULL`, [
    identityKey,
  ]);
}

/** The open miss of a subagent, if any (a later try waits no more: the first one waited). */
export async function openForkMiss(db: RegistryDb, identityKey: string): Promise<ForkMissRow | undefined> {
  const [r] = await q<ForkMissRow>(db, `SELECT * FROM pgx_fork_miss WHERE identity_key = $1 AND resolved_at IS NULL`, [
    identityKey,
  ]);
  return r;
}

/** A session's misses (the parent's hook reads them to answer its doorbells). */
export function forkMissesOfSession(db: RegistryDb, project: string, sessionId: string): Promise<ForkMissRow[]> {
  return q<ForkMissRow>(db, `SELECT * FROM pgx_fork_miss WHERE project = $1 AND session_id = $2`, [project, sessionId]);
}

/** The doctor's read: a project's misses since `sinceMs` ago, newest first; [] when the table was never made. */
export async function forkMissesReadOnly(db: RegistryDb, project: string, sinceMs: number): Promise<ForkMissRow[]> {
  const [t] = await db.query<{ ok: boolean }>(`SELECT to_regclass('pgx_fork_miss') IS NOT NULL AS ok`);
  if (!t!.ok) return [];
  return db.query<ForkMissRow>(
    `SELECT * FROM pgx_fork_miss WHERE project = $1 AND last_at > now() - make_interval(secs => $2::float8 / 1000)
      ORDER BY last_at DESC`,
    [project, sinceMs],
  );
}
