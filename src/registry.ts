// The branch registry: one table in a pgx-owned database on the server itself, so several hosts using one server
// share it (`down --id` finds a branch made under any host label). Races between creators are settled by
// advisory locks and unique keys, not by hope; a record is written BEFORE its CREATE DATABASE, so a crash in
// between leaves a 'creating' record that the next ensure or gc completes or cleans up.
import { connect, type ConnParams, type Db } from './server/db.js';
import type { BranchKind } from './identity.js';
import { PgxError } from './errors.js';

export const REGISTRY_DB = 'pgx_registry';
export const REGISTRY_STAMP = 'pgx:registry';

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
  /** Joined from pg_database: does the database exist right now? */
  db_exists?: boolean;
}

const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS pgx_branch (
  name          text PRIMARY KEY,
  identity_key  text NOT NULL UNIQUE,
  kind          text NOT NULL CHECK (kind IN ('session','subagent','exec')),
  project       text NOT NULL,
  host          text NOT NULL,
  session_id    text,
  agent_id      text,
  exec_id       text,
  source        text,
  template      text,
  state         text NOT NULL CHECK (state IN ('creating','active','retiring')),
  method        text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  deadline      timestamptz NOT NULL,
  deadline_kind text NOT NULL CHECK (deadline_kind IN ('creating','idle','grace')),
  idle_ttl_ms   bigint NOT NULL,
  grace_ms      bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS pgx_branch_deadline ON pgx_branch (deadline);
CREATE INDEX IF NOT EXISTS pgx_branch_project ON pgx_branch (project, session_id);
`;

/** Open the registry database, creating (and stamping) it on first use. */
export async function openRegistry(admin: ConnParams): Promise<Db> {
  try {
    return await connect({ ...admin, database: REGISTRY_DB });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    if (cause?.code !== '3D000') throw e;
  }
  const boot = await connect(admin);
  try {
    const created = await boot.query(`CREATE DATABASE ${boot.ident(REGISTRY_DB)}`).then(
      () => true,
      (e: { code?: string }) => {
        if (e.code !== '42P04' && e.code !== '23505') throw e;
        return false; // another process created it first, and stamps it
      },
    );
    if (created) await boot.query(`COMMENT ON DATABASE ${boot.ident(REGISTRY_DB)} IS ${boot.literal(REGISTRY_STAMP)}`);
  } finally {
    await boot.raw.end().catch(() => {});
  }
  const db = await connect({ ...admin, database: REGISTRY_DB });
  await ensureSchema(db);
  return db;
}

export async function ensureSchema(db: Db): Promise<void> {
  // Serialised: concurrent CREATE TABLE IF NOT EXISTS can still collide on the catalog's unique index.
  await db.query('SELECT pg_advisory_lock(7466170)');
  try {
    await db.query(SCHEMA_SQL);
  } finally {
    await db.query('SELECT pg_advisory_unlock(7466170)');
  }
}

/** Runs a registry query; on a missing table (a registry from before the schema existed) creates it and retries. */
async function q<R>(db: Db, sql: string, params: unknown[] = []): Promise<R[]> {
  try {
    return await db.query<R>(sql, params);
  } catch (e) {
    if ((e as { code?: string }).code !== '42P01') throw e;
    await ensureSchema(db);
    return db.query<R>(sql, params);
  }
}

const SELECT_WITH_DB = `SELECT b.*, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name`;

export async function findByIdentity(db: Db, identityKey: string): Promise<BranchRecord | undefined> {
  const [row] = await q<BranchRecord>(db, `${SELECT_WITH_DB} WHERE b.identity_key = $1`, [identityKey]);
  return row;
}

export async function findByName(db: Db, name: string): Promise<BranchRecord | undefined> {
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

export async function findRecords(db: Db, f: RecordFilter): Promise<BranchRecord[]> {
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
}

/** Claims a name for an identity. Returns false when the name is already another identity's. */
export async function insertCreating(db: Db, r: NewRecord): Promise<boolean> {
  const rows = await q(
    db,
    `INSERT INTO pgx_branch (name, identity_key, kind, project, host, session_id, agent_id, exec_id, source, template, state,
                             deadline, deadline_kind, idle_ttl_ms, grace_ms)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'creating', now() + interval '10 minutes','creating',$11,$12)
     ON CONFLICT DO NOTHING RETURNING name`,
    [r.name, r.identity_key, r.kind, r.project, r.host, r.session_id ?? null, r.agent_id ?? null, r.exec_id ?? null, r.source ?? null, r.template, r.idle_ttl_ms, r.grace_ms],
  );
  return rows.length === 1;
}

/** Marks a branch active and pushes its idle deadline: last activity + idle TTL. */
export async function markActive(db: Db, name: string, method: string, idleTtlMs?: number): Promise<BranchRecord> {
  const [row] = await q<BranchRecord>(
    db,
    `UPDATE pgx_branch SET state = 'active', method = $2, last_seen_at = now(),
            idle_ttl_ms = COALESCE($3, idle_ttl_ms),
            deadline = now() + COALESCE($3, idle_ttl_ms) * interval '1 millisecond', deadline_kind = 'idle'
      WHERE name = $1 RETURNING *`,
    [name, method, idleTtlMs ?? null],
  );
  if (!row) throw new PgxError('BRANCH_FAILED', `The registry record of "${name}" disappeared while the branch was being made ready.`, 'Retry; if it persists, `pgx agent doctor` lists orphans.');
  return row;
}

/** Heartbeat: last activity now, idle deadline moved. Only active branches are touched. */
export async function heartbeat(db: Db, name: string): Promise<boolean> {
  const rows = await q(
    db,
    `UPDATE pgx_branch SET last_seen_at = now(), deadline = now() + idle_ttl_ms * interval '1 millisecond'
      WHERE name = $1 AND state = 'active' RETURNING name`,
    [name],
  );
  return rows.length === 1;
}

export async function markRetiring(db: Db, name: string): Promise<BranchRecord | undefined> {
  const [row] = await q<BranchRecord>(
    db,
    `UPDATE pgx_branch SET state = 'retiring', deadline = now() + grace_ms * interval '1 millisecond', deadline_kind = 'grace'
      WHERE name = $1 RETURNING *`,
    [name],
  );
  return row;
}

export async function isExpired(db: Db, name: string): Promise<boolean> {
  const [row] = await q<{ expired: boolean }>(db, 'SELECT deadline < now() AS expired FROM pgx_branch WHERE name = $1', [name]);
  return !!row?.expired;
}

export async function deleteRecord(db: Db, name: string): Promise<void> {
  await q(db, 'DELETE FROM pgx_branch WHERE name = $1', [name]);
}

export async function expiredRecords(db: Db, limit: number): Promise<BranchRecord[]> {
  return q<BranchRecord>(db, `${SELECT_WITH_DB} WHERE b.deadline < now() ORDER BY b.deadline LIMIT $1`, [limit]);
}

/** Databases stamped by pgx as branches that have no record (a crash, or a registry that was dropped). */
export async function orphanDatabases(db: Db): Promise<string[]> {
  const rows = await q<{ datname: string }>(
    db,
    `SELECT d.datname FROM pg_database d
      WHERE shobj_description(d.oid, 'pg_database') LIKE 'pgx:branch:%'
        AND NOT EXISTS (SELECT 1 FROM pgx_branch b WHERE b.name = d.datname) ORDER BY 1`,
  );
  return rows.map((r) => r.datname);
}

/**
 * A session-level advisory lock on a hex key: released by unlock or by the connection ending (a crash).
 * With `tryOnly`, returns undefined at once when another session holds it.
 */
export async function withAdvisoryLock<T>(db: Db, hexKey: string, fn: () => Promise<T>, opts?: { tryOnly?: false }): Promise<T>;
export async function withAdvisoryLock<T>(db: Db, hexKey: string, fn: () => Promise<T>, opts: { tryOnly?: boolean }): Promise<T | undefined>;
export async function withAdvisoryLock<T>(db: Db, hexKey: string, fn: () => Promise<T>, opts: { tryOnly?: boolean } = {}): Promise<T | undefined> {
  const key = BigInt('0x' + hexKey.slice(0, 15)).toString();
  if (opts.tryOnly) {
    const [row] = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
    if (!row!.ok) return undefined;
  } else {
    await db.query('SELECT pg_advisory_lock($1::bigint)', [key]);
  }
  try {
    return await fn();
  } finally {
    await db.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {});
  }
}
