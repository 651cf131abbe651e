// The branch lifecycle: ensure (attach | revive | clone), heartbeat, terminate, retire, drop.
// active (deadline = last activity + idle TTL) → retiring (connections refused, backends terminated,
// deadline = now + grace) → dropped. Every ALTER/DROP is preceded by a stamp check.
import { PgxError } from '../errors.js';
import { hashBranchName, identityKey, kindOf, shortBranchName, type Identity } from '../identity.js';
import * as registry from '../registry.js';
import type { BranchRecord } from '../registry.js';
import type { ConnParams, Db } from '../server/db.js';
import type { Engine } from './context.js';
import { applyGuards, type GuardResult } from './guards.js';
import { assertBranchStamp, branchStamp, databaseInfo, setComment } from './stamp.js';
import { ensureTemplate, templateName } from './template.js';

export type EnsureMethod = 'attach' | 'revive' | 'clone';

export interface EnsureResult {
  branch: string;
  record: BranchRecord;
  /** true when this call cloned the database from the template. */
  fresh: boolean;
  method: EnsureMethod;
  elapsed_ms: number;
  guards?: GuardResult;
  conn: ConnParams;
}

export interface EnsureOptions {
  /** Template size from which FILE_COPY beats WAL_LOG (measured crossover ~25–100 MB on this hardware). */
  fileCopyFromBytes?: number;
}

/** Attach to the identity's branch, reviving it if retiring, or clone a new one. Safe under concurrent callers. */
export async function ensureBranch(e: Engine, id: Identity, opts: EnsureOptions = {}): Promise<EnsureResult> {
  const t0 = performance.now();
  const key = identityKey(id);
  const done = (record: BranchRecord, method: EnsureMethod, guards?: GuardResult): EnsureResult => ({
    branch: record.name,
    record,
    fresh: method === 'clone',
    method,
    elapsed_ms: Math.round(performance.now() - t0),
    guards,
    conn: { ...e.admin, database: record.name },
  });

  return registry.withAdvisoryLock(e.db, key, async () => {
    let rec = await registry.findByIdentity(e.db, key);
    if (rec && rec.db_exists && rec.state !== 'creating') {
      const info = await assertBranchStamp(e.db, rec.name, key);
      if (rec.state === 'active') {
        // A retire cut off between its ALTER and its record update leaves an active record on a database that
        // refuses connections: repair it rather than hand out a branch nobody can connect to.
        if (!info.allowConn) await e.db.query(`ALTER DATABASE ${e.db.ident(rec.name)} WITH ALLOW_CONNECTIONS true`);
        await registry.heartbeat(e.db, rec.name);
        return done((await registry.findByName(e.db, rec.name))!, 'attach');
      }
      await e.db.query(`ALTER DATABASE ${e.db.ident(rec.name)} WITH ALLOW_CONNECTIONS true`);
      return done(await registry.markActive(e.db, rec.name, rec.method ?? 'clone', e.config.idleTtlMs), 'revive');
    }
    if (!rec) rec = await claimName(e, id, key);
    const guards = await createDatabase(e, rec, key, opts);
    return done(await registry.markActive(e.db, rec.name, 'clone', e.config.idleTtlMs), 'clone', guards);
  });
}

/** Picks the readable name, or the hash name when the readable one is another identity's (or any database's). */
async function claimName(e: Engine, id: Identity, key: string): Promise<BranchRecord> {
  const template = templateName(e.config.project, e.config.source);
  const candidates = [shortBranchName(id), hashBranchName(id)].filter((n): n is string => !!n);
  for (const name of candidates) {
    if ((await databaseInfo(e.db, name)).exists) continue; // never reuse a name that exists without our record
    const claimed = await registry.insertCreating(e.db, {
      name,
      identity_key: key,
      kind: kindOf(id),
      project: id.project,
      host: id.host,
      session_id: id.sessionId,
      agent_id: id.agentId,
      exec_id: id.execId,
      source: e.config.source,
      template,
      idle_ttl_ms: e.config.idleTtlMs,
      grace_ms: e.config.graceMs,
    });
    if (claimed) return (await registry.findByName(e.db, name))!;
  }
  throw new PgxError('BRANCH_FAILED', `No free branch name for this identity (tried ${candidates.join(', ')}).`, 'Run `pgx agent gc`, or `pgx agent ls --all` to see what holds those names.');
}

