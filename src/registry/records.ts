// The branch registry: one table in a pgx-owned database on the server itself, so several hosts using one server
// share it (`down --id` finds a branch made under any host label). Races between creators are settled by
// advisory locks and unique keys, not by hope; a record is written BEFORE its database is created, so a crash in
// between leaves a 'creating' record that the next ensure or gc completes or cleans up.
import { PgxError } from '../lib/errors.js';
import { sqlstateOf, SQLSTATE } from '../server/sqlstate.js';
import { ensureSchema, type RegistryDb } from './connection.js';

/** Whose branch it is: a session's, a subagent's, or an `agent exec --id`'s (engine/identity.ts kindOf). */
export type BranchKind = 'session' | 'subagent' | 'exec';
export type BranchState = 'creating' | 'active' | 'retiring';
export type DeadlineKind = 'creating' | 'idle' | 'grace';

export interface BranchRecord {
  name: string;
  identity_key: string;
  kind: BranchKind;
  project: string;
  host: string;
  session_id: string | null;
  agent_id: string | null;
  exec_id: string | null;
  source: string | null;
  template: string | null;
  state: BranchState;
  method: string | null;
  created_at: Date;
  last_seen_at: Date;
  deadline: Date;
  deadline_kind: DeadlineKind;
  idle_ttl_ms: string; // bigint arrives as text
  grace_ms: string;
  /** The creation's nonce: the database is this record's only if its stamp carries it (catalog.isOwnBranch). */
  nonce: string | null;
  /** Set by an `agent exec --id` without --keep that made or revived it: the last exec lease to end retires it. */
  retire_after_exec: boolean;
  /** The branch's own login role (null: the branch is used with the admin role, `roles = "admin"`). */
  role: string | null;
  /** Its password, handed to the branch's commands (the registry accepts only the admin's connections). */
  role_password: string | null;
  /** The database this branch was forked from (engine/fork.ts); null: the template. */
  parent: string | null;
  forked_at: Date | null;
  /**
   * The fork check's baseline (engine/fork.ts): the database's statistics mark (statsMark) and the template build
   * (its oid) it was made from, read when it went active; null: unknown, or its contents are not the template's (a
   * reset to a parent, an adopt), so it counts as changed.
   */
  base_mark: string | null;
  base_template: string | null;
  /** A reset's or adopt's replacement in flight (engine/reset.ts): pgx_new_<swap_nonce> before the swap, pgx_old_ after. */
  swap_nonce: string | null;
  /** What the branch changed, as summarised at its SubagentStop (engine/handoff.ts); null: not summarised. */
  changes?: unknown;
  /** The frozen copy a fork cloned, kept as its fork point (engine/fork-point.ts); null: base_template, or none. */
  fork_point?: string | null;
  /** `pgx agent merge` applied this branch's changes to that branch, at that time (engine/merge.ts). */
  merged_into?: string | null;
  merged_at?: Date | null;
  /** Joined from pg_database: does the database exist right now? */
  db_exists?: boolean;
}

/**
 * Runs a registry query; on a missing table or column creates or migrates it and retries. (The creator of
 * `pgx_registry` may have died between creating the database and its table; a registry made by an older pgx lacks
 * the newer columns.)
 */
export async function q<R>(db: RegistryDb, sql: string, params: unknown[] = []): Promise<R[]> {
  try {
    return await db.query<R>(sql, params);
  } catch (e) {
    const code = sqlstateOf(e);
    if (code !== SQLSTATE.UNDEFINED_TABLE && code !== SQLSTATE.UNDEFINED_COLUMN) throw e;
    await ensureSchema(db);
    return db.query<R>(sql, params);
  }
}

const SELECT_WITH_DB = `SELECT b.*, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name`;

export async function findByIdentity(db: RegistryDb, identityKey: string): Promise<BranchRecord | undefined> {
  const [row] = await q<BranchRecord>(db, `${SELECT_WITH_DB} WHERE b.identity_key = $1`, [identityKey]);
  return row;
}

export async function findByName(db: RegistryDb, name: string): Promise<BranchRecord | undefined> {
  const [row] = await q<BranchRecord>(db, `${SELECT_WITH_DB} WHERE b.name = $1`, [name]);
  return row;
}

export interface RecordFilter {
  project?: string;
  agentId?: string;
  execId?: string;
  sessionId?: string;
  name?: string;
  /** With sessionId: the session's own branch and its subagents'. */
  includeSubagents?: boolean;
}

