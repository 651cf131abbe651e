// The warm pool: branches cloned ahead of demand from the project's current template, so that an ensure that would
// clone (SubagentStart, above all) claims one instead, and no clone runs on a hook's path.
//
// A member is a database named pgx_pool_<template slug>_<6>, stamped `pgx:pool:{project, template, generation}`,
// created with ALLOW_CONNECTIONS false (nobody can touch it before it is claimed) and carrying the guards already.
// `generation` is the oid of the template database it was cloned from: a template refresh builds a new database, so
// members of the old build stop matching the claim's join and are retired, then dropped by gc.
//
// Claim: ONE transaction on the registry connection, under the claimant's identity lock: lock the oldest ready member
// (FOR UPDATE SKIP LOCKED), check its stamp, RENAME it to the branch's name, stamp it as the branch, allow
// connections, delete the member's record, mark the branch's record active. Renames, comments and ALLOW_CONNECTIONS
// are transactional, so a crash anywhere leaves the member (rolled back) or the branch (committed), never both or
// neither, and the server work is O(1): a rename and a few catalog rows, whatever the template's size.
//
// Fill: single-flight per template (an advisory try-lock held for the whole run), normally in a detached background
// process at low priority (src/hooks/claude/pool-fill.ts). Each member is recorded ('filling') before it is created, stamped right
// after, given its guards, then marked ready; under the lock any 'filling' record is a dead filler's, so every
// fill first sweeps what earlier ones left.
import { randomBytes } from 'node:crypto';
import type { Config } from '../project/config.js';
import { ensureSchema, inTransaction } from '../registry/connection.js';
import { poolLockHeld, tryPoolLock, withLock, LOCK } from '../registry/locks.js';
import * as members from '../registry/pool.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { isDiskBudgetError } from './disk-budget.js';
import type { EngineContext } from './context.js';
import { applyGuards } from './guards.js';
import { ensureTemplate, templateName } from './template.js';
import { rulesDigest } from '../mask/rules.js';
import * as roles from './roles.js';

/**
 * Members must carry the guards the branch would get, and be prepared for the same roles mode (a member of the
 * per-branch modes has its role already): a config change makes the others unclaimable (gc drops them).
 */
export function guardsKey(config: Config): string {
  return config.roles === 'admin'
    ? JSON.stringify(config.guards)
    : JSON.stringify({ ...config.guards, roles: config.roles });
}

