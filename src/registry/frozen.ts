// Frozen-copy records (engine/freeze.ts): one row per copy of a parent branch that forks clone, written BEFORE its
// database is created (as a branch's creation is), so a maker killed at any step leaves a recorded name that
// provably is pgx's, and the next maker or gc drops it.
import { q } from './records.js';
import type { RegistryDb } from './connection.js';

export type FrozenState = 'making' | 'ready';

export interface FrozenRow {
  name: string;
  project: string;
  /** The branch (database name) it is a copy of. */
  parent: string;
  nonce: string;
  state: FrozenState;
  /** The ticket drawn before its copy began (text: bigint). */
  ticket: string;
  /** The parent's activity signature after the copy, when it proves the copy is the parent's state then; else null. */
  signature: string | null;
  /** How it was copied: 'template-copy' or 'dump-restore'. */
  method: string | null;
  bytes: string | null;
  started_at: Date;
  ready_at: Date | null;
  /** Joined: does the database exist, and its comment (stamp). */
  db_exists: boolean;
  comment: string | null;
}

const SELECT = `SELECT f.name, f.project, f.parent, f.nonce, f.state, f.ticket::text AS ticket, f.signature, f.method, f.bytes::text AS bytes,
                       f.started_at, f.ready_at, (d.oid IS NOT NULL) AS db_exists, shobj_description(d.oid, 'pg_database') AS comment
                  FROM pgx_frozen f LEFT JOIN pg_database d ON d.datname = f.name`;

/**
 * A fork's ticket: drawn when it arrives, before it waits for anything. Sequence values are handed out in real-time
 * order across every process (nextval is not transactional), so `a < b` means a was drawn before b.
 */
export async function drawTicket(db: RegistryDb): Promise<string> {
  const [r] = await q<{ t: string }>(db, `SELECT nextval('pgx_frozen_ticket')::text AS t`);
  return r!.t;
}

/** Record first: the copy's name and the ticket drawn now, before its copy begins. Returns that ticket. */
export async function insertMaking(
  db: RegistryDb,
  f: { name: string; project: string; parent: string; nonce: string },
): Promise<string> {
  const [r] = await q<{ ticket: string }>(
    db,
    `INSERT INTO pgx_frozen (name, project, parent, nonce, state, ticket) VALUES ($1, $2, $3, $4, 'making', ` +
      `nextval('pgx_frozen_ticket')) RETURNING ticket::text AS ticket`,
    [f.name, f.project, f.parent, f.nonce],
  );
  return r!.ticket;
}

export async function markReady(
  db: RegistryDb,
  name: string,
  o: { signature: string | null; method: string; bytes: number },
): Promise<void> {
  await q(
    db,
    `UPDATE pgx_frozen SET state = 'ready', signature = $2, method = $3, bytes = $4, ready_at = now() WHERE name = $1`,
    [name, o.signature, o.method, o.bytes],
  );
}

/** The parent's copies, newest first (ready and in the making). */
export async function copiesOf(db: RegistryDb, parent: string): Promise<FrozenRow[]> {
  return q<FrozenRow>(db, `${SELECT} WHERE f.parent = $1 ORDER BY f.ticket DESC`, [parent]);
}

/** Every frozen copy on the server, or one project's (ls --all, doctor, gc). */
export async function listFrozen(db: RegistryDb, project?: string): Promise<FrozenRow[]> {
  return project === undefined
    ? q<FrozenRow>(db, `${SELECT} ORDER BY f.parent, f.ticket DESC`)
    : q<FrozenRow>(db, `${SELECT} WHERE f.project = $1 ORDER BY f.parent, f.ticket DESC`, [project]);
}

export async function deleteFrozen(db: RegistryDb, name: string): Promise<void> {
  await q(db, 'DELETE FROM pgx_frozen WHERE name = $1', [name]);
}

/** The doctor's read: every frozen copy, [] when the table was never made (nothing is created). */
export async function listFrozenReadOnly(db: RegistryDb): Promise<FrozenRow[]> {
  const [t] = await db.query<{ ok: boolean }>(`SELECT to_regclass('pgx_frozen') IS NOT NULL AS ok`);
  return t!.ok ? db.query<FrozenRow>(`${SELECT} ORDER BY f.parent, f.ticket DESC`) : [];
}
