// Frozen copies: a fan-out of subagents copies its session's branch ONCE, not once per subagent (decision 400).
//
// A branch with a connection open can't be a TEMPLATE (55006), so a fork of it is a pg_dump | psql, ~9 s per GB; ten
// subagents starting at once made ten dumps and all missed SubagentStart's deadline. Instead the forks of one parent
// share a frozen copy of it: a pgx-stamped database that refuses connections, so cloning it (… TEMPLATE it)
// works at once (FILE_COPY for large ones, a copy-on-write clone on PostgreSQL 18 with reflinks: clone-method.ts) and
// it never holds a connection slot. At most one copy of a parent is made at a time (its freeze lock, across hooks,
// the broker and the CLI); the forks waiting for it clone it as soon as it is ready.
//
// Which copy serves a fork (the fork's ticket is drawn when it arrives, before it waits for anything):
// - a copy whose ticket is higher than the fork's: it began after the fork arrived, so it holds everything the parent
//   had committed when the fork arrived (pg_dump's snapshot, or the TEMPLATE copy, is taken after its ticket);
// - an older copy whose recorded signature equals the parent's signature now: "fresh", proven as follows. A signature
//   (catalog.databaseActivity) is null unless every backend on the parent is idle (or idle in a transaction) and
//   readable, no prepared transaction is on it, and the session counters are tracked. Around the copy the parent's
//   activity is read twice; the copy gets a signature only when the two readings have the same backends (pid, start,
//   last state change, state), the same counter resets, and a session count grown by exactly the copy's own dump
//   sessions. A commit needs a statement (a COMMIT, or a statement in autocommit), and every statement moves its
//   backend's state_change; a session that came and went since moved the session count; a procedure committing inside
//   one long statement shows as 'active', which has no signature. So an equal signature later proves nothing was
//   committed on the parent since before the copy began.
// - anything else (no copy, or any doubt): a new copy.
//
// Crash safety: the copy is recorded (pgx_frozen, state 'making') before its database pgx_frz_<nonce> exists, stamped
// after, marked ready last. A maker killed at any step leaves a 'making' record; its freeze lock went with its
// connection, so the next fork of that parent (which holds the lock) or gc drops the leftover (unstamped, or stamped
// with the record's nonce: nothing else under that name) and its record. Waiting forks are waiting on the server's
// lock, which the dead maker's connection released: they go on, and one of them makes the copy.
// A fork clones a copy holding its lease (a shared lock); a copy is dropped only with its lease taken exclusively.
// gc drops a copy nobody clones once a newer one of its parent is ready, or its parent is not an active branch.
// Here: which copy serves a fork, the wait, `pgx agent freeze`; the proof is freeze-signature.ts, the making of a
// copy freeze-make.ts, its drop and gc freeze-gc.ts.
import { PgxError } from '../lib/errors.js';
import * as frozen from '../registry/frozen.js';
import { keptCopiesReadOnly } from '../registry/fork-points.js';
import { releaseFrozenLease, takeFrozenLease, withFreezeLock } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import { cloneDatabase, planClone } from './clone-method.js';
import type { EngineContext } from './context.js';
import { dropFrozen, dropFrozenIfUnused, isOwn } from './freeze-gc.js';
import { freezeSessionState } from './freeze-make.js';
import { activitySignature } from './freeze-signature.js';
import type { CopyMethod } from './copy-method.js';

/** Which frozen copy a fork cloned, and whether this fork made it (`made`: how) or found it ready. */
export interface FrozenUse {
  copy: string;
  reused: boolean;
  made?: 'template-copy' | CopyMethod;
  /** Why an existing copy served: it began after this fork arrived, or the parent provably did not change since. */
  why?: 'newer' | 'unchanged';
}

/**
 * The wait for another process's copy of the parent ran out of the hook's time. Not a reason to give the subagent
 * the template instead: the copy is nearly there, and the next ensure (before the subagent's next Bash command) clones it.
 */
export class FrozenCopyWaitError extends PgxError {
  constructor(parent: string, waitedMs: number) {
    super(
      'BRANCH_FAILED',
      `The copy of "${parent}" that its subagents share was still being made by another pgx process after ${Math.round(waitedMs / 1000)} s.`,
      'Nothing is wrong: the copy takes as long as a pg_dump of the branch. Once it is ready a new branch clones it at once; `pgx agent doctor` shows it.',
    );
  }
}