const rand6 = () => Array.from(randomBytes(6), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

/** pgx_pool_<slug>_<h8>_<6>: ≤ 50 bytes, under the 63-byte identifier limit. */
export function memberName(template: string): string {
  return `${template.replace(/^pgx_tpl_/, 'pgx_pool_')}_${rand6()}`;
}

/**
 * Is this member's database ours to drop: stamped as THIS member (the stamp names it: another member's stamp copied
 * onto a stranger does not vouch for it), or not stamped yet: its random name was recorded before it was created,
 * so nobody else made it (the same rule as a branch's `pgx_new_<nonce>`).
 */
function isOurMember(m: members.MemberRow): boolean {
  if (m.comment === null) return true;
  return isMemberStamp(catalog.parseStamp(m.comment), m);
}

function isMemberStamp(
  s: catalog.Stamp | undefined,
  m: { name: string; project: string; template: string; generation: string },
): boolean {
  // A member stamped before stamps named their member (none) is judged as before, like a branch without a nonce.
  return (
    s?.kind === 'pool' &&
    (s.member ?? m.name) === m.name &&
    s.project === m.project &&
    s.template === m.template &&
    s.generation === m.generation
  );
}

/**
 * Claims a ready member as `rec`'s database (rec: a 'creating' record whose database does not exist, under its
 * identity lock). Undefined when the pool has none: the caller clones.
 */
export async function claimMember(e: EngineContext, rec: BranchRecord): Promise<BranchRecord | undefined> {
  const reg = e.registry;
  const template = templateName(e.config.project, e.config.source);
  let foreign: string | undefined;
  const claim = () =>
    inTransaction(reg, async () => {
      // With [mask] rules, a member of a template that predates them is never claimed (decision 465).
      const m = await members.lockClaimable(reg, template, guardsKey(e.config), rulesDigest(e.config.mask));
      if (!m) return undefined;
      if (m.project !== e.config.project || !isMemberStamp(catalog.parseStamp(m.comment), m)) {
        foreign = m.name; // never renamed: pgx does not alter what its stamp does not vouch for
        return undefined;
      }
      await catalog.renameDatabase(reg, m.name, rec.name);
      // The record's nonce (written before this claim, as before a clone): the stamp that makes it this record's.
      await catalog.writeStamp(reg, rec.name, { kind: 'branch', identityKey: rec.identity_key, nonce: rec.nonce! });
      await catalog.allowConnections(reg, rec.name, true);
      // The member's role, prepared NOLOGIN at fill (it owns the objects already): the branch's from now on, and it
      // logs in. In the same transaction, so a crash leaves it the member's (NOLOGIN) or the branch's (recorded).
      if (m.role && m.role_password) {
        await roles.claimMemberRole(e, m.role);
        await records.setRole(reg, rec.name, m.role, m.role_password);
      }
      await members.deleteMember(reg, m.name);
      return records.markActive(reg, rec.name, 'claim', e.config.idleTtlMs, { template: String(m.generation) });
    });
  const claimed = await claim().catch(async (err: unknown) => {
    const code = catalog.sqlstateOf(err);
    // A role allowed the branch records but not the pool's (a registry set up by hand): the pool is only a
    // shortcut, so the ensure clones as it always did.
    if (code === catalog.SQLSTATE.INSUFFICIENT_PRIVILEGE) return undefined;
    // A database appeared under the branch name meanwhile: the claim rolled back; createBranchDatabase refuses it.
    if (code === catalog.SQLSTATE.DUPLICATE_DATABASE) return undefined;
    // A registry made before the pool existed (or before branch roles): its tables and columns are created on first
    // use, as the branch table's are.
    if (code !== catalog.SQLSTATE.UNDEFINED_TABLE && code !== catalog.SQLSTATE.UNDEFINED_COLUMN) throw err;
    await ensureSchema(reg);
    return claim();
  });
  if (foreign) {
    await members.markRetired(reg, foreign);
    return claimMember(e, rec);
  }
  // A member made without a role (the admin lost CREATEROLE since, under "auto") for a branch that should have one:
  // the role is made now, on the claim's path (its ownership transfer is what the pool normally keeps off it).
  if (claimed && !claimed.role && rec.role && rec.role_password) {
    const withRole = await records.setRole(reg, rec.name, rec.role, rec.role_password);
    await roles.prepareBranchRole(e, rec.name, rec.role, rec.role_password);
    return withRole;
  }
  return claimed;
}

export interface PoolTarget {
  /** How many ready members the filler aims for. */
  target: number;
  /**
   * What bounds it: the configured size, the recent peak, the cap, pool_max_bytes; after a fill, `disk_reserve`: the
   * next member would have taken the file system below twice [disk] reserve (disk-budget.ts), so the fill stopped.
   */
  bound: 'off' | 'size' | 'peak' | 'pool_max' | 'pool_max_bytes' | 'disk_reserve';
}

/** max(size, recent peak), capped by pool_max and by pool_max_bytes / template size. Size 0 turns the pool off. */
export function poolTarget(pool: Config['pool'], peak: number, templateBytes: number): PoolTarget {
  if (pool.size === 0) return { target: 0, bound: 'off' };
  let t: PoolTarget = peak > pool.size ? { target: peak, bound: 'peak' } : { target: pool.size, bound: 'size' };
  if (t.target > pool.max) t = { target: pool.max, bound: 'pool_max' };
  const byBytes = templateBytes > 0 ? Math.floor(pool.maxBytes / templateBytes) : Infinity;
  if (t.target > byBytes) t = { target: byBytes, bound: 'pool_max_bytes' };
  return t;
}

export interface PoolStatus {
  project: string;
  template: string;
  /** The template build members are cloned from (its database oid); null: no template yet. */
  generation: string | null;
  ready: number;
  filling: number;
  stale: number;
  target: number;
  bound: PoolTarget['bound'];
  size: number;
  peak: number;
  pool_max: number;
  pool_max_bytes: number;
  template_bytes: number | null;
  ready_bytes: number;
  oldest_ready_at: string | null;
  filler_running: boolean;
}

export async function poolStatus(e: EngineContext): Promise<PoolStatus> {
  const reg = e.registry;
  const template = templateName(e.config.project, e.config.source);
  const generation = (await catalog.databaseOid(reg, template)) ?? null;
  const templateBytes = generation ? await catalog.databaseSize(reg, template) : null;
  const peak = await members.recentPeak(reg, template);
  const c = await members.countMembers(reg, template, guardsKey(e.config));
  const t = poolTarget(e.config.pool, peak, templateBytes ?? 0);
  return {
    project: e.config.project,
    template,
    generation,
    ready: c.ready,
    filling: c.filling,
    stale: c.stale,
    target: t.target,
    bound: t.bound,
    size: e.config.pool.size,
    peak,
    pool_max: e.config.pool.max,
    pool_max_bytes: e.config.pool.maxBytes,
    template_bytes: templateBytes,
    ready_bytes: c.ready_bytes,
    oldest_ready_at: c.oldest_ready_at ? new Date(c.oldest_ready_at).toISOString() : null,
    filler_running: await poolLockHeld(reg, template),
  };
}

export interface FillResult {
  template: string;
  /** Another filler holds the pool's lock: this one did nothing. */
  busy: boolean;
  created: string[];
  swept: string[];
  target: number;
  bound: PoolTarget['bound'];
  ready: number;
  /** The fill stopped short of its target for the disk budget: the refusal's text (its figures and fix). */
  disk_note?: string;
  elapsed_ms: number;
}

/** Tops the pool up to its target (single-flight: returns busy when another filler runs). */
export async function fillPool(
  e: EngineContext,
  progress: (msg: string) => void = () => {},
  opts: { settleMs?: number } = {},
): Promise<FillResult> {
  const t0 = performance.now();
  const reg = e.registry;
  const template = templateName(e.config.project, e.config.source);
  const result = await tryPoolLock(reg, template, async () => {
    const swept = await sweepLocked(e, template, false);
    const tpl = await ensureTemplate(e);
    const peak = await members.recordDemand(reg, template);
    const t: PoolTarget = poolTarget(e.config.pool, peak, await catalog.databaseSize(reg, tpl));
    const created: string[] = [];
    let ready = (await members.countMembers(reg, template, guardsKey(e.config))).ready;
    let diskNote: string | undefined;
    // Bounded by the target: claims racing the filler must not keep it cloning forever.
    while (ready < t.target && created.length < t.target) {
      if (opts.settleMs) await waitForLull(e, template, opts.settleMs);
      progress(`pool: cloning member ${ready + 1} of ${t.target} …`);
      try {
        created.push(await createMember(e, tpl));
      } catch (err) {
        if (!isDiskBudgetError(err)) throw err;
        // The pool is a shortcut: it stops short of the reserve, and a branch asked for gets the room left.
        diskNote = err.message;
        progress(`pool: stopped at ${ready} of ${t.target}: ${err.message}`);
        break;
      }
      ready = (await members.countMembers(reg, template, guardsKey(e.config))).ready;
    }
    return {
      template,
      busy: false,
      created,
      swept,
      target: t.target,
      bound: diskNote ? 'disk_reserve' : t.bound,
      ready,
      ...(diskNote ? { disk_note: diskNote } : {}),
    };
  });
  const elapsed_ms = Math.round(performance.now() - t0);
  if (result) return { ...result, elapsed_ms };
  return {
    template,
    busy: true,
    created: [],
    swept: [],
    target: 0,
    bound: 'size',
    ready: (await members.countMembers(reg, template, guardsKey(e.config))).ready,
    elapsed_ms,
  };
}

/**
 * The background filler starts on the first claim of a burst (20 SubagentStarts at once). Its clones run in
 * the server, which `nice` does not reach, and took the CPU and disk from the burst's remaining claims (measured: the
 * e2e fan-out's SubagentStart p50 7.9 s with the filler cloning alongside). So before each member it waits until no
 * branch of this template was made for `settleMs`, for at most 30 s: refilling comes after the burst.
 */
async function waitForLull(e: EngineContext, template: string, settleMs: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const since = await members.msSinceLastBranch(e.registry, template);
    if (since === null || since >= settleMs || Date.now() >= until) return;
    await new Promise((res) => setTimeout(res, Math.min(settleMs - since, until - Date.now()) + 10));
  }
}

