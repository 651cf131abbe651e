// What a subagent hears when its fork of the session's branch could not be made in time (engine/fork-miss.ts, decision
// 485), and the parent's doorbell for it: the subagent is told plainly that it does NOT have its session's state, and
// why; the parent hears it at its next prompt or Bash call (handoff-inbox.ts; the words are made from the registry's
// record); every text names the setting that decides what the subagent gets instead.
import { FALLBACK_SETTING, missFix, missReason, type ForkMiss } from '../../engine/api.js';
import { postHandoff } from './handoff-inbox.js';
import type { HookEnv } from './hook-handler.js';

/** What a branch made from the template holds, in the words SubagentStart uses. */
export function snapshotOf(config: { source?: string }): string {
  return config.source ? `a snapshot of the project's "${config.source}" database` : 'an empty database';
}

/** The parent's doorbell, rung once per miss (its first try): the next ones are the same miss. */
export function tellParentOfMiss(h: HookEnv, sessionId: string, miss: ForkMiss): void {
  if (miss.first) postHandoff(h.config.home, sessionId, { branch: miss.branch, at: miss.at });
}

/** SubagentStart with `[agent] fork_fallback = "wait"`: no branch yet, and why. */
export function missedContext(miss: ForkMiss): string {
  return (
    `pgx: you do NOT have a database branch with your session's current state yet. Yours must be a copy of your ` +
    `session's branch "${miss.parent}" as it is now (its migrations and data), and ${missReason(miss)}; pgx waited ` +
    `${Math.round(miss.waited_ms / 1000)} s for it. pgx tries again before each of your Bash commands: once the copy ` +
    `is made, the command runs on your own branch; until then each is refused (never run against a shared database), ` +
    `and the refusal says why. Your session has been told. What the user can do: ${missFix(miss)}, or set ` +
    `${FALLBACK_SETTING} in .pgx.toml to start such subagents from the template (without the session's state).`
  );
}

/** SubagentStart and PreToolUse with `[agent] fork_fallback = "template"`: the branch has the template, said first. */
export function templateInsteadNote(miss: ForkMiss, snapshot: string): string {
  return (
    `It does NOT have your session's current state: your session's branch "${miss.parent}" could not be copied in ` +
    `time (${missReason(miss)}), and .pgx.toml sets ${FALLBACK_SETTING}, so yours is ${snapshot} instead: the ` +
    `migrations and data your session made are not in it. Your session has been told.`
  );
}

/** PreToolUse with `[agent] fork_fallback = "wait"`: the command is refused, and why. */
export function missedDenyReason(miss: ForkMiss): string {
  return (
    `pgx: this command was not run: you have no database branch yet. Yours must be a copy of your session's branch ` +
    `"${miss.parent}" as it is now, and ${missReason(miss)}. pgx tries again before each of your Bash commands. ` +
    `What the user can do: ${missFix(miss)}, or set ${FALLBACK_SETTING} in .pgx.toml (the template instead, ` +
    `without the session's state).`
  );
}
