// A subagent's shell command, Bash's or Monitor's, routed to its own branch: the branch ensured first, then
// bash-plan.ts's plan (leave pgx's own rewrite alone, refuse a typed launcher or a bare `exit`, or rewrite), a routing
// ticket, and the rewrite in updatedInput with every other field of the tool's input as it was. Monitor's command is
// judged by the same Bash permission rules as Bash's (measured on 2.1.332: a deny on `Bash(echo:*)` denied a Monitor
// running echo, and the rewrite kept the original's decisions), so the same shape serves both (decision 493).
import { attachOrEnsure, ForkUnavailableError, type EnsureResult } from '../../engine/api.js';
import type * as P from './payloads.js';
import type { RewriteParams } from './rewrite.js';
import { issueTicket } from '../../exec/routing-ticket.js';
import { isVerifiedClaudeCode, unverifiedWarning } from './claude-version.js';
import { deny, subagentTarget, type HookEnv, type HookResult } from './hook-handler.js';
import { original, planSubagentBash } from './bash-plan.js';
import { missedDenyReason, snapshotOf, tellParentOfMiss, templateInsteadNote } from './fork-miss-texts.js';

export async function routeSubagentShell(
  p: P.PreToolUsePayload,
  h: HookEnv,
  command: string,
  kind: 'bash' | 'monitor',
): Promise<HookResult> {
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
    agentId: p.agent_id!,
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
  const tag = kind === 'monitor' ? '-monitor' : '';
  const plan = planSubagentBash(command, params);
  if (plan.kind === 'routed') {
    ticket();
    return askUnverified
      ? {
          output: { hookSpecificOutput: { hookEventName: 'PreToolUse', ...decision } },
          outcome: `already-routed${tag}:ask-unverified`,
          branch: ensured.branch,
        }
      : { outcome: `already-routed${tag}`, branch: ensured.branch };
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
    outcome: `rewritten${tag}:${ensured.method}${askUnverified ? ':ask-unverified' : ''}${miss ? ':fallback-template' : ''}`,
    branch: ensured.branch,
  };
}