export async function findRecords(db: RegistryDb, f: RecordFilter): Promise<BranchRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.project !== undefined) add('b.project = ?', f.project);
  if (f.agentId !== undefined) add('b.agent_id = ?', f.agentId);
  if (f.execId !== undefined) add('b.exec_id = ?', f.execId);
  if (f.name !== undefined) add('b.name = ?', f.name);
  if (f.sessionId !== undefined) {
    add('b.session_id = ?', f.sessionId);
    if (!f.includeSubagents) where.push("b.kind = 'session'");
  }
  const sql = `${SELECT_WITH_DB}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY b.created_at, b.name`;
  return q<BranchRecord>(db, sql, params);
}

export interface NewRecord {
  name: string;
  identity_key: string;
  kind: BranchKind;
  project: string;
  host: string;
  session_id?: string;
  agent_id?: string;
  exec_id?: string;
  source?: string;
  template: string;
  idle_ttl_ms: number;
  grace_ms: number;
  nonce: string;
  /** Recorded BEFORE the role is created, as the name is before the database. */
  role?: string;
  role_password?: string;
  /** The lineage (engine/fork.ts): the database it is forked from; absent: the template. */
  parent?: string | null;
}

/** Claims a name for an identity. Returns false when the name is already another identity's. */
export async function insertCreating(db: RegistryDb, r: NewRecord): Promise<boolean> {
  const rows = await q(
    db,
    `INSERT INTO pgx_branch (name, identity_key, kind, project, host, session_id, agent_id, exec_id, source, template, state,
                             deadline, deadline_kind, idle_ttl_ms, grace_ms, nonce, role, role_password, parent, forked_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'creating', now() + interval '10 minutes','creating',$11,$12,$13,$14,$15,$16,
             CASE WHEN $16::text IS NULL THEN NULL ELSE now() END)
     ON CONFLICT DO NOTHING RETURNING name`,
    [
      r.name,
      r.identity_key,
      r.kind,
      r.project,
      r.host,
      r.session_id ?? null,
      r.agent_id ?? null,
      r.exec_id ?? null,
      r.source ?? null,
      r.template,
      r.idle_ttl_ms,
      r.grace_ms,
      r.nonce,
      r.role ?? null,
      r.role_password ?? null,
      r.parent ?? null,
    ],
  );
  return rows.length === 1;
}

/** A new creation of the record's database (its old one is gone): a new nonce, recorded before anything is created. */
export async function setNonce(db: RegistryDb, name: string, nonce: string): Promise<BranchRecord> {
  const [row] = await q<BranchRecord>(db, `UPDATE pgx_branch SET nonce = $2 WHERE name = $1 RETURNING *`, [
    name,
    nonce,
  ]);
  if (!row)
    throw new PgxError(
      'BRANCH_FAILED',
      `The registry record of "${name}" disappeared while the branch was being made.`,
      'Retry.',
    );
  return row;
}

/** Sets (or clears) the flag that makes the last exec lease's end retire the branch. */
export async function setRetireAfterExec(db: RegistryDb, name: string, retire: boolean): Promise<void> {
  await q(db, 'UPDATE pgx_branch SET retire_after_exec = $2 WHERE name = $1', [name, retire]);
}

/**
 * The database's statistics mark, as SQL over `d` (its pg_database row): its cumulative session count, when its
 * counters were last reset, and when the cluster's were (pg_stat_archiver's reset time moves when a crash restart
 * discards every counter; a clean restart keeps them). Epochs, not timestamps as text: no session's TimeZone in it.
 * NULL before PostgreSQL 14 (no session count): then nothing counts as unchanged.
 */
export function statsMark(db: RegistryDb, d: string): string {
  if (db.serverVersionNum < 140000) return 'NULL::text';
  return (
    `(SELECT concat_ws('@', s.sessions, extract(epoch FROM s.stats_reset), extract(epoch FROM (SELECT a.stats_reset ` +
    `FROM pg_stat_archiver a))) FROM pg_stat_database s WHERE s.datid = ${d}.oid)`
  );
}

/**
 * Marks a branch active and pushes its idle deadline: last activity + idle TTL. `baseline`: the database was just
 * made (or replaced), so the fork check's baseline is taken now: its session count, and `template`, the template
 * build (oid) its contents are, or null when they are not a template's.
 */
export async function markActive(
  db: RegistryDb,
  name: string,
  method: string,
  idleTtlMs?: number,
  baseline?: { template: string | null },
): Promise<BranchRecord> {
  const base = baseline
    ? `, base_mark = (SELECT ${statsMark(db, 'd')} FROM pg_database d WHERE d.datname = $1), base_template = $4::oid`
    : '';
  const [row] = await q<BranchRecord>(
    db,
    `UPDATE pgx_branch SET state = 'active', method = $2, last_seen_at = now(),
            idle_ttl_ms = COALESCE($3, idle_ttl_ms),
            deadline = now() + COALESCE($3, idle_ttl_ms) * interval '1 millisecond', deadline_kind = 'idle'${base}
      WHERE name = $1 RETURNING *`,
    baseline ? [name, method, idleTtlMs ?? null, baseline.template] : [name, method, idleTtlMs ?? null],
  );
  if (!row)
    throw new PgxError(
      'BRANCH_FAILED',
      `The registry record of "${name}" disappeared while the branch was being made ready.`,
      'Retry; if it persists, `pgx agent doctor` lists orphans.',
    );
  return row;
}

