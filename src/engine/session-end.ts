// The end of a session and of a subagent: what SessionEnd retires and how patiently, what SubagentStop summarises
// and keeps for review, and the refusal an ended session's branch gives an adopt. Apart from api.ts, the facade,
// whose endSession and stopSubagent call these, and command-targets.ts (an adopt's target).
import { clockTime } from '../lib/output.js';
import { PgxError } from '../lib/errors.js';
import { identityKey } from './identity.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { gc, retireBranch, type DownResult } from './branch-retire.js';
import type { EngineContext } from './context.js';
import type { ChangeSummary } from './handoff-text.js';
import { identityOf, type Target } from './selector.js';

export interface SubagentStopResult {
  /** What happened to the branch (null: the agent had none). */
  retired: DownResult | null;
  /** What it changed (null: no active branch to summarise). */
  changes: ChangeSummary | null;
  /** The branch was kept past its grace period for review (it changed something, or its summary failed). */
  kept: boolean;
}

export interface EndSessionResult {
  /** Every active branch of the session on this host (its own and its subagents'), with what happened to it. */
  branches: (DownResult | { name: string; action: 'failed'; error: string })[];
  retired: number;
  failed: number;
  /** The session's own branch, if it had one. */
  session_branch: string | null;
}

/**
 * SessionEnd: retire (not drop: dropping waits for gc) every active branch of the session on this host, inside
 * Claude Code's SessionEnd budget (1.5 s): each is only try-locked (a branch being ensured right now is left to gc)
 * and its backends get 300 ms to go. One refusal (a foreign stamp) does not leave the others active.
 */
export async function endSession(ctx: EngineContext, sessionId: string): Promise<EndSessionResult> {
  const { config, registry } = ctx;
  const recs = await records.findRecords(registry, { project: config.project, sessionId, includeSubagents: true });
  const mine = recs.filter((r) => r.host === config.host && r.state === 'active');
  const out: EndSessionResult = {
    branches: [],
    retired: 0,
    failed: 0,
    session_branch: mine.find((r) => r.kind === 'session')?.name ?? null,
  };
  for (const rec of mine) {
    try {
      const r = await retireBranch(ctx, rec, { tryOnly: true, waitMs: 300 });
      out.branches.push(r);
      if (r.action === 'retired') out.retired++;
    } catch (err) {
      out.branches.push({ name: rec.name, action: 'failed', error: (err as Error).message });
      out.failed++;
    }
  }
  return out;
}

/**
 * SubagentStop: the branch's change summary (bounded, never failing the stop: handoff.ts), then the retire, then
 * the summary on the record, keeping a branch that changed anything for [agent] keep_changed; then a bounded gc.
 */
export async function stopSubagent(ctx: EngineContext, t: Target): Promise<SubagentStopResult> {
  const { config, registry } = ctx;
  const rec = await records.findByIdentity(registry, identityKey(identityOf(ctx, t)));
  if (!rec) return { retired: null, changes: null, kept: false };
  const changes =
    rec.state === 'active' && rec.db_exists ? await (await import('./handoff.js')).summarizeChanges(ctx, rec) : null;
  const retired = await retireBranch(ctx, rec);
  let kept = false;
  if (changes && (retired.action === 'retired' || retired.action === 'already-retiring')) {
    const keep = changes.changed !== false && config.keepChangedMs > 0; // unknown (the summary failed) is kept too
    await records.recordChanges(registry, rec.name, changes, keep ? config.keepChangedMs : null);
    kept = keep;
  }
  await gc(ctx, 2).catch(() => {}); // bounded, opportunistic
  return { retired, changes, kept };
}

export function endedSession(
  agentId: string,
  session: BranchRecord,
  agentBranch: string,
  agentDeadline: Date,
): PgxError {
  return new PgxError(
    'REFUSED',
    `Agent ${agentId}'s session has ended: its branch "${session.name}" is retiring, and gc drops it at ${clockTime(session.deadline)}; ` +
      `an adopt into it would go with it.`,
    `To keep the subagent's work, make the session's branch active again first (as resuming the session would): ` +
      `\`pgx agent up --session ${session.session_id}\` (kept for [agent] idle_ttl from its last use), then ` +
      `\`pgx agent adopt --agent ${agentId}\`. The subagent's branch "${agentBranch}" is kept until ${clockTime(agentDeadline)}.`,
  );
}