/**
 * CREATE DATABASE … TEMPLATE, then stamp and guards. A 'creating' record whose database already exists is the
 * trace of a crash between CREATE and the stamp: such a database is finished only if it has no comment at all.
 */
async function createDatabase(e: Engine, rec: BranchRecord, key: string, opts: EnsureOptions): Promise<GuardResult> {
  const { db } = e;
  const existing = await databaseInfo(db, rec.name);
  if (existing.exists) {
    if (existing.comment !== null && existing.comment !== branchStamp(key)) {
      throw new PgxError('NOT_PGX_DATABASE', `Database "${rec.name}" exists with a foreign comment; pgx will not adopt it.`, `Drop or rename "${rec.name}" yourself, then retry.`);
    }
  } else {
    const clone = async () => {
      const template = await ensureTemplate(e);
      const strategy = await chooseStrategy(db, template, opts.fileCopyFromBytes);
      await db.query(`CREATE DATABASE ${db.ident(rec.name)} TEMPLATE ${db.ident(template)}${strategy ? ` STRATEGY ${strategy}` : ''}`);
    };
    try {
      // A template refresh can swap the template between ensureTemplate's unlocked look and the clone (3D000): once more.
      await clone().catch((err: { code?: string }) => (err.code === '3D000' ? clone() : Promise.reject(err)));
    } catch (err) {
      await registry.deleteRecord(db, rec.name).catch(() => {});
      const pgErr = err as { code?: string; message?: string };
      throw new PgxError(
        'BRANCH_FAILED',
        `Could not create branch "${rec.name}": ${pgErr.message ?? String(err)}`,
        pgErr.code === '42501' ? 'The role in [server] url needs CREATEDB: ALTER ROLE <role> CREATEDB.' : 'Check the server (`pgx agent doctor`); `pgx template refresh` rebuilds the template.',
        { cause: err },
      );
    }
  }
  await setComment(db, rec.name, branchStamp(key));
  return applyGuards(db, rec.name, e.config);
}

/** Size-aware clone strategy: WAL_LOG for small templates, FILE_COPY for large ones (PostgreSQL 15+ only). */
export async function chooseStrategy(db: Db, template: string, fileCopyFromBytes = 64 * 1024 * 1024): Promise<string | undefined> {
  if (db.serverVersionNum < 150000) return undefined;
  const [row] = await db.query<{ size: string }>('SELECT pg_database_size($1)::text AS size', [template]);
  return Number(row!.size) >= fileCopyFromBytes ? 'FILE_COPY' : 'WAL_LOG';
}

export interface TerminateResult {
  backends_terminated: number;
  backends_remaining: number;
}

/** Ends every backend on the database and waits (bounded) until they are gone. */
export async function terminateBackends(db: Db, database: string, waitMs = 2000): Promise<TerminateResult> {
  const [t] = await db.query<{ n: number }>(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [database],
  );
  const deadline = Date.now() + waitMs;
  let remaining = 0;
  for (;;) {
    const [r] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    remaining = r!.n;
    if (remaining === 0 || Date.now() > deadline) break;
    await new Promise((res) => setTimeout(res, 25));
  }
  return { backends_terminated: t!.n, backends_remaining: remaining };
}

export interface DownResult extends TerminateResult {
  name: string;
  action: 'retired' | 'dropped' | 'forgotten' | 'already-retiring' | 'skipped';
}

const untouched = (name: string, action: DownResult['action']): DownResult => ({ name, action, backends_terminated: 0, backends_remaining: 0 });

/**
 * Retire, drop and gc take the branch's identity lock (the one ensureBranch holds) and re-read the record inside it,
 * so they never act on a stale view: a branch revived or heartbeated meanwhile is not dropped, and a creation in
 * progress is waited for instead of having its record deleted under it.
 */
async function underIdentityLock(e: Engine, rec: BranchRecord, fn: (fresh: BranchRecord) => Promise<DownResult>, opts: { tryOnly?: boolean } = {}): Promise<DownResult> {
  const r = await registry.withAdvisoryLock(e.db, rec.identity_key, async () => {
    const fresh = await registry.findByName(e.db, rec.name);
    if (!fresh || fresh.identity_key !== rec.identity_key) return untouched(rec.name, 'forgotten');
    return fn(fresh);
  }, opts);
  return r ?? untouched(rec.name, 'skipped'); // tryOnly and busy: someone is using it right now
}

