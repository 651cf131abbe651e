// Each Codex hook's timeout (seconds, Codex's unit; the key is `timeout`) and the deadline pgx answers by. Codex runs
// a PreToolUse hook that timed out as if it said nothing, so pgx answers (denies) at 80% of it, like the Claude hooks.

export const CODEX_HOOK_TIMEOUT_S = Object.freeze({
  'session-start': 30,
  'user-prompt-submit': 10,
  'pre-tool-use': 60,
  'subagent-start': 60,
  'subagent-stop': 30,
} as const);

export type CodexHookCli = keyof typeof CODEX_HOOK_TIMEOUT_S;
