// A subagent's shell command, Bash's or Monitor's, routed to its own branch: hooks/shared/shell-plan.ts plans it (the
// branch ensured, a fork miss refused or noted and told to the parent, bash-plan.ts's plan, the routing ticket) as it
// does for Codex and Copilot; what is Claude Code's own is the answer: the rewrite in updatedInput with every other
// field of the tool's input as it was, and "ask" where this Claude Code version is not verified. Monitor's command is
// judged by the same Bash permission rules as Bash's (measured on 2.1.332: a deny on `Bash(echo:*)` denied a Monitor
// running echo, and the rewrite kept the original's decisions), so the same shape serves both (decision 493).
import type * as P from './payloads.js';
import { isVerifiedClaudeCode, unverifiedWarning } from './claude-version.js';
import type { HookEnv, HookResult } from './hook-handler.js';
import { planShellCall } from '../shared/shell-plan.js';

export async function routeSubagentShell(
  p: P.PreToolUsePayload,
  h: HookEnv,
  command: string,
  kind: 'bash' | 'monitor',
): Promise<HookResult> {
  const plan = await planShellCall({ session_id: p.session_id, agent_id: p.agent_id! }, h, command);
  const tag = kind === 'monitor' ? '-monitor' : '';
  // A version not built in costs one small read (the verdict record); the hot path reads nothing else for it.
  const askUnverified = () =>
    h.config.unverifiedClaudeCode === 'ask' && !isVerifiedClaudeCode(h.claudeCode, h.env, h.config.home);
  const decision = () => ({
    permissionDecision: 'ask',
    permissionDecisionReason: unverifiedWarning(h.claudeCode, 'ask'),
  });
  if (plan.kind === 'answered') {
    const r = plan.result;
    if (r.outcome !== 'already-routed') return r; // refused (a fork miss, a typed launcher, a bare exit)
    return askUnverified()
      ? {
          output: { hookSpecificOutput: { hookEventName: 'PreToolUse', ...decision() } },
          outcome: `already-routed${tag}:ask-unverified`,
          branch: r.branch,
        }
      : { ...r, outcome: `already-routed${tag}` };
  }
  const ask = askUnverified();
  plan.ticket();
  return {
    output: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        ...(ask ? decision() : {}),
        updatedInput: { ...p.tool_input, command: plan.command },
        ...(plan.note ? { additionalContext: plan.note } : {}),
      },
    },
    outcome: `rewritten${tag}:${plan.ensured.method}${ask ? ':ask-unverified' : ''}${plan.tail}`,
    branch: plan.ensured.branch,
  };
}