/** Refuse new connections, terminate backends, then start the grace period. The data stays until gc. */
export async function retireBranch(e: Engine, rec: BranchRecord, opts: { tryOnly?: boolean; waitMs?: number } = {}): Promise<DownResult> {
  return underIdentityLock(e, rec, async (cur) => {
    if (cur.state === 'creating') return untouched(cur.name, 'skipped'); // a crashed creation: gc's to clean up
    if (!cur.db_exists) {
      await registry.deleteRecord(e.db, cur.name);
      return untouched(cur.name, 'forgotten');
    }
    await assertBranchStamp(e.db, cur.name, cur.identity_key);
    // Record first: if this is cut off (SessionEnd's 1.5 s budget), the branch is retiring and revivable, not an
    // "active" branch that refuses connections.
    if (cur.state !== 'retiring') await registry.markRetiring(e.db, cur.name);
    await e.db.query(`ALTER DATABASE ${e.db.ident(cur.name)} WITH ALLOW_CONNECTIONS false`);
    const t = await terminateBackends(e.db, cur.name, opts.waitMs);
    return { name: cur.name, action: cur.state === 'retiring' ? 'already-retiring' : 'retired', ...t };
  }, { tryOnly: opts.tryOnly });
}

export async function dropBranch(e: Engine, rec: BranchRecord): Promise<DownResult> {
  return underIdentityLock(e, rec, (cur) => dropLocked(e, cur));
}

async function dropLocked(e: Engine, cur: BranchRecord): Promise<DownResult> {
  const info = await assertBranchStamp(e.db, cur.name, cur.identity_key);
  if (!info.exists) {
    await registry.deleteRecord(e.db, cur.name);
    return untouched(cur.name, 'forgotten');
  }
  await e.db.query(`ALTER DATABASE ${e.db.ident(cur.name)} WITH ALLOW_CONNECTIONS false`);
  const t = await terminateBackends(e.db, cur.name);
  await e.db.query(`DROP DATABASE ${e.db.ident(cur.name)}${e.db.serverVersionNum >= 130000 ? ' WITH (FORCE)' : ''}`);
  await registry.deleteRecord(e.db, cur.name);
  return { name: cur.name, action: 'dropped', ...t };
}

export interface GcResult {
  dropped: DownResult[];
  errors: { name: string; error: string }[];
}

/**
 * Drops what is past its deadline (idle, grace, or a creation abandoned for 10 minutes). Bounded by `limit`.
 * A branch whose lock is held (being ensured right now) is skipped, and the deadline is re-checked under the lock.
 */
export async function gc(e: Engine, limit = 1000): Promise<GcResult> {
  const out: GcResult = { dropped: [], errors: [] };
  for (const rec of await registry.expiredRecords(e.db, limit)) {
    try {
      const r = await underIdentityLock(e, rec, async (cur) => {
        if (!(await registry.isExpired(e.db, cur.name))) return untouched(cur.name, 'skipped');
        // A 'creating' record's database may be unstamped (crash right after CREATE): it is only ours if uncommented.
        if (cur.state === 'creating' && cur.db_exists) {
          const info = await databaseInfo(e.db, cur.name);
          if (info.comment === null) await setComment(e.db, cur.name, branchStamp(cur.identity_key));
        }
        return dropLocked(e, cur);
      }, { tryOnly: true });
      if (r.action !== 'skipped') out.dropped.push(r);
    } catch (err) {
      out.errors.push({ name: rec.name, error: (err as Error).message });
    }
  }
  return out;
}

export function describeRecord(r: BranchRecord) {
  return {
    name: r.name,
    project: r.project,
    host: r.host,
    kind: r.kind,
    session_id: r.session_id,
    agent_id: r.agent_id,
    id: r.exec_id,
    source: r.source,
    state: r.state,
    exists: r.db_exists ?? null,
    created_at: new Date(r.created_at).toISOString(),
    last_seen_at: new Date(r.last_seen_at).toISOString(),
    deadline: new Date(r.deadline).toISOString(),
    deadline_kind: r.deadline_kind,
  };
}
