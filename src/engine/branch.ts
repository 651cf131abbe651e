// The branch lifecycle: ensure (attach | revive | clone), retire, drop, gc.
// active (deadline = last activity + idle TTL) → retiring (connections refused, backends terminated,
// deadline = now + grace) → dropped. Every ALTER/DROP is preceded by a stamp check.
import { PgxError } from '../lib/errors.js';
import { hashBranchName, identityKey, kindOf, shortBranchName, type Identity } from './identity.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { takeLease, tryIdentityLock, withIdentityLock } from '../registry/locks.js';
import { inTransaction } from '../registry/connection.js';
import * as catalog from '../server/catalog.js';
import type { TerminateResult } from '../server/catalog.js';
import type { ConnParams } from '../server/conn-params.js';
import type { EngineContext } from './context.js';
import { applyGuards, type GuardResult } from './guards.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { isDiskBudgetError } from './disk-budget.js';
import { ensureTemplate, templateName } from './template.js';
import * as roles from './roles.js';
import { claimMember, gcPool } from './pool.js';
import { dropSwapLeftovers, finishSwap } from './reset.js';
import { defaultRequest, planFork, type ForkMethod, type ForkPlan, type ForkRequest } from './fork.js';
import { FrozenCopyWaitError, forkViaFrozenCopy, gcFrozen, type FrozenUse } from './freeze.js';

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
  /**
   * A branch made by this call: what it is a copy of (`parent`: a database name, null for the template), how
   * (`unchanged`: the parent held the template's contents, so the pool's claim or a template clone), and, when the
   * fork asked for could not be made, why (`note`, one sentence; the branch then has the template).
   */
  fork?: { parent: string | null; method: ForkMethod; note?: string; frozen?: FrozenUse };
}

export interface EnsureOptions {
  /** Template size from which FILE_COPY beats WAL_LOG (measured crossover ~25–100 MB on this hardware). */
  fileCopyFromBytes?: number;
  /**
   * `agent exec --id`: take an exec lease on the branch (engine/exec-lease.ts) before the identity lock is let go, so
   * no other exec's end can retire it in between. 'throwaway': an exec without --keep; a branch it made or revived
   * is retired when the last lease ends. 'keep': --keep; the branch stays active after every lease has ended.
   */
  lease?: 'throwaway' | 'keep';
  /** What a NEW branch is a copy of (an existing one is attached as it is). Default: `[agent] fork` for a subagent. */
  from?: ForkRequest;
}

