// The branch lifecycle's end: retire, drop, forget, gc. active (deadline = last activity + idle TTL) → retiring
// (connections refused, backends terminated, deadline = now + grace) → dropped. Every ALTER/DROP is preceded by a
// stamp check. The beginning (ensure) is branch-ensure.ts's.
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { tryIdentityLock, withIdentityLock } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import type { TerminateResult } from '../server/catalog.js';
import type { EngineContext } from './context.js';
import * as roles from './roles.js';
import { gcPool } from './pool.js';
import { dropSwapLeftovers } from './reset.js';
import { gcFrozen } from './freeze-gc.js';
import { dropCreation } from './branch-ensure.js';

export interface DownResult extends TerminateResult {
  name: string;
  /** foreign: the record's name is held by a database pgx cannot prove it made; left alone (see `fix`). */
  action: 'retired' | 'dropped' | 'forgotten' | 'already-retiring' | 'skipped' | 'foreign';
  /** For 'foreign': the command that forgets the record (and only the record). */
  fix?: string;
  /** The branch's role (null: none, roles = "admin"). Its sessions on other databases count in backends_*. */
  role: string | null;
  /** Drop: what happened to the role. `left`: it still owns something elsewhere (reason says where); doctor lists it. */
  role_action?: roles.RoleDropped['action'];
  role_note?: string;
}

const untouched = (name: string, action: DownResult['action'], role: string | null = null): DownResult => ({
  name,
  action,
  role,
  backends_terminated: 0,
  backends_remaining: 0,
});

/** A record whose database is not pgx's: reported, never touched, with the way out. */
function foreign(rec: BranchRecord): DownResult {
  return { ...untouched(rec.name, 'foreign', rec.role), fix: `pgx agent forget --branch ${rec.name}` };
}

/**
 * Retire, drop and gc take the branch's identity lock (the one ensureBranch holds) and re-read the record inside it,
 * so they never act on a stale view: a branch revived or heartbeated meanwhile is not dropped, and a creation in
 * progress is waited for instead of having its record deleted under it.
 */
async function underIdentityLock(
  e: EngineContext,
  rec: BranchRecord,
  fn: (fresh: BranchRecord) => Promise<DownResult>,
  opts: { tryOnly?: boolean } = {},
): Promise<DownResult> {
  const locked = async () => {
    const fresh = await records.findByName(e.registry, rec.name);
    if (!fresh || fresh.identity_key !== rec.identity_key) return untouched(rec.name, 'forgotten');
    return fn(fresh);
  };
  const r = opts.tryOnly
    ? await tryIdentityLock(e.registry, rec.identity_key, locked)
    : await withIdentityLock(e.registry, rec.identity_key, locked);
  return r ?? untouched(rec.name, 'skipped'); // tryOnly and busy: someone is using it right now
}

/** Refuse new connections, terminate backends, then start the grace period. The data stays until gc. */
export async function retireBranch(
  e: EngineContext,
  rec: BranchRecord,
  opts: { tryOnly?: boolean; waitMs?: number } = {},
): Promise<DownResult> {
  return underIdentityLock(e, rec, (cur) => retireLocked(e, cur, opts.waitMs), { tryOnly: opts.tryOnly });
}

/** retireBranch's work, for a caller that holds the identity lock (an exec lease's end). */
export async function retireLocked(e: EngineContext, cur: BranchRecord, waitMs?: number): Promise<DownResult> {
  const reg = e.registry;
  if (cur.state === 'creating') return untouched(cur.name, 'skipped', cur.role); // a crashed creation: gc's to clean up
  if (!cur.db_exists) return dropLocked(e, cur); // its role, if any, goes too
  if (!catalog.isOwnBranch(await catalog.databaseInfo(reg, cur.name), cur)) return foreign(cur);
  // Record first: if this is cut off (SessionEnd's 1.5 s budget), the branch is retiring and revivable, not an
  // "active" branch that refuses connections.
  if (cur.state !== 'retiring') await records.markRetiring(reg, cur.name);
  await catalog.allowConnections(reg, cur.name, false);
  // The role can't log in any more, and its sessions end wherever they are (a background job on the source too).
  const r = cur.role
    ? await roles.retireBranchRole(e, cur.role, waitMs)
    : { sessions_terminated: 0, sessions_remaining: 0 };
  const t = await catalog.terminateBackends(reg, cur.name, waitMs);
  return {
    name: cur.name,
    action: cur.state === 'retiring' ? 'already-retiring' : 'retired',
    role: cur.role,
    backends_terminated: t.backends_terminated + r.sessions_terminated,
    backends_remaining: Math.max(t.backends_remaining, r.sessions_remaining),
  };
}

export async function dropBranch(e: EngineContext, rec: BranchRecord): Promise<DownResult> {
  return underIdentityLock(e, rec, (cur) => dropLocked(e, cur));
}

