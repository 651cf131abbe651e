// A shell command of a subagent (Claude Code's Bash or Monitor, Codex's, Copilot's), or of a Codex or Copilot session,
// from its branch to pgx's plan for it (decision 531): the branch ensured (the subagent's own, or the session's for the
// session's own command), a fork miss said to the parent and refused or noted (decision 485), then bash-plan.ts's plan
// and the routing ticket. What is left to each runtime is how it answers a rewrite: Claude Code with updatedInput (and
// "ask" for an unverified version), Codex with allow (or a deny that hands the command over), Copilot with
// modifiedArgs and no decision. One place for the tail the review found duplicated in the runtimes' handlers.
import { attachOrEnsure, ForkUnavailableError, type EnsureResult } from '../../engine/api.js';
import { issueTicket } from '../../exec/routing-ticket.js';
import { isRouted, rewriteCommand, type RewriteParams, type RoutedFor } from '../claude/rewrite.js';
import { deny, type HookEnv, type HookResult } from '../claude/hook-handler.js';
import { original, planSubagentBash } from '../claude/bash-plan.js';
import { missedDenyReason, snapshotOf, tellParentOfMiss, templateInsteadNote } from '../claude/fork-miss-texts.js';

export interface ShellCall {
  session_id: string;
  agent_id?: string;
}

/** What pgx does with the command: answered already (left alone, refused), or a rewrite for the runtime to answer. */
export type ShellPlan =
  | { kind: 'answered'; result: HookResult }
  | {
      kind: 'rewrite';
      /** The routed command, in the form the runtime's rewrite names the launcher. */
      command: string;
      ensured: EnsureResult;
      /** Issues the routing ticket: call it only when the rewrite is handed out. */
      ticket: () => void;
      /** Said to the agent with the rewrite: its branch was made from the template in place of the session's state. */
      note?: string;
      /** The log outcome's tail (`:fallback-template`). */
      tail: string;
    };

/**
 * The plan for `command`. `written` gives the launcher the rewrite names (Copilot's `pgx` on PATH); the checks use the
 * absolute launcher. A subagent whose fork missed (ForkUnavailableError) is refused with why, and the parent's inbox
 * gets the miss once (it hears it at its next prompt or shell command).
 */
export async function planShellCall(
  p: ShellCall,
  h: HookEnv,
  command: string,
  written: (params: RewriteParams) => RewriteParams = (x) => x,
): Promise<ShellPlan> {
  const who: RoutedFor = p.agent_id === undefined ? { sessionId: p.session_id } : { agentId: p.agent_id };
  let ensured: EnsureResult;
  try {
    ensured = await attachOrEnsure(h.config, { sessionId: p.session_id, agentId: who.agentId }, h.engine);
  } catch (err) {
    if (!(err instanceof ForkUnavailableError)) throw err;
    tellParentOfMiss(h, p.session_id, err.miss);
    return {
      kind: 'answered',
      result: { output: deny(missedDenyReason(err.miss)), outcome: `denied:fork-unavailable:${err.miss.reason}` },
    };
  }
  const miss = ensured.fork?.miss;
  if (miss) tellParentOfMiss(h, p.session_id, miss);
  const params: RewriteParams = {
    ...who,
    launcher: h.launcher,
    projectDir: h.config.projectDir,
    shell: h.shell,
    branch: ensured.branch,
  };
  const shown = written(params);
  const ticket = () =>
    issueTicket(
      h.config.home,
      who.agentId !== undefined ? { agentId: who.agentId } : { sessionId: who.sessionId! },
      params.projectDir,
      [params.shell, '-c', original(command, shown)],
    );
  const plan = isRouted(command, shown) ? ({ kind: 'routed' } as const) : planSubagentBash(command, params);
  if (plan.kind === 'routed') {
    // pgx's own form for this agent (or session) and branch: the runtime's approval judges it as typed.
    ticket();
    return { kind: 'answered', result: { outcome: 'already-routed', branch: ensured.branch } };
  }
  if (plan.kind === 'deny') return { kind: 'answered', result: { ...plan.result, branch: ensured.branch } };
  return {
    kind: 'rewrite',
    command: shown === params ? plan.command : rewriteCommand(command, shown),
    ensured,
    ticket,
    ...(miss
      ? {
          note: `pgx: your own database branch "${ensured.branch}" was made now. ${templateInsteadNote(miss, snapshotOf(h.config))}`,
        }
      : {}),
    tail: miss ? ':fallback-template' : '',
  };
}