/** One member: recorded, created refusing connections, stamped, guarded, ready. */
async function createMember(e: EngineContext, template: string): Promise<string> {
  const reg = e.registry;
  // The generation is read BEFORE the clone: if a refresh swaps the template in between, the member is recorded
  // with the old build's oid although cloned from the new one, so it is never claimed (only swept). Read after, a
  // member cloned from the old build could pass as the new one's.
  const generation = await catalog.databaseOid(reg, template);
  if (!generation) throw new Error(`the template ${template} disappeared (a refresh is swapping it): retry`);
  const name = memberName(template);
  const creds = await roles.credentialsFor(e);
  await members.insertFilling(reg, {
    name,
    project: e.config.project,
    template,
    generation,
    guards: guardsKey(e.config),
    ...(creds ? { role: creds.role, role_password: creds.password } : {}),
  });
  // The clone method the branches get (clone-method.ts: copy-on-write where the server has reflinks), within the disk
  // budget the pool keeps (twice the reserve: disk-budget.ts). A refusal made nothing: the record goes with it.
  const plan = await planClone(e, template);
  try {
    await cloneDatabase(e, name, template, plan, {
      what: `warm-pool member "${name}" (a clone of the template "${template}")`,
      speculative: true,
      allowConnections: false,
    });
  } catch (err) {
    if (isDiskBudgetError(err)) await members.deleteMember(reg, name);
    throw err;
  }
  await catalog.writeStamp(reg, name, { kind: 'pool', project: e.config.project, template, generation, member: name });
  await applyGuards(reg, name, e.config);
  // The role is prepared here, off the hook's path: created NOLOGIN, owner of the member's objects, its only
  // CONNECT grantee. The claim turns LOGIN on in its transaction.
  if (creds)
    await roles.prepareBranchRole(e, name, creds.role, creds.password, { login: false, refusesConnections: true });
  await members.markReady(reg, name, await catalog.databaseSize(reg, name));
  return name;
}

