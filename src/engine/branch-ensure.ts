// A branch made or found: ensure (attach | revive | claim | clone), safe under concurrent callers. Its record is
// written before its database, which is made as pgx_new_<nonce> and renamed into place. Its end (retire, drop,
// forget, gc) is branch-retire.ts's.
import { PgxError } from '../lib/errors.js';
import { hashBranchName, identityKey, kindOf, shortBranchName, type Identity } from './identity.js';
import * as records from '../registry/records.js';
import { setLineage } from '../registry/lineage.js';
import { setForkPoint } from '../registry/fork-points.js';
import type { BranchRecord } from '../registry/records.js';
import { takeLease, withIdentityLock } from '../registry/locks.js';
import { inTransaction } from '../registry/connection.js';
import * as catalog from '../server/catalog.js';
import type { ConnParams } from '../server/conn-params.js';
import type { EngineContext } from './context.js';
import { applyGuards, type GuardResult } from './guards.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { isDiskBudgetError } from './disk-budget.js';
import { ensureTemplate, templateName } from './template.js';
import * as roles from './roles.js';
import { claimMember } from './pool.js';
import { finishSwap } from './reset.js';
import { defaultRequest, planFork, type ForkMethod, type ForkPlan, type ForkRequest } from './fork.js';
import { forkViaFrozenCopy, type FrozenUse } from './freeze.js';
import { ForkUnavailableError, forkOrMiss, missReason, type ForkMiss } from './fork-miss.js';

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
   * fork asked for could not be made, why (`note`, one sentence; the branch then has the template). `miss`: the
   * session's state could not be copied in time and `[agent] fork_fallback = "template"` gave the template instead
   * (fork-miss.ts): the caller says so to everyone concerned.
   */
  fork?: { parent: string | null; method: ForkMethod; note?: string; frozen?: FrozenUse; miss?: ForkMiss };
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
  const done = (
    record: BranchRecord,
    method: EnsureMethod,
    guards?: GuardResult,
    fork?: EnsureResult['fork'],
  ): EnsureResult => ({
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
      if (plan && (rec.parent ?? null) !== plan.parent) rec = await setLineage(reg, rec.name, plan.parent); // record first
    }
    const fork = (method: ForkMethod, note = plan?.note, frozen?: FrozenUse, miss?: ForkMiss): EnsureResult['fork'] =>
      plan
        ? {
            parent: rec!.parent ?? null,
            method,
            ...(note ? { note } : {}),
            ...(frozen ? { frozen } : {}),
            ...(miss ? { miss } : {}),
          }
        : undefined;
    // The warm pool gives the database when it has one (a member renamed into place, stamped with this record's
    // nonce, in one transaction); a name already held by a database is createBranchDatabase's to judge. A fork of
    // an unchanged parent is the template's contents too.
    if (!rec.db_exists) {
      if (rec.state !== 'creating' || rec.nonce === null)
        rec = await records.setNonce(reg, rec.name, catalog.newNonce()); // record first
      if (!plan?.copyFrom) {
        const claimed = await claimMember(e, rec);
        if (claimed) return done(claimed, 'claim', undefined, fork(plan?.parent ? 'unchanged' : 'template'));
      }
    }
    const made = await createBranchDatabase(e, rec, { ...opts, copyFrom: plan?.copyFrom ?? null });
    rec = made.record;
    return done(made.record, 'clone', made.guards, fork(made.method, made.note ?? plan?.note, made.frozen, made.miss));
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
  if (withRole.role && withRole.role_password)
    await roles.prepareBranchRole(e, withRole.name, withRole.role, withRole.role_password, {
      login: withRole.state === 'active',
    });
  return withRole;
}

/** 16 of [a-z0-9] (~82 bits): the creation's nonce, which names and stamps it. */

