// What a hook handler is: the environment it runs in, the result it returns, the contract every event's handler
// (this folder's, and Codex's and Copilot's) keeps, and the answer shapes and ids the handlers share.
import type * as z from 'zod/mini';
import type { Config } from '../../project/config.js';
import { describeError } from '../../lib/errors.js';
import type { ChangeSummary, OpenOptions } from '../../engine/api.js';

export interface HookEnv {
  config: Config;
  /** How the engine is opened: quietly, with the hook's deadline as every statement's timeout. */
  engine: OpenOptions;
  launcher: string;
  shell: string;
  /** The hook process's environment (the broker's requester's, not the broker's own: decision 442). */
  env: NodeJS.ProcessEnv;
  envFile?: string;
  /** The running Claude Code's version (claude-version.ts), when it says. */
  claudeCode?: string;
  /** The broker: runs work that need not delay the answer once it is sent (a hook process runs it at once). */
  afterAnswer?: (fn: () => void) => void;
}

export interface HookResult {
  output?: Record<string, unknown>;
  outcome: string;
  branch?: string | null;
  /** SubagentStop: the branch's change summary (names and counts only), logged as `changes`. */
  changes?: ChangeSummary;
}

export interface Handler<S extends z.ZodMiniType> {
  schema: S;
  run(p: z.infer<S>, h: HookEnv): Promise<HookResult>;
  /** What to answer when the payload is invalid or the handler throws. `payload` is absent when stdin was unreadable. */
  onError(message: string, payload?: Record<string, unknown>): HookResult;
}

export const subagentTarget = (p: { session_id: string; agent_id: string }) => ({
  sessionId: p.session_id,
  agentId: p.agent_id,
});
export const sessionTarget = (p: { session_id: string }) => ({ sessionId: p.session_id });

/** A PreToolUse deny (Claude Code's and Codex's hook output are the same shape). */
export function deny(reason: string): Record<string, unknown> {
  return {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
  };
}

export function errorText(e: unknown): string {
  const d = describeError(e);
  return `${d.message}${d.hint ? ` (${d.hint})` : ''}`;
}