/** Left to the hook to answer with, after a wait for the parent's copy gave up. */
const ANSWER_MARGIN_MS = 1500;

/** How long a fork may wait for another process's copy of its parent: the hook's time left, less the answer's. */
export function waitBudgetMs(e: EngineContext): number | undefined {
  const a = e.admin;
  if (a.connectDeadlineAt !== undefined) return Math.max(1, a.connectDeadlineAt - Date.now() - ANSWER_MARGIN_MS);
  if (a.statementTimeoutMs !== undefined) return Math.max(1, a.statementTimeoutMs - ANSWER_MARGIN_MS);
  return undefined;
}

/**
 * From this size a hook process (which ends at its deadline) has the copy made by a detached `pgx agent freeze`
 * instead of making it itself: a dump cut off by the deadline would be lost, and every retry cut off again. Below it
 * a copy takes a second or two. PGX_FREEZE_DETACH_FROM_BYTES overrides (tests).
 */
const DETACH_FROM_BYTES = Number(process.env.PGX_FREEZE_DETACH_FROM_BYTES ?? 128 * 1024 * 1024);

/**
 * Makes `into` (which must not exist) a clone of a frozen copy of `parent` that holds everything committed on the
 * parent before this call: an existing copy when one serves (see the top of this file), else a new one made now,
 * here or (a command hook, a large parent) by a detached `pgx agent freeze` this fork waits for.
 */
export async function forkViaFrozenCopy(
  e: EngineContext,
  parent: string,
  into: string,
  /** Told which copy before it is cloned, its lease held: the fork records it as its fork point (fork-point.ts). */
  onChosen: (copy: string) => Promise<void> = async () => {},
): Promise<FrozenUse> {
  const reg = e.registry;
  const ticket = await frozen.drawTicket(reg);
  const t0 = Date.now();
  const budget = waitBudgetMs(e);
  const until = budget === undefined ? Infinity : t0 + budget;
  const chosen = await withFreezeLock(reg, parent, budget, async (): Promise<FrozenUse | 'elsewhere'> => {
    const found = await servingCopy(e, parent, ticket);
    if (found) return leased(e, found);
    if (e.freezeElsewhere && (await catalog.databaseSize(reg, parent)) >= DETACH_FROM_BYTES) return 'elsewhere';
    return leased(e, await makeCopy(e, parent));
  });
  if (chosen === undefined) throw new FrozenCopyWaitError(parent, Date.now() - t0);
  const use = chosen === 'elsewhere' ? await copyMadeElsewhere(e, parent, ticket, t0, until) : chosen;
  try {
    await onChosen(use.copy);
    await cloneDatabase(e, into, use.copy, await planClone(e, use.copy));
  } finally {
    await releaseFrozenLease(reg, use.copy);
  }
  return use;
}

/** Under the freeze lock: takes the copy's lease before the lock goes, so nobody drops it between choice and clone. */
async function leased(e: EngineContext, use: FrozenUse): Promise<FrozenUse> {
  await takeFrozenLease(e.registry, use.copy);
  return use;
}

/**
 * Starts a detached `pgx agent freeze` for this fork's ticket and waits, within the hook's time, for the copy it makes
 * (or one another fork's freezer made meanwhile). If it can't be started, the copy is made here.
 */
async function copyMadeElsewhere(
  e: EngineContext,
  parent: string,
  ticket: string,
  t0: number,
  until: number,
): Promise<FrozenUse> {
  const reg = e.registry;
  // The freezer started now, or another fork's already running (its copy may be older than this fork's ticket: when
  // it ends without one that serves, one more is started for this ticket).
  let starts = 0;
  let ended: number | null | undefined;
  const start = () => {
    starts++;
    ended = undefined;
    const child = e.freezeElsewhere!(parent, ticket);
    void child?.ended.then((code) => (ended = code));
    return child !== undefined;
  };
  let running = start();
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) throw new FrozenCopyWaitError(parent, Date.now() - t0);
    const exitedBefore = ended;
    const got = await withFreezeLock(reg, parent, left, async () => {
      const found = await servingCopy(e, parent, ticket);
      if (found) return leased(e, found);
      return running ? null : leased(e, await makeCopy(e, parent));
    });
    if (got === undefined) throw new FrozenCopyWaitError(parent, Date.now() - t0);
    if (got) return got;
    if (exitedBefore !== undefined) {
      if (starts >= 2)
        throw new PgxError(
          'BRANCH_FAILED',
          `\`pgx agent freeze\` ended (exit ${exitedBefore ?? 'unknown'}) without a copy of "${parent}".`,
          'Run `pgx agent freeze --branch <it>` to see why; `pgx agent doctor` checks the server.',
        );
      running = start();
      continue;
    }
    await new Promise((res) => setTimeout(res, 200));
  }
}

