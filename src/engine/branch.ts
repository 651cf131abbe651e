// The branch lifecycle: ensure (attach | revive | clone), retire, drop, gc.
// active (deadline = last activity + idle TTL) → retiring (connections refused, backends terminated,
// deadline = now + grace) → dropped. Every ALTER/DROP is preceded by a stamp check.
import { PgxError } from '../errors.js';
import { hashBranchName, identityKey, kindOf, shortBranchName, type Identity } from '../identity.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { tryIdentityLock, withIdentityLock } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import type { TerminateResult } from '../server/catalog.js';
import type { ConnParams } from '../server/db.js';
import type { EngineContext } from './context.js';
import { applyGuards, type GuardResult } from './guards.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { ensureTemplate, templateName } from './template.js';
import * as roles from './roles.js';
import { claimMember, gcPool } from './pool.js';

/** attach: the branch was there; revive: it was retiring; claim: a warm-pool member became it; clone: made now. */
export type EnsureMethod = 'attach' | 'revive' | 'claim' | 'clone';

export interface EnsureResult {
  branch: string;
  record: BranchRecord;
  /** true when this call made the branch (a clone, or a claimed pool member: fresh from the template either way). */
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
export async function ensureBranch(e: EngineContext, id: Identity, opts: EnsureOptions = {}): Promise<EnsureResult> {
  const t0 = performance.now();
  const key = identityKey(id);
  const reg = e.registry;
  const done = (record: BranchRecord, method: EnsureMethod, guards?: GuardResult): EnsureResult => ({
    branch: record.name,
    record,
    fresh: method === 'clone' || method === 'claim',
    method,
    elapsed_ms: Math.round(performance.now() - t0),
    guards,
    conn: roles.branchConn(e.admin, record),
  });

  return withIdentityLock(reg, key, async () => {
    let rec = await records.findByIdentity(reg, key);
    if (rec && rec.db_exists && rec.state !== 'creating') {
      const info = await catalog.assertBranchStamp(reg, rec.name, key);
      // roles = "per-branch" (explicitly) and a branch made under "admin": it gets its role now. (`auto` decides on
      // the create path only, so that an attach costs no extra round trip.)
      if (e.config.roles === 'per-branch' && !rec.role) rec = await giveRole(e, rec);
      if (rec.state === 'active') {
        // A retire cut off between its ALTER and its record update leaves an active record on a database that
        // refuses connections: repair it rather than hand out a branch nobody can connect to.
        if (!info.allowConn) {
          await roles.reviveBranchRole(e, rec);
          await catalog.allowConnections(reg, rec.name, true);
        }
        await records.heartbeat(reg, rec.name);
        return done((await records.findByName(reg, rec.name))!, 'attach');
      }
      await roles.reviveBranchRole(e, rec);
      await catalog.allowConnections(reg, rec.name, true);
      return done(await records.markActive(reg, rec.name, rec.method ?? 'clone', e.config.idleTtlMs), 'revive');
    }
    if (!rec) rec = await claimName(e, id, key);
    else if (!rec.role) rec = await withRoleIfDue(e, rec);
    // A name whose database exists (a crash after CREATE) is finished by createBranchDatabase; otherwise the warm
    // pool gives the database, when it has one.
    if (!rec.db_exists) {
      const claimed = await claimMember(e, rec);
      if (claimed) return done(claimed, 'claim');
    }
    const guards = await createBranchDatabase(e, rec, key, opts);
    if (rec.role && rec.role_password) await roles.prepareBranchRole(e, rec.name, rec.role, rec.role_password);
    return done(await records.markActive(reg, rec.name, 'clone', e.config.idleTtlMs), 'clone', guards);
  });
}

/** A record without a role, under per-branch roles: recorded first, then created (prepareBranchRole). */
async function withRoleIfDue(e: EngineContext, rec: BranchRecord): Promise<BranchRecord> {
  const creds = await roles.credentialsFor(e);
  return creds ? records.setRole(e.registry, rec.name, creds.role, creds.password) : rec;
}

/** An existing branch that had no role gets one (its objects change owner: a migration can run as the role). */
async function giveRole(e: EngineContext, rec: BranchRecord): Promise<BranchRecord> {
  const withRole = await withRoleIfDue(e, rec);
  if (withRole.role && withRole.role_password) await roles.prepareBranchRole(e, withRole.name, withRole.role, withRole.role_password, { login: withRole.state === 'active' });
  return withRole;
}

/** Picks the readable name, or the hash name when the readable one is another identity's (or any database's). */
async function claimName(e: EngineContext, id: Identity, key: string): Promise<BranchRecord> {
  const template = templateName(e.config.project, e.config.source);
  const candidates = [shortBranchName(id), hashBranchName(id)].filter((n): n is string => !!n);
  const creds = await roles.credentialsFor(e);
  for (const name of candidates) {
    if ((await catalog.databaseInfo(e.registry, name)).exists) continue; // never reuse a name that exists without our record
    const claimed = await records.insertCreating(e.registry, {
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
      ...(creds ? { role: creds.role, role_password: creds.password } : {}),
    });
    if (claimed) return (await records.findByName(e.registry, name))!;
  }
  throw new PgxError('BRANCH_FAILED', `No free branch name for this identity (tried ${candidates.join(', ')}).`, 'Run `pgx agent gc`, or `pgx agent ls --all` to see what holds those names.');
}

/**
 * Clone the template, then stamp and guards. A 'creating' record whose database already exists is the
 * trace of a crash between CREATE and the stamp: such a database is finished only if it has no comment at all.
 */
async function createBranchDatabase(e: EngineContext, rec: BranchRecord, key: string, opts: EnsureOptions): Promise<GuardResult> {
  const reg = e.registry;
  const existing = await catalog.databaseInfo(reg, rec.name);
  if (existing.exists) {
    if (existing.comment !== null && !catalog.isBranchStamp(existing.stamp, key)) {
      throw new PgxError('NOT_PGX_DATABASE', `Database "${rec.name}" exists with a foreign comment; pgx will not adopt it.`, `Drop or rename "${rec.name}" yourself, then retry.`);
    }
  } else {
    const clone = async () => {
      const template = await ensureTemplate(e);
      await cloneDatabase(e, rec.name, template, await planClone(e, template, opts.fileCopyFromBytes));
    };
    try {
      // A template refresh can swap the template between ensureTemplate's unlocked look and the clone: once more.
      await clone().catch((err: unknown) => (catalog.sqlstateOf(err) === catalog.SQLSTATE.INVALID_CATALOG_NAME ? clone() : Promise.reject(err)));
    } catch (err) {
      await records.deleteRecord(reg, rec.name).catch(() => {});
      throw new PgxError(
        'BRANCH_FAILED',
        `Could not create branch "${rec.name}": ${(err as Error).message ?? String(err)}`,
        catalog.sqlstateOf(err) === catalog.SQLSTATE.INSUFFICIENT_PRIVILEGE ? 'The role in [server] url needs CREATEDB: ALTER ROLE <role> CREATEDB.' : 'Check the server (`pgx agent doctor`); `pgx template refresh` rebuilds the template.',
        { cause: err },
      );
    }
  }
  await catalog.writeStamp(reg, rec.name, { kind: 'branch', identityKey: key });
  return applyGuards(reg, rec.name, e.config);
}

export interface DownResult extends TerminateResult {
  name: string;
  action: 'retired' | 'dropped' | 'forgotten' | 'already-retiring' | 'skipped';
  /** The branch's role (null: none, roles = "admin"). Its sessions on other databases count in backends_*. */
  role: string | null;
  /** Drop: what happened to the role. `left`: it still owns something elsewhere (reason says where); doctor lists it. */
  role_action?: roles.RoleDropped['action'];
  role_note?: string;
}

const untouched = (name: string, action: DownResult['action'], role: string | null = null): DownResult => ({ name, action, role, backends_terminated: 0, backends_remaining: 0 });

/**
 * Retire, drop and gc take the branch's identity lock (the one ensureBranch holds) and re-read the record inside it,
 * so they never act on a stale view: a branch revived or heartbeated meanwhile is not dropped, and a creation in
 * progress is waited for instead of having its record deleted under it.
 */
async function underIdentityLock(e: EngineContext, rec: BranchRecord, fn: (fresh: BranchRecord) => Promise<DownResult>, opts: { tryOnly?: boolean } = {}): Promise<DownResult> {
  const locked = async () => {
    const fresh = await records.findByName(e.registry, rec.name);
    if (!fresh || fresh.identity_key !== rec.identity_key) return untouched(rec.name, 'forgotten');
    return fn(fresh);
  };
  const r = opts.tryOnly ? await tryIdentityLock(e.registry, rec.identity_key, locked) : await withIdentityLock(e.registry, rec.identity_key, locked);
  return r ?? untouched(rec.name, 'skipped'); // tryOnly and busy: someone is using it right now
}

/** Refuse new connections, terminate backends, then start the grace period. The data stays until gc. */
export async function retireBranch(e: EngineContext, rec: BranchRecord, opts: { tryOnly?: boolean; waitMs?: number } = {}): Promise<DownResult> {
  const reg = e.registry;
  return underIdentityLock(e, rec, async (cur) => {
    if (cur.state === 'creating') return untouched(cur.name, 'skipped', cur.role); // a crashed creation: gc's to clean up
    if (!cur.db_exists) return dropLocked(e, cur); // its role, if any, goes too
    await catalog.assertBranchStamp(reg, cur.name, cur.identity_key);
    // Record first: if this is cut off (SessionEnd's 1.5 s budget), the branch is retiring and revivable, not an
    // "active" branch that refuses connections.
    if (cur.state !== 'retiring') await records.markRetiring(reg, cur.name);
    await catalog.allowConnections(reg, cur.name, false);
    // The role can't log in any more, and its sessions end wherever they are (a background job on the source too).
    const r = cur.role ? await roles.retireBranchRole(e, cur.role, opts.waitMs) : { sessions_terminated: 0, sessions_remaining: 0 };
    const t = await catalog.terminateBackends(reg, cur.name, opts.waitMs);
    return {
      name: cur.name,
      action: cur.state === 'retiring' ? 'already-retiring' : 'retired',
      role: cur.role,
      backends_terminated: t.backends_terminated + r.sessions_terminated,
      backends_remaining: Math.max(t.backends_remaining, r.sessions_remaining),
    };
  }, { tryOnly: opts.tryOnly });
}

export async function dropBranch(e: EngineContext, rec: BranchRecord): Promise<DownResult> {
  return underIdentityLock(e, rec, (cur) => dropLocked(e, cur));
}

/** Database first, record last: a crash in between leaves a record whose database is gone, which anything forgets. */
async function dropLocked(e: EngineContext, cur: BranchRecord): Promise<DownResult> {
  const reg = e.registry;
  const info = await catalog.assertBranchStamp(reg, cur.name, cur.identity_key);
  let out: DownResult;
  if (!info.exists) {
    out = untouched(cur.name, 'forgotten', cur.role);
  } else {
    await catalog.allowConnections(reg, cur.name, false);
    const r = cur.role ? await roles.retireBranchRole(e, cur.role) : { sessions_terminated: 0, sessions_remaining: 0 };
    const t = await catalog.terminateBackends(reg, cur.name);
    await catalog.dropDatabase(reg, cur.name);
    out = { name: cur.name, action: 'dropped', role: cur.role, backends_terminated: t.backends_terminated + r.sessions_terminated, backends_remaining: t.backends_remaining };
  }
  // The role after its database (which it can't own anyway): a role still owning something elsewhere stays, NOLOGIN,
  // and is reported here and by doctor. The record goes last: a crash before leaves the record, whose role the next
  // drop or gc removes.
  if (cur.role) {
    const d = await roles.dropBranchRole(e, cur.role);
    out.role_action = d.action;
    if (d.action === 'left') out.role_note = `role ${d.role} was not dropped: it ${d.reason}`;
  }
  await records.deleteRecord(reg, cur.name);
  return out;
}

export interface GcResult {
  dropped: DownResult[];
  /** Warm-pool members dropped: retired by a template refresh, of another build, or left by a dead filler. */
  pool_dropped: string[];
  errors: { name: string; error: string }[];
}

/**
 * Drops what is past its deadline (idle, grace, or a creation abandoned for 10 minutes). Bounded by `limit`.
 * A branch whose lock is held (being ensured right now) is skipped, and the deadline is re-checked under the lock.
 */
export async function gc(e: EngineContext, limit = 1000): Promise<GcResult> {
  const reg = e.registry;
  const out: GcResult = { dropped: [], pool_dropped: [], errors: [] };
  for (const rec of await records.expiredRecords(reg, limit)) {
    try {
      const r = await underIdentityLock(e, rec, async (cur) => {
        if (!(await records.isExpired(reg, cur.name))) return untouched(cur.name, 'skipped');
        // A 'creating' record's database may be unstamped (crash right after CREATE): it is only ours if uncommented.
        if (cur.state === 'creating' && cur.db_exists) {
          const info = await catalog.databaseInfo(reg, cur.name);
          if (info.comment === null) await catalog.writeStamp(reg, cur.name, { kind: 'branch', identityKey: cur.identity_key });
        }
        return dropLocked(e, cur);
      }, { tryOnly: true });
      if (r.action !== 'skipped') out.dropped.push(r);
    } catch (err) {
      out.errors.push({ name: rec.name, error: (err as Error).message });
    }
  }
  try {
    out.pool_dropped = await gcPool(e, limit);
  } catch (err) {
    out.errors.push({ name: '(pool)', error: (err as Error).message });
  }
  return out;
}