/** Attach to the identity's branch, reviving it if retiring, or clone a new one. Safe under concurrent callers. */
export async function ensureBranch(e: EngineContext, id: Identity, opts: EnsureOptions = {}): Promise<EnsureResult> {
  const t0 = performance.now();
  const key = identityKey(id);
  const reg = e.registry;
  const done = (record: BranchRecord, method: EnsureMethod, guards?: GuardResult, fork?: EnsureResult['fork']): EnsureResult => ({
    branch: record.name,
    record,
    fresh: method === 'clone' || method === 'claim',
    method,
    elapsed_ms: Math.round(performance.now() - t0),
    guards,
    conn: roles.branchConn(e.admin, record),
    ...(fork ? { fork } : {}),
  });

  return withIdentityLock(reg, key, async () => {
    const r = await ensureLocked();
    if (opts.lease) {
      await takeLease(reg, key);
      const retire = opts.lease === 'keep' ? false : r.method !== 'attach' || r.record.retire_after_exec;
      if (retire !== r.record.retire_after_exec) await records.setRetireAfterExec(reg, r.branch, retire);
      r.record = { ...r.record, retire_after_exec: retire };
    }
    return r;
  });

  async function ensureLocked(): Promise<EnsureResult> {
    let rec = await records.findByIdentity(reg, key);
    if (rec?.swap_nonce) rec = { ...(await finishSwap(e, rec)), db_exists: rec.db_exists }; // a reset killed midway: its leftover
    if (rec && rec.db_exists && rec.state !== 'creating') {
      const info = await catalog.databaseInfo(reg, rec.name);
      if (!catalog.isOwnBranch(info, rec)) throw foreignBranch(rec);
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
    // Where a new branch comes from (fork.ts), decided before its name is claimed so the lineage is recorded with it.
    let plan: ForkPlan | undefined;
    if (!rec?.db_exists) plan = await planFork(e, id, opts.from ?? defaultRequest(e, id));
    if (!rec) rec = await claimName(e, id, key, plan?.parent ?? null);
    else {
      if (!rec.role) rec = await withRoleIfDue(e, rec);
      if (plan && (rec.parent ?? null) !== plan.parent) rec = await records.setLineage(reg, rec.name, plan.parent); // record first
    }
    const fork = (method: ForkMethod, note = plan?.note, frozen?: FrozenUse): EnsureResult['fork'] => (plan ? { parent: rec!.parent ?? null, method, ...(note ? { note } : {}), ...(frozen ? { frozen } : {}) } : undefined);
    // The warm pool gives the database when it has one (a member renamed into place, stamped with this record's
    // nonce, in one transaction); a name already held by a database is createBranchDatabase's to judge. A fork of
    // an unchanged parent is the template's contents too.
    if (!rec.db_exists) {
      if (rec.state !== 'creating' || rec.nonce === null) rec = await records.setNonce(reg, rec.name, catalog.newNonce()); // record first
      if (!plan?.copyFrom) {
        const claimed = await claimMember(e, rec);
        if (claimed) return done(claimed, 'claim', undefined, fork(plan?.parent ? 'unchanged' : 'template'));
      }
    }
    const made = await createBranchDatabase(e, rec, { ...opts, copyFrom: plan?.copyFrom ?? null });
    rec = made.record;
    return done(made.record, 'clone', made.guards, fork(made.method, made.note ?? plan?.note, made.frozen));
  }
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

/** 16 of [a-z0-9] (~82 bits): the creation's nonce, which names and stamps it. */

/** The refusal for a record whose name is held by a database pgx cannot prove it made. */
export function foreignBranch(rec: BranchRecord): PgxError {
  const selector = rec.kind === 'exec' && rec.exec_id !== null && /^[A-Za-z0-9._-]+$/.test(rec.exec_id) ? `--id ${rec.exec_id}` : `--branch ${rec.name}`;
  return new PgxError(
    'NOT_PGX_DATABASE',
    `Database "${rec.name}" exists but is not the one pgx made for this branch (it lacks the stamp pgx recorded for it); pgx will not use, alter or drop it.`,
    `If it is not needed, drop or rename it yourself; or run \`pgx agent forget ${selector}\` to forget pgx's record (the database is left as it is), and pgx makes the branch under another name.`,
  );
}

/** Picks the readable name, or the hash name when the readable one is another identity's (or any database's). */
async function claimName(e: EngineContext, id: Identity, key: string, parent: string | null): Promise<BranchRecord> {
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
      nonce: catalog.newNonce(),
      parent,
      ...(creds ? { role: creds.role, role_password: creds.password } : {}),
    });
    if (claimed) return (await records.findByName(e.registry, name))!;
  }
  throw new PgxError('BRANCH_FAILED', `No free branch name for this identity (tried ${candidates.join(', ')}).`, 'Run `pgx agent gc`, or `pgx agent ls --all` to see what holds those names.');
}

/**
 * Makes the record's database, never under its final name: the record's nonce is written first, the clone is made
 * as `pgx_new_<nonce>` (a name nobody else can know), stamped with identity and nonce, given its guards, and then
 * renamed into place in the same transaction that marks the record active. So at every instant the branch name
 * holds either nothing or a database carrying this record's nonce, and a database that appears there by anyone
 * else's hand is never adopted, stamped, handed out or dropped. A `pgx_new_<nonce>` left by a killed creation is
 * resumed (stamped: guards and rename) or, unstamped (killed between CREATE and COMMENT), dropped and made again:
 * its name, recorded before it existed, is the proof it is ours.
 */