/** Heartbeat: last activity now, idle deadline moved. Only active branches are touched. */
export async function heartbeat(db: RegistryDb, name: string): Promise<boolean> {
  const rows = await q(
    db,
    `UPDATE pgx_branch SET last_seen_at = now(), deadline = now() + idle_ttl_ms * interval '1 millisecond'
      WHERE name = $1 AND state = 'active' RETURNING name`,
    [name],
  );
  return rows.length === 1;
}

export async function markRetiring(db: RegistryDb, name: string): Promise<BranchRecord | undefined> {
  const [row] = await q<BranchRecord>(
    db,
    `UPDATE pgx_branch SET state = 'retiring', deadline = now() + grace_ms * interval '1 millisecond', deadline_kind = 'grace'
      WHERE name = $1 RETURNING *`,
    [name],
  );
  return row;
}

/** Gives an existing record (made under `roles = "admin"`, or before roles existed) a role, before it is created. */
export async function setRole(db: RegistryDb, name: string, role: string, password: string): Promise<BranchRecord> {
  await q(db, 'UPDATE pgx_branch SET role = $2, role_password = $3 WHERE name = $1', [name, role, password]);
  return (await findByName(db, name))!;
}

/**
 * Records a retiring branch's change summary and, when `keepMs` is given (it changed something), keeps it at least
 * that long: its deadline moves out, never in. Only a retiring record: an active one is someone's again.
 */
export async function recordChanges(
  db: RegistryDb,
  name: string,
  changes: unknown,
  keepMs: number | null,
): Promise<boolean> {
  const rows = await q(
    db,
    `UPDATE pgx_branch SET changes = $2::jsonb,
            deadline = CASE WHEN $3::bigint IS NULL THEN deadline ELSE greatest(deadline, now() + $3::bigint * interval '1 millisecond') END
      WHERE name = $1 AND state = 'retiring' RETURNING name`,
    [name, JSON.stringify(changes), keepMs],
  );
  return rows.length === 1;
}

export async function isExpired(db: RegistryDb, name: string): Promise<boolean> {
  const [row] = await q<{ expired: boolean }>(
    db,
    'SELECT deadline < now() AS expired FROM pgx_branch WHERE name = $1',
    [name],
  );
  return !!row?.expired;
}

export async function deleteRecord(db: RegistryDb, name: string): Promise<void> {
  await q(db, 'DELETE FROM pgx_branch WHERE name = $1', [name]);
}

export async function expiredRecords(db: RegistryDb, limit: number): Promise<BranchRecord[]> {
  return q<BranchRecord>(db, `${SELECT_WITH_DB} WHERE b.deadline < now() ORDER BY b.deadline LIMIT $1`, [limit]);
}

/** The server's clock (deadlines and graces are judged by it, not by this host's). */
export async function serverNow(db: RegistryDb): Promise<number> {
  const [row] = await q<{ now: Date }>(db, 'SELECT now() AS now');
  return new Date(row!.now).getTime();
}

/**
 * The hot path's one round trip: heartbeats the identity's branch and returns its record, only if it is active, its
 * database exists, accepts connections and carries this record's stamp (`stamp`: formatStamp of the identity, to which
 * the record's nonce is appended here, so a stamp without the nonce never passes: catalog.isOwnBranch). No row: the
 * caller takes the full ensure (which revives, repairs or creates under the identity lock). Row-locking makes it
 * wait for a retire's record update in flight and then re-check `state`, so it never heartbeats a retiring branch.
 */
export async function attachActive(
  db: RegistryDb,
  identityKey: string,
  stamp: string,
): Promise<BranchRecord | undefined> {
  const [row] = await db.query<BranchRecord>(
    `UPDATE pgx_branch b SET last_seen_at = now(), deadline = now() + b.idle_ttl_ms * interval '1 millisecond'
       FROM pg_database d
      WHERE b.identity_key = $1 AND b.state = 'active' AND d.datname = b.name AND d.datallowconn
        AND shobj_description(d.oid, 'pg_database') = $2 || COALESCE(':' || b.nonce, '')
     RETURNING b.*, true AS db_exists`,
    [identityKey, stamp],
  );
  return row;
}
