// Never a silent fork from the template (issue 39, decision 485). A subagent's branch is a copy of its session's branch
// as it is now (fork.ts, freeze.ts). When that copy can't be made (the branch has connections and the copy failed, or
// it is still being made when the hook's time runs out), the subagent does NOT quietly get the template: it waits for
// the copy within the hook's time (a failed copy is tried again as soon as nobody is connected to the branch, when a
// TEMPLATE copy works); past that it is a *miss*, recorded in the registry (pgx_fork_miss) and told to the subagent,
// to its parent (the handoff inbox: branch and time only, the words made here from the record), to the hook log and
// to the doctor. What the subagent then has is the user's choice, `[agent] fork_fallback`: "wait" (the default: no
// branch until the copy can be made; pgx tries again before each of its Bash commands, which are refused meanwhile)
// or "template" (a template clone, said as loudly). Every message names that setting.
import { PgxError, isPgxError } from '../lib/errors.js';
import type { BranchRecord } from '../registry/records.js';
import { openForkMiss, recordForkMiss, resolveForkMiss, type ForkMissReason } from '../registry/fork-misses.js';
import * as catalog from '../server/catalog.js';
import type { EngineContext } from './context.js';
import { isDiskBudgetError } from './disk-budget.js';
import { FrozenCopyWaitError, waitBudgetMs, type FrozenUse } from './freeze.js';

export type { ForkMissReason };

/** A subagent that did not get its session's state: what it was, why, and what it has instead. */
export interface ForkMiss {
  /** The subagent's branch: made from the template (fallback "template"), or not made yet ("wait"). */
  branch: string;
  /** The session's branch that could not be copied. */
  parent: string;
  agent_id: string | null;
  reason: ForkMissReason;
  /** A code, never a message: a SQLSTATE, a pgx error code, or the missing program. */
  cause: string | null;
  /** Connections on the session's branch when the copy was given up. */
  backends: number | null;
  fallback: 'wait' | 'template';
  /** How long this try waited for the copy (ms). */
  waited_ms: number;
  /** When the miss began (the parent's doorbell names it); `first`: this try began it (the doorbell is rung now). */
  at: string;
  first: boolean;
}

/** The setting every message names, as it is written in .pgx.toml. */
export const FALLBACK_SETTING = '[agent] fork_fallback = "template"';

/**
 * The subagent's fork could not be made in time and `[agent] fork_fallback` is "wait": no branch. The next ensure
 * (before its next Bash command) tries again, without waiting again.
 */
export class ForkUnavailableError extends PgxError {
  constructor(
    readonly miss: ForkMiss,
    options?: { cause?: unknown },
  ) {
    super(
      'BRANCH_FAILED',
      `Branch "${miss.branch}" was not made: it must be a copy of the session's branch "${miss.parent}" as it is now, ` +
        `and ${missReason(miss)}. pgx does not give it the template instead unless ${FALLBACK_SETTING} is set.`,
      `${missFix(miss)}; or set ${FALLBACK_SETTING} in .pgx.toml to take the template instead (without the session's ` +
        `state). \`pgx agent doctor\` lists every miss.`,
      { ...options, data: { fork_miss: miss } },
    );
  }
}

/** Waiting for a failed copy to become possible: at most this long (PGX_FORK_WAIT_MS), and within the hook's time. */
const WAIT_MAX_MS = Number(process.env.PGX_FORK_WAIT_MS ?? 10_000);
const POLL_MS = 200;

/**
 * The fork of `parent` for the subagent `rec`, with the waiting and the fallback above. `attempt` makes it (the
 * creation's copy: branch-ensure.ts drops its leftover first). Returns the frozen copy cloned, or (fallback "template")
 * the miss, the caller then cloning the template; throws ForkUnavailableError (fallback "wait") or a disk refusal.
 */
export async function forkOrMiss(
  e: EngineContext,
  rec: BranchRecord,
  parent: string,
  attempt: () => Promise<FrozenUse>,
): Promise<{ frozen: FrozenUse; miss?: undefined } | { miss: ForkMiss; frozen?: undefined }> {
  const reg = e.registry;
  const t0 = Date.now();
  const made = async (frozen: FrozenUse) => {
    await resolveForkMiss(reg, rec.identity_key);
    return { frozen };
  };
  let failure: unknown;
  try {
    return await made(await attempt());
  } catch (err) {
    if (isDiskBudgetError(err)) throw err; // refused for room: its own figures and fix, never the template
    failure = err;
  }
  // A copy that failed (not one still being made: that wait is spent) works as a TEMPLATE copy once nobody is
  // connected to the parent: wait for that, once per miss (a later try of the same subagent does not wait again).
  if (!(failure instanceof FrozenCopyWaitError) && !(await openForkMiss(reg, rec.identity_key))) {
    const until = t0 + Math.min(WAIT_MAX_MS, waitBudgetMs(e) ?? WAIT_MAX_MS);
    while (Date.now() + POLL_MS < until) {
      await new Promise((res) => setTimeout(res, POLL_MS));
      if ((await catalog.countBackends(reg, parent)) > 0) continue;
      try {
        return await made(await attempt());
      } catch (err) {
        if (isDiskBudgetError(err)) throw err;
        failure = err;
        break;
      }
    }
  }
  const backends = await catalog.countBackends(reg, parent).catch(() => null);
  const { reason, cause } = classify(failure);
  const fallback = e.config.forkFallback;
  const waited = Date.now() - t0;
  const { at, first } = await recordForkMiss(reg, {
    identity_key: rec.identity_key,
    project: rec.project,
    session_id: rec.session_id,
    agent_id: rec.agent_id,
    branch: rec.name,
    parent,
    reason,
    cause,
    backends,
    waited_ms: waited,
    fallback,
    at: new Date().toISOString(),
  });
  const miss: ForkMiss = {
    branch: rec.name,
    parent,
    agent_id: rec.agent_id,
    reason,
    cause,
    backends,
    fallback,
    waited_ms: waited,
    at,
    first,
  };
  if (fallback === 'template') return { miss };
  throw new ForkUnavailableError(miss, { cause: failure });
}

