// What a Codex or Copilot session hears from pgx on its own tool calls, and what their PreToolUse answers when pgx
// itself failed. The session hears its subagents' handoffs, a fork miss among them (decision 485), at its next prompt
// (UserPromptSubmit, shared with Claude Code) and, here, at its next tool call pgx's hook sees: `codex exec` and
// `copilot -p` have one prompt only, so a miss in a subagent the session started would otherwise never reach it.
// Both CLIs put a PreToolUse answer's additionalContext before the model (measured on Codex 0.171.0 and Copilot
// 1.0.102, decision 532).
import type { HookEnv, HookResult } from '../claude/hook-handler.js';
import { handoffsFor } from '../claude/parent-handoffs.js';
import { preToolUseFailure } from '../claude/pre-tool-use.js';
import { mcpRefusalOnFailure, type McpRuntime } from './mcp-guard.js';

/** The session's (no agent_id) answer with its waiting handoffs added as additionalContext; a subagent's as it is. */
export async function withHandoffs(
  h: HookEnv,
  p: { session_id: string; agent_id?: string },
  r: HookResult,
): Promise<HookResult> {
  if (p.agent_id !== undefined) return r;
  const { context, tail } = await handoffsFor(h, p.session_id);
  if (!context) return tail ? { ...r, outcome: `${r.outcome}${tail}` } : r;
  const out = (r.output?.hookSpecificOutput ?? { hookEventName: 'PreToolUse' }) as Record<string, unknown>;
  const before = typeof out.additionalContext === 'string' ? `${out.additionalContext}\n` : '';
  return {
    ...r,
    output: { ...r.output, hookSpecificOutput: { ...out, additionalContext: `${before}${context}` } },
    outcome: `${r.outcome}${tail}`,
  };
}

/**
 * PreToolUse when pgx failed, for these runtimes: a subagent's call to a database MCP server is refused (Claude Code's
 * failure path reads Claude Code's config, not theirs), an MCP call it can tell is not one goes on, and the rest is
 * Claude Code's rule (a subagent's shell command fails closed, the session's fails open).
 */
export function mcpAwareFailure(runtime: McpRuntime, message: string, payload?: Record<string, unknown>): HookResult {
  const refused = mcpRefusalOnFailure(runtime, payload, message);
  if (refused) return refused;
  const tool = payload?.tool_name;
  if (typeof tool === 'string' && tool !== 'Bash' && payload?.agent_id !== undefined)
    return { outcome: 'error:not-database-mcp' };
  return preToolUseFailure(message, payload);
}