/** The refusal for a record whose name is held by a database pgx cannot prove it made. */
export function foreignBranch(rec: BranchRecord): PgxError {
  const selector =
    rec.kind === 'exec' && rec.exec_id !== null && /^[A-Za-z0-9._-]+$/.test(rec.exec_id)
      ? `--id ${rec.exec_id}`
      : `--branch ${rec.name}`;
  return new PgxError(
    'NOT_PGX_DATABASE',
    `Database "${rec.name}" exists but is not the one pgx made for this branch (it lacks the stamp pgx recorded for it); pgx will not use, alter or drop it.`,
    `If it is not needed, drop or rename it yourself; or run \`pgx agent forget ${selector}\` to forget pgx's ` +
      `record (the database is left as it is), and pgx makes the branch under another name.`,
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
  throw new PgxError(
    'BRANCH_FAILED',
    `No free branch name for this identity (tried ${candidates.join(', ')}).`,
    'Run `pgx agent gc`, or `pgx agent ls --all` to see what holds those names.',
  );
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
async function createBranchDatabase(
  e: EngineContext,
  rec: BranchRecord,
  opts: EnsureOptions & { copyFrom?: string | null },
): Promise<{
  record: BranchRecord;
  guards: GuardResult;
  method: ForkMethod;
  note?: string;
  frozen?: FrozenUse;
  miss?: ForkMiss;
}> {
  const reg = e.registry;
  const there = await catalog.databaseInfo(reg, rec.name);
  if (there.exists) {
    // A rename committed with its record is active; only a legacy record (or a hand-edited one) gets here ours.
    if (rec.state === 'creating' && catalog.isOwnBranch(there, rec)) {
      const guards = await applyGuards(reg, rec.name, e.config);
      if (rec.role && rec.role_password) await roles.prepareBranchRole(e, rec.name, rec.role, rec.role_password);
      return {
        record: await records.markActive(reg, rec.name, 'clone', e.config.idleTtlMs, { template: null }),
        guards,
        method: rec.parent ? 'template-copy' : 'template',
      };
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
  let miss: ForkMiss | undefined;
  try {
    if (!left.exists || !catalog.isOwnBranch(left, rec)) {
      const clone = async () => {
        const template = await ensureTemplate(e);
        baseTemplate = (await catalog.databaseOid(reg, template)) ?? null;
        await cloneDatabase(e, tmp, template, await planClone(e, template, opts.fileCopyFromBytes), {
          what: `branch "${rec.name}" (a clone of the template "${template}")`,
        });
      };
      // A template refresh can swap the template between ensureTemplate's unlocked look and the clone: once more.
      const fromTemplate = () =>
        clone().catch((err: unknown) =>
          catalog.sqlstateOf(err) === catalog.SQLSTATE.INVALID_CATALOG_NAME ? clone() : Promise.reject(err),
        );
      if (opts.copyFrom) {
        const copyFrom = opts.copyFrom;
        const forked = rec;
        let tries = 0;
        // One frozen copy of the parent per state of it, shared by its forks (freeze.ts, decision 400); when it can't be
        // made in time, a miss: no branch ("wait"), or the template when the user said so (fork-miss.ts, decision 485).
        // No room for the copy is a refusal of its own, never the template (another copy, and not what was asked).
        const got = await forkOrMiss(e, forked, copyFrom, async () => {
          if (tries++) await dropCreation(e, forked); // an earlier try's leftover
          // Its fork point is recorded before the clone, the copy's lease held: gc keeps the copy from then on.
          return forkViaFrozenCopy(e, copyFrom, tmp, (copy) => setForkPoint(reg, forked.name, copy));
        });
        if (got.frozen) {
          frozen = got.frozen;
          method = 'frozen';
        } else {
          miss = got.miss;
          await dropCreation(e, rec);
          await setForkPoint(reg, rec.name, null);
          rec = await setLineage(reg, rec.name, null);
          note = `the copy of "${copyFrom}" could not be made in time: ${missReason(miss)}`;
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
    if (err instanceof ForkUnavailableError) throw err; // its own words (fork-miss.ts): the callers tell everyone
    throw new PgxError(
      'BRANCH_FAILED',
      `Could not create branch "${rec.name}": ${(err as Error).message ?? String(err)}`,
      // a typed cause (the source is missing, a foreign template) already names its fix: a refresh would not be it
      err instanceof PgxError
        ? err.hint
        : catalog.sqlstateOf(err) === catalog.SQLSTATE.INSUFFICIENT_PRIVILEGE
          ? 'The role in [server] url needs CREATEDB: ALTER ROLE <role> CREATEDB.'
          : 'Check the server (`pgx agent doctor`); `pgx template refresh` rebuilds the template.',
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
    return {
      record,
      guards,
      method,
      ...(note ? { note } : {}),
      ...(frozen ? { frozen } : {}),
      ...(miss ? { miss } : {}),
    };
  } catch (err) {
    const code = catalog.sqlstateOf(err);
    if (code !== catalog.SQLSTATE.DUPLICATE_DATABASE && code !== catalog.SQLSTATE.UNIQUE_VIOLATION) throw err;
    // Someone made a database under the branch name while this one was being cloned.
    await dropCreation(e, rec).catch(() => {});
    throw foreignBranch(rec);
  }
}

/** Drops the record's `pgx_new_<nonce>` if it is there and ours (its stamp carries the nonce, or it has no comment). */
export async function dropCreation(e: EngineContext, rec: BranchRecord): Promise<boolean> {
  if (rec.nonce === null) return false;
  const tmp = catalog.creationName(rec.nonce);
  const info = await catalog.databaseInfo(e.registry, tmp);
  if (!info.exists || !(info.comment === null || catalog.isOwnBranch(info, rec))) return false;
  await catalog.dropDatabase(e.registry, tmp);
  return true;
}