/**
 * `pgx agent freeze`: a frozen copy of `parent` that serves a fork with `afterTicket` (none: the parent's state now),
 * made now unless one does. Waits for the freeze lock (a detached freezer outlives the hook that started it).
 */
export async function freezeFor(e: EngineContext, parent: string, afterTicket?: string): Promise<FrozenUse> {
  const reg = e.registry;
  const ticket = afterTicket ?? (await frozen.drawTicket(reg));
  return (await withFreezeLock(
    reg,
    parent,
    undefined,
    async () => (await servingCopy(e, parent, ticket)) ?? makeCopy(e, parent),
  ))!;
}

/** Under the parent's freeze lock: the copy that serves a fork with this ticket, if any (a dead maker's leftovers go). */
async function servingCopy(e: EngineContext, parent: string, ticket: string): Promise<FrozenUse | undefined> {
  const reg = e.registry;
  const copies = await frozen.copiesOf(reg, parent);
  for (const c of copies.filter((c) => c.state === 'making')) await dropFrozen(e, c); // a dead maker's: we hold its lock
  const newest = copies.find((c) => c.state === 'ready');
  if (!newest || !newest.db_exists || !isOwn(newest)) return undefined;
  if (BigInt(newest.ticket) > BigInt(ticket)) return { copy: newest.name, reused: true, why: 'newer' };
  if (newest.signature !== null && newest.signature === activitySignature(await catalog.databaseActivity(reg, parent)))
    return { copy: newest.name, reused: true, why: 'unchanged' };
  return undefined;
}

/** Under the freeze lock: a new copy, and the older ones nobody is cloning dropped (gc drops the rest). */
async function makeCopy(e: EngineContext, parent: string): Promise<FrozenUse> {
  const older = (await frozen.copiesOf(e.registry, parent)).filter((c) => c.state === 'ready');
  const made = await freezeSessionState(e, parent);
  for (const c of older) await dropFrozenIfUnused(e, c);
  return { copy: made.name, reused: false, made: made.method };
}

/** `pgx agent freeze`'s answer: the copy, whether it was there already (and why it serves), how long it took. */
export interface FrozenUseResult {
  branch: string;
  copy: string;
  reused: boolean;
  made?: 'template-copy' | CopyMethod;
  why?: 'newer' | 'unchanged';
  elapsed_ms: number;
}

/** A frozen copy (freeze.ts): what it is a copy of, how made, and whether a later fork may reuse it (its proof). */
export interface FrozenCopySummary {
  name: string;
  project: string;
  parent: string;
  /** making: a copy in progress, or a killed maker's leftover (the next fork of its parent, or gc, drops it). */
  state: 'making' | 'ready';
  method: string | null;
  bytes: number | null;
  /** false: it serves only the forks that arrived before it began; later ones make a new copy. */
  reusable: boolean;
  started_at: Date;
  exists: boolean;
  /** Subagents' branches that keep it as their fork point (fork-point.ts): gc leaves it while any does. */
  kept_by: number;
}

/** `agent ls` (`--all`: project undefined): the frozen copies, with what each is a copy of. */
export async function frozenCopySummaries(e: EngineContext, project?: string): Promise<FrozenCopySummary[]> {
  const rows = await frozen.listFrozen(e.registry, project);
  const keeping = await keptCopiesReadOnly(e.registry); // every copy's count in one query
  return rows.map((f) => ({
    name: f.name,
    project: f.project,
    parent: f.parent,
    state: f.state,
    method: f.method,
    bytes: f.bytes === null ? null : Number(f.bytes),
    reusable: f.signature !== null,
    started_at: f.started_at,
    exists: f.db_exists,
    kept_by: keeping.get(f.name) ?? 0,
  }));
}

/** `pgx agent freeze`, timed. */
export async function freezeBranch(e: EngineContext, branch: string, afterTicket?: string): Promise<FrozenUseResult> {
  const t0 = performance.now();
  return { branch, ...(await freezeFor(e, branch, afterTicket)), elapsed_ms: Math.round(performance.now() - t0) };
}
