// Each hook's timeout (seconds, Claude Code's unit) and the deadline pgx answers by. Its own module: the hooks'
// light entry (fast-path.ts) needs the deadline without the installer's modules.

/** The timeouts `pgx agent install claude` writes. */
export const HOOK_TIMEOUT_S = Object.freeze({
  'session-start': 30,
  'user-prompt-submit': 10,
  'pre-tool-use': 60,
  'subagent-start': 60,
  'subagent-stop': 30,
  'session-end': 10,
} as const);

export type HookCliName = keyof typeof HOOK_TIMEOUT_S;

/**
 * How long a hook may work before it answers anyway: 80% of its timeout (PGX_HOOK_DEADLINE_MS overrides).
 * Claude Code runs a PreToolUse command whose hook timed out UNCHANGED (unrouted), so pgx must answer (deny) first.
 */
export function hookDeadlineMs(event: HookCliName, env: NodeJS.ProcessEnv = process.env): number {
  const override = Number(env.PGX_HOOK_DEADLINE_MS);
  if (Number.isFinite(override) && override > 0) return override;
  return Math.round((HOOK_TIMEOUT_S[event] ?? 30) * 1000 * 0.8);
}