/**
 * Database first, record last: a crash in between leaves a record whose database is gone, which anything forgets.
 * A creation that never finished owns at most its `pgx_new_<nonce>` (and, renamed but not yet marked active, the
 * branch name with its nonce): those are dropped, whatever else holds the name is not.
 */
async function dropLocked(e: EngineContext, cur: BranchRecord): Promise<DownResult> {
  const reg = e.registry;
  if (cur.state === 'creating') await dropCreation(e, cur);
  await dropSwapLeftovers(e, cur); // a reset's, killed midway
  const info = await catalog.databaseInfo(reg, cur.name);
  let out: DownResult;
  if (!info.exists || (cur.state === 'creating' && !catalog.isOwnBranch(info, cur))) {
    out = untouched(cur.name, 'forgotten', cur.role);
  } else if (!catalog.isOwnBranch(info, cur)) {
    return foreign(cur);
  } else {
    await catalog.allowConnections(reg, cur.name, false);
    const r = cur.role ? await roles.retireBranchRole(e, cur.role) : { sessions_terminated: 0, sessions_remaining: 0 };
    const t = await catalog.terminateBackends(reg, cur.name);
    await catalog.dropDatabase(reg, cur.name);
    out = {
      name: cur.name,
      action: 'dropped',
      role: cur.role,
      backends_terminated: t.backends_terminated + r.sessions_terminated,
      backends_remaining: t.backends_remaining,
    };
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

/**
 * `pgx agent forget`: deletes the record and nothing else (a creation's own `pgx_new_<nonce>` aside, which no
 * other record could claim). Refused while the record's database is provably pgx's: that is `down`'s to drop.
 */
export async function forgetBranch(e: EngineContext, rec: BranchRecord): Promise<DownResult> {
  return underIdentityLock(e, rec, async (cur) => {
    const info = await catalog.databaseInfo(e.registry, cur.name);
    if (catalog.isOwnBranch(info, cur)) {
      throw new PgxError(
        'REFUSED',
        `"${cur.name}" is pgx's own branch; forgetting its record would orphan it.`,
        `Use \`pgx agent down --branch ${cur.name}\` (add --now to drop it at once).`,
      );
    }
    await dropCreation(e, cur);
    if (cur.role) await roles.dropBranchRole(e, cur.role); // pgx's own (stamped) role: nothing else would remove it
    await records.deleteRecord(e.registry, cur.name);
    return untouched(cur.name, 'forgotten', cur.role);
  });
}

export interface GcResult {
  dropped: DownResult[];
  /** Expired records whose database pgx cannot prove it made: left alone; `pgx agent forget` clears each. */
  foreign: DownResult[];
  /** Warm-pool members dropped: retired by a template refresh, of another build, or left by a dead filler. */
  pool_dropped: string[];
  /** Frozen copies dropped (freeze.ts): superseded, their parent gone or inactive, or left by a dead maker. */
  frozen_dropped: string[];
  /** Branch roles no record names that own nothing any more (roles.ts dropRolesLeftBehind). */
  roles_dropped: string[];
  errors: { name: string; error: string }[];
}

/**
 * Drops what is past its deadline (idle, grace, or a creation abandoned for 10 minutes). Bounded by `limit`.
 * A branch whose lock is held (being ensured right now) is skipped, and the deadline is re-checked under the lock.
 */
export async function gc(e: EngineContext, limit = 1000): Promise<GcResult> {
  const reg = e.registry;
  const out: GcResult = {
    dropped: [],
    foreign: [],
    pool_dropped: [],
    frozen_dropped: [],
    roles_dropped: [],
    errors: [],
  };
  for (const rec of await records.expiredRecords(reg, limit)) {
    try {
      const r = await underIdentityLock(
        e,
        rec,
        async (cur) => {
          if (!(await records.isExpired(reg, cur.name))) return untouched(cur.name, 'skipped');
          return dropLocked(e, cur);
        },
        { tryOnly: true },
      );
      if (r.action === 'foreign') out.foreign.push(r);
      else if (r.action !== 'skipped') out.dropped.push(r);
    } catch (err) {
      out.errors.push({ name: rec.name, error: (err as Error).message });
    }
  }
  try {
    out.pool_dropped = await gcPool(e, limit);
  } catch (err) {
    out.errors.push({ name: '(pool)', error: (err as Error).message });
  }
  try {
    out.frozen_dropped = await gcFrozen(e, limit);
  } catch (err) {
    out.errors.push({ name: '(frozen copies)', error: (err as Error).message });
  }
  // After the frozen copies: a dropped copy may have held the last objects of a role its branch's drop left.
  try {
    out.roles_dropped = await roles.dropRolesLeftBehind(e, limit);
  } catch (err) {
    out.errors.push({ name: '(branch roles)', error: (err as Error).message });
  }
  return out;
}
