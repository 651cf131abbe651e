// PreToolUse: the parent's Bash calls pass as they are (a typed launcher refused, waiting handoffs said); a
// subagent's are routed to its own branch (bash-plan.ts decides how), and fail closed when pgx cannot.
import { attachOrEnsure, ForkUnavailableError, type EnsureResult } from '../../engine/api.js';
import * as P from './payloads.js';
import { parentBashCall, type RewriteParams } from './rewrite.js';
import { issueTicket } from '../../exec/routing-ticket.js';
import { isVerifiedClaudeCode, unverifiedWarning } from './claude-version.js';
import { launcherPath } from './launcher.js';
import { deny, subagentTarget, type Handler, type HookResult } from './hook-handler.js';
import { invokesLauncherIn, launcherDeny, original, planSubagentBash } from './bash-plan.js';
import { handoffsFor } from './parent-handoffs.js';
import { missedDenyReason, snapshotOf, tellParentOfMiss, templateInsteadNote } from './fork-miss-texts.js';

export const preToolUse: Handler<typeof P.preToolUseSchema> = {
  schema: P.preToolUseSchema,
  async run(p, h) {
    if (p.tool_name !== 'Bash') return { outcome: 'skipped:not-bash' };
    const command = p.tool_input.command;
    if (p.agent_id === undefined) {
      // The parent's commands are not rewritten, so the user's rules see them as they are; only the launcher,
      // which pgx's wrapper rule would approve unseen, is refused.
      if (parentBashCall(p, h.launcher) === 'deny-launcher') return launcherDeny();
      // What its subagents changed, if any is waiting (a foreground agent's parent has no other hook before this).
      const handoffs = await handoffsFor(h, p.session_id);
      if (handoffs.context)
        return {
          output: { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: handoffs.context } },
          outcome: `skipped:not-subagent-bash${handoffs.tail}`,
        };
      return { outcome: `skipped:not-subagent-bash${handoffs.tail}` };
    }
    if (typeof command !== 'string')
      return {
        output: deny('pgx: this Bash call has no command string; it was not routed to your database branch.'),
        outcome: 'denied:no-command',
      };
    let ensured: EnsureResult;
    try {
      ensured = await attachOrEnsure(
        h.config,
        subagentTarget({ session_id: p.session_id, agent_id: p.agent_id! }),
        h.engine,
      );
    } catch (err) {
      if (!(err instanceof ForkUnavailableError)) throw err;
      // No branch without the session's state (engine/fork-miss.ts): refused, and the parent hears it once.
      tellParentOfMiss(h, p.session_id, err.miss);
      return { output: deny(missedDenyReason(err.miss)), outcome: `denied:fork-unavailable:${err.miss.reason}` };
    }
    // Made here with the template in place of the session's state ([agent] fork_fallback): said with the rewrite.
    const miss = ensured.fork?.miss;
    if (miss) tellParentOfMiss(h, p.session_id, miss);
    const told = miss
      ? {
          additionalContext: `pgx: your own database branch "${ensured.branch}" was made now. ${templateInsteadNote(miss, snapshotOf(h.config))}`,
        }
      : {};
    const params: RewriteParams = {
      launcher: h.launcher,
      agentId: p.agent_id,
      projectDir: h.config.projectDir,
      shell: h.shell,
      branch: ensured.branch,
    };
    // A version not built in costs one small read (the verdict record); the hot path reads nothing else for it.
    const askUnverified =
      h.config.unverifiedClaudeCode === 'ask' && !isVerifiedClaudeCode(h.claudeCode, h.env, h.config.home);
    const decision = askUnverified
      ? { permissionDecision: 'ask', permissionDecisionReason: unverifiedWarning(h.claudeCode, 'ask') }
      : {};
    const ticket = () =>
      issueTicket(h.config.home, { agentId: p.agent_id! }, params.projectDir, [
        params.shell,
        '-c',
        original(command, params),
      ]);
    const plan = planSubagentBash(command, params);
    if (plan.kind === 'routed') {
      ticket();
      return askUnverified
        ? {
            output: { hookSpecificOutput: { hookEventName: 'PreToolUse', ...decision } },
            outcome: 'already-routed:ask-unverified',
            branch: ensured.branch,
          }
        : { outcome: 'already-routed', branch: ensured.branch };
    }
    if (plan.kind === 'deny') return { ...plan.result, branch: ensured.branch };
    ticket();
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          ...decision,
          updatedInput: { ...p.tool_input, command: plan.command },
          ...told,
        },
      },
      outcome: `rewritten:${ensured.method}${askUnverified ? ':ask-unverified' : ''}${miss ? ':fallback-template' : ''}`,
      branch: ensured.branch,
    };
  },
  onError: preToolUseFailure,
};

/**
 * PreToolUse when pgx itself failed (every runtime's). A launcher invocation is refused even when pgx is broken: the
 * wrapper rule would otherwise approve it unseen. Only a subagent's Bash fails closed, as in run(); a payload known
 * NOT to be one (no agent_id: the parent; or another tool) fails open: a broken .pgx.toml used to deny every Bash of
 * the main session too.
 */
export function preToolUseFailure(message: string, payload?: Record<string, unknown>): HookResult {
  if (invokesLauncherIn(payload, launcherPath())) return launcherDeny();
  if (
    payload &&
    (payload.agent_id === undefined || (typeof payload.tool_name === 'string' && payload.tool_name !== 'Bash'))
  ) {
    return { outcome: 'error:not-subagent-bash' };
  }
  return {
    output: deny(
      `pgx could not ensure this subagent's own database branch, so the command was not run (it would have ` +
        `touched a shared database). ${message} Fix: run \`pgx agent doctor\` in the project; then retry the command.`,
    ),
    outcome: 'denied:error',
  };
}