/** A failed copy's reason, as a code: the hint and every message are made from it, never from the error's text. */
function classify(err: unknown): { reason: ForkMissReason; cause: string | null } {
  if (err instanceof FrozenCopyWaitError) return { reason: 'timeout', cause: null };
  const text = String((err as Error)?.message ?? err);
  const tool =
    /\b(pg_dump|psql|pg_restore)\b[^\n]*\bfound neither\b/.exec(text) ?? /\b(pg_dump|psql)\b.*ENOENT/.exec(text);
  if (tool) return { reason: 'client-tools', cause: tool[1]! };
  return { reason: 'copy-failed', cause: catalog.sqlstateOf(err) ?? (isPgxError(err) ? err.code : 'failed') };
}

/** A cause as it may be shown: a code of letters, digits and `_`, else "failed". */
const codeOf = (cause: string | null) => (cause && /^[A-Za-z0-9_]{1,40}$/.test(cause) ? cause : 'failed');

/** Why, in one clause: "… had 2 open connections, so copying it needs pg_dump and psql (pg_dump is not installed here)". */
export function missReason(m: Pick<ForkMiss, 'parent' | 'reason' | 'cause' | 'backends' | 'waited_ms'>): string {
  const held =
    m.backends === null
      ? ''
      : ` "${m.parent}" had ${m.backends} open connection${m.backends === 1 ? '' : 's'} (a dev server, an open psql),`;
  if (m.reason === 'client-tools')
    return `${held} so copying it needs pg_dump and psql, and ${codeOf(m.cause)} is not installed here`.trim();
  if (m.reason === 'timeout')
    return `its copy was still being made after ${Math.round(m.waited_ms / 1000)} s (a large branch, or many subagents at once)`;
  return `copying it failed (${codeOf(m.cause)})${m.backends ? `; it had ${m.backends} open connection(s)` : ''}`;
}

/** What makes the copy possible, per reason. */
export function missFix(m: Pick<ForkMiss, 'parent' | 'reason'>): string {
  if (m.reason === 'client-tools')
    return (
      `close the connections to "${m.parent}" (a TEMPLATE copy needs nobody connected), or install the PostgreSQL ` +
      'client programs (`pgx agent doctor` says how)'
    );
  if (m.reason === 'timeout') return 'nothing, if it is a moment: the copy is being made, and the next try clones it';
  return `see \`pgx agent doctor\` (the server, the disk), and close the connections to "${m.parent}"`;
}

/** A plain identifier (an agent id or a branch name) as the parent may read it; anything else is left out. */
const PLAIN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/;

/** The parent's words for one miss (its next prompt or Bash call), made from the registry's record. */
export function missTextForParent(m: Omit<ForkMiss, 'waited_ms' | 'first'> & { waited_ms: number | null }): string {
  const agent = m.agent_id && PLAIN.test(m.agent_id) ? `subagent ${m.agent_id}` : 'a subagent';
  const parent = PLAIN.test(m.parent) ? m.parent : 'its session branch';
  const why = missReason({ ...m, parent, waited_ms: m.waited_ms ?? 0 });
  const head = `pgx: ${agent} did NOT get a copy of your session's branch "${parent}" (your current migrations and data): ${why}.`;
  if (m.fallback === 'template')
    return (
      `${head} It got a clone of the template instead (branch "${PLAIN.test(m.branch) ? m.branch : '?'}", without ` +
      `your session's changes), because .pgx.toml sets ${FALLBACK_SETTING}.`
    );
  return (
    `${head} It has no database branch yet: its Bash commands are refused until the copy can be made (pgx tries ` +
    `again before each). Fix: ${missFix({ ...m, parent })}; or set ${FALLBACK_SETTING} in .pgx.toml to give such ` +
    'subagents the template instead.'
  );
}

/** `agent exec` / `agent up`'s stderr line when the branch it made has the template in place of the session's state. */
export function templateInsteadWarning(m: ForkMiss): string {
  return (
    `pgx: WARNING: branch "${m.branch}" does NOT have the session's current state: the session's branch ` +
    `"${m.parent}" could not be copied in time (${missReason(m)}), and .pgx.toml sets ${FALLBACK_SETTING}, so it is ` +
    `a clone of the template (without the session's migrations and data). \`pgx agent reset\` makes it a copy of ` +
    `"${m.parent}" once that can be copied.\n`
  );
}