/**
 * Under the pool lock: drops what is dead (a dead filler's 'filling' members, retired ones, other builds'), or with
 * `all` every member (drain). A database whose stamp is not this record's pool stamp is never dropped, only forgotten.
 */
async function sweepLocked(
  e: EngineContext,
  template: string,
  all: boolean,
  limit: number | null = null,
): Promise<string[]> {
  const reg = e.registry;
  const dropped: string[] = [];
  for (const m of await members.takeForDrop(reg, template, all, limit)) {
    const info = await catalog.databaseInfo(reg, m.name);
    if (info.exists && isOurMember({ ...m, comment: info.comment })) {
      await catalog.dropDatabase(reg, m.name);
      dropped.push(m.name);
    }
    // Its role after the database. One left owning something elsewhere is NOLOGIN and doctor lists it.
    if (m.role) await roles.dropBranchRole(e, m.role);
    await members.deleteMember(reg, m.name);
  }
  return dropped;
}

export interface DrainResult {
  template: string;
  dropped: string[];
  elapsed_ms: number;
}

/** Drops every member of the project's template (waiting for a running filler to finish first). */
export async function drainPool(e: EngineContext): Promise<DrainResult> {
  const t0 = performance.now();
  const template = templateName(e.config.project, e.config.source);
  const dropped = await withLock(e.registry, LOCK.pool(template), () => sweepLocked(e, template, true));
  return { template, dropped, elapsed_ms: Math.round(performance.now() - t0) };
}

/**
 * gc: every template's dead members (server-wide), at most `limit` (SubagentStop's opportunistic gc passes a small
 * one), skipping a template whose filler is running (it sweeps itself).
 */
export async function gcPool(e: EngineContext, limit: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const template of await members.templatesToSweep(e.registry)) {
    if (dropped.length >= limit) break;
    dropped.push(
      ...((await tryPoolLock(e.registry, template, () => sweepLocked(e, template, false, limit - dropped.length))) ??
        []),
    );
  }
  return dropped;
}

/** After a template refresh: the older builds' members can no longer be claimed; gc drops them. */
export async function retireOldMembers(e: EngineContext): Promise<number> {
  const template = templateName(e.config.project, e.config.source);
  const generation = await catalog.databaseOid(e.registry, template);
  return generation ? members.retireOtherGenerations(e.registry, template, generation) : 0;
}