async function createBranchDatabase(e: EngineContext, rec: BranchRecord, opts: EnsureOptions & { copyFrom?: string | null }): Promise<{ record: BranchRecord; guards: GuardResult; method: ForkMethod; note?: string; frozen?: FrozenUse }> {
  const reg = e.registry;
  const there = await catalog.databaseInfo(reg, rec.name);
  if (there.exists) {
    // A rename committed with its record is active; only a legacy record (or a hand-edited one) gets here ours.
    if (rec.state === 'creating' && catalog.isOwnBranch(there, rec)) {
      const guards = await applyGuards(reg, rec.name, e.config);
      if (rec.role && rec.role_password) await roles.prepareBranchRole(e, rec.name, rec.role, rec.role_password);
      return { record: await records.markActive(reg, rec.name, 'clone', e.config.idleTtlMs, { template: null }), guards, method: rec.parent ? 'template-copy' : 'template' };
    }
    await dropCreation(e, rec).catch(() => {}); // ours; gc would drop it otherwise
    throw foreignBranch(rec);
  }
  // Record first: a creation under a record not 'creating' (its database vanished) or without a nonce gets a new one.
  if (rec.state !== 'creating' || rec.nonce === null) rec = await records.setNonce(reg, rec.name, catalog.newNonce());
  const nonce = rec.nonce!;
  const tmp = catalog.creationName(nonce);
  const stamp = { kind: 'branch', identityKey: rec.identity_key, nonce } as const;
  const left = await catalog.databaseInfo(reg, tmp);
  if (left.exists && !catalog.isOwnBranch(left, rec)) await dropCreation(e, rec);
  // The baseline's template build: read BEFORE the clone (a refresh swapping the template in between then makes the
  // branch count as changed, never a newer build's contents pass for its own). null: not the template's contents.
  let baseTemplate: string | null = null;
  let method: ForkMethod = rec.parent ? 'template-copy' : 'template';
  let note: string | undefined;
  let frozen: FrozenUse | undefined;
  try {
    if (!left.exists || !catalog.isOwnBranch(left, rec)) {
      const clone = async () => {
        const template = await ensureTemplate(e);
        baseTemplate = (await catalog.databaseOid(reg, template)) ?? null;
        await cloneDatabase(e, tmp, template, await planClone(e, template, opts.fileCopyFromBytes), { what: `branch "${rec.name}" (a clone of the template "${template}")` });
      };
      // A template refresh can swap the template between ensureTemplate's unlocked look and the clone: once more.
      const fromTemplate = () => clone().catch((err: unknown) => (catalog.sqlstateOf(err) === catalog.SQLSTATE.INVALID_CATALOG_NAME ? clone() : Promise.reject(err)));
      if (opts.copyFrom) {
        try {
          // One frozen copy of the parent per state of it, shared by its forks (freeze.ts, decision 400).
          frozen = await forkViaFrozenCopy(e, opts.copyFrom, tmp);
          method = 'frozen';
        } catch (err) {
          if (err instanceof FrozenCopyWaitError) throw err; // not the template instead: the next ensure clones the copy
          // No room for the copy: refused, not replaced by a template clone (another copy, and not what was asked).
          if (isDiskBudgetError(err)) throw err;
          // The fork can't be made (the parent vanished, a restore failed): the branch gets the template, and says so.
          await dropCreation(e, rec);
          rec = await records.setLineage(reg, rec.name, null);
          note = `copying "${opts.copyFrom}" failed (${firstLine(err)})`;
          method = 'template';
          await fromTemplate();
        }
      } else {
        await fromTemplate();
        if (rec.parent) method = 'unchanged';
      }
      await catalog.writeStamp(reg, tmp, stamp);
    }
  } catch (err) {
    await dropCreation(e, rec).catch(() => {});
    if (rec.state === 'creating') await records.deleteRecord(reg, rec.name).catch(() => {});
    if (isDiskBudgetError(err)) throw err; // its own code and figures: the refusal says what to free
    throw new PgxError(
      'BRANCH_FAILED',
      `Could not create branch "${rec.name}": ${(err as Error).message ?? String(err)}`,
      // a typed cause (the source is missing, a foreign template) already names its fix: a refresh would not be it
      err instanceof PgxError ? err.hint : catalog.sqlstateOf(err) === catalog.SQLSTATE.INSUFFICIENT_PRIVILEGE ? 'The role in [server] url needs CREATEDB: ALTER ROLE <role> CREATEDB.' : 'Check the server (`pgx agent doctor`); `pgx template refresh` rebuilds the template.',
      { cause: err },
    );
  }
  const guards = await applyGuards(reg, tmp, e.config);
  // The branch role (recorded with the record): CONNECT and its objects, before the rename makes it the branch.
  if (rec.role && rec.role_password) await roles.prepareBranchRole(e, tmp, rec.role, rec.role_password);
  try {
    const record = await inTransaction(reg, async () => {
      await catalog.renameDatabase(reg, tmp, rec.name);
      return records.markActive(reg, rec.name, 'clone', e.config.idleTtlMs, { template: baseTemplate });
    });
    return { record, guards, method, ...(note ? { note } : {}), ...(frozen ? { frozen } : {}) };
  } catch (err) {
    const code = catalog.sqlstateOf(err);
    if (code !== catalog.SQLSTATE.DUPLICATE_DATABASE && code !== catalog.SQLSTATE.UNIQUE_VIOLATION) throw err;
    // Someone made a database under the branch name while this one was being cloned.
    await dropCreation(e, rec).catch(() => {});
    throw foreignBranch(rec);
  }
}

/** An error's first line, for a one-sentence note. */
const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0]!.slice(0, 200);

/** Drops the record's `pgx_new_<nonce>` if it is there and ours (its stamp carries the nonce, or it has no comment). */
async function dropCreation(e: EngineContext, rec: BranchRecord): Promise<boolean> {
  if (rec.nonce === null) return false;
  const tmp = catalog.creationName(rec.nonce);
  const info = await catalog.databaseInfo(e.registry, tmp);
  if (!info.exists || !(info.comment === null || catalog.isOwnBranch(info, rec))) return false;
  await catalog.dropDatabase(e.registry, tmp);
  return true;
}

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

const untouched = (name: string, action: DownResult['action'], role: string | null = null): DownResult => ({ name, action, role, backends_terminated: 0, backends_remaining: 0 });

/** A record whose database is not pgx's: reported, never touched, with the way out. */
function foreign(rec: BranchRecord): DownResult {
  return { ...untouched(rec.name, 'foreign', rec.role), fix: `pgx agent forget --branch ${rec.name}` };
}

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
  const r = cur.role ? await roles.retireBranchRole(e, cur.role, waitMs) : { sessions_terminated: 0, sessions_remaining: 0 };
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

/**
 * `pgx agent forget`: deletes the record and nothing else (a creation's own `pgx_new_<nonce>` aside, which no
 * other record could claim). Refused while the record's database is provably pgx's: that is `down`'s to drop.
 */
export async function forgetBranch(e: EngineContext, rec: BranchRecord): Promise<DownResult> {
  return underIdentityLock(e, rec, async (cur) => {
    const info = await catalog.databaseInfo(e.registry, cur.name);
    if (catalog.isOwnBranch(info, cur)) {
      throw new PgxError('REFUSED', `"${cur.name}" is pgx's own branch; forgetting its record would orphan it.`, `Use \`pgx agent down --branch ${cur.name}\` (add --now to drop it at once).`);
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
  errors: { name: string; error: string }[];
}

/**
 * Drops what is past its deadline (idle, grace, or a creation abandoned for 10 minutes). Bounded by `limit`.
 * A branch whose lock is held (being ensured right now) is skipped, and the deadline is re-checked under the lock.
 */
export async function gc(e: EngineContext, limit = 1000): Promise<GcResult> {
  const reg = e.registry;
  const out: GcResult = { dropped: [], foreign: [], pool_dropped: [], frozen_dropped: [], errors: [] };
  for (const rec of await records.expiredRecords(reg, limit)) {
    try {
      const r = await underIdentityLock(e, rec, async (cur) => {
        if (!(await records.isExpired(reg, cur.name))) return untouched(cur.name, 'skipped');
        return dropLocked(e, cur);
      }, { tryOnly: true });
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
  return out;
}
