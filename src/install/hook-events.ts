// The six hook entries pgx installs, and how a pgx entry is recognised in a settings file (install, inspect, hooks).
import * as path from 'node:path';
import { isPlainObject, type JsonObject } from './settings-file.js';
import { shellQuote } from '../shell.js';
import { HOOK_TIMEOUT_S } from '../hooks/claude/timeouts.js';

export type Scope = 'project' | 'user' | 'local';
export type HookEventName =
  | 'SessionStart'
  | 'UserPromptSubmit'
  | 'PreToolUse'
  | 'SubagentStart'
  | 'SubagentStop'
  | 'SessionEnd';
export type HookCli =
  | 'session-start'
  | 'user-prompt-submit'
  | 'pre-tool-use'
  | 'subagent-start'
  | 'subagent-stop'
  | 'session-end';

/**
 * Claude Code's default for a hook that fails (can't start, is killed, times out, exits other than 0 or 2, prints JSON
 * that fails validation) is to go on as if it said nothing: for PreToolUse, the subagent's command runs unrouted.
 * `"block"` turns each of those into a blocked call with the cause in the tool result. Releases before 2.1.295 strip
 * the key without a word (measured on 2.1.0 and 2.1.294: hooks and rules still apply), so it is written for every
 * version; the value must be exactly "block" (2.1.332 skips the whole file for "blok"). Written only on PreToolUse:
 * on SessionStart and SubagentStart it blocks nothing, on SubagentStop it is ignored with a warning
 * (docs/pgx/local-dev/decisions/191-pretooluse-fails-closed.md).
 */
export const ON_FAILURE_BLOCK = 'block';
/** The first Claude Code release that honours `onFailure` (earlier ones ignore it: PreToolUse then fails open). */
export const ON_FAILURE_SINCE = '2.1.295';

/** The six hooks pgx installs. Timeouts are in seconds (Claude Code's unit). */
export const HOOK_EVENTS: ReadonlyArray<{ event: HookEventName; cli: HookCli; matcher?: string; timeout: number; onFailure?: typeof ON_FAILURE_BLOCK }> =
  Object.freeze([
    // Creates/attaches the session's state; may have to start the local server on a cold machine.
    { event: 'SessionStart', cli: 'session-start', timeout: HOOK_TIMEOUT_S['session-start'] },
    // Cheap bookkeeping on every prompt; keep it from ever holding up the user for long.
    { event: 'UserPromptSubmit', cli: 'user-prompt-submit', timeout: HOOK_TIMEOUT_S['user-prompt-submit'] },
    // Rewrites Bash commands to run under `agent exec`; may have to create the subagent's branch (a clone),
    // hence the generous budget. Only Bash is rewritten, so match exactly "Bash" (letters only = exact name).
    // A hook that fails must block the call, never let a subagent's command run unrouted (ON_FAILURE_BLOCK).
    { event: 'PreToolUse', cli: 'pre-tool-use', matcher: 'Bash', timeout: HOOK_TIMEOUT_S['pre-tool-use'], onFailure: ON_FAILURE_BLOCK },
    // Creates the subagent's branch (a clone of the template), which can take a while on a big database.
    { event: 'SubagentStart', cli: 'subagent-start', timeout: HOOK_TIMEOUT_S['subagent-start'] },
    // Records/retires the subagent's branch.
    { event: 'SubagentStop', cli: 'subagent-stop', timeout: HOOK_TIMEOUT_S['subagent-stop'] },
    // SessionEnd hooks share one budget of 1.5 s (CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS, default 1500) and a
    // per-hook timeout is capped by it, so 10 s only matters where a user raised that budget. pgx only marks the
    // session's branches retired here (cheap); cleanup happens later, so being cut off at 1.5 s is harmless.
    { event: 'SessionEnd', cli: 'session-end', timeout: HOOK_TIMEOUT_S['session-end'] },
  ] as const);

export const EVENT_BY_CLI = new Map<string, (typeof HOOK_EVENTS)[number]>(HOOK_EVENTS.map((h) => [h.cli, h]));
export const EVENT_BY_NAME = new Map<string, (typeof HOOK_EVENTS)[number]>(HOOK_EVENTS.map((h) => [h.event, h]));

/** Recognises a pgx hook command (any launcher, quoted or not). Group 1 is the cli name. */
export const PGX_HOOK_COMMAND_RE =
  / agent hook (session-start|user-prompt-submit|pre-tool-use|subagent-start|subagent-stop|session-end)\s*$/;

/**
 * The command name a project-scope hook finds pgx by, on PATH: `.claude/settings.json` is committed, so it names no
 * path of one user's machine (docs/pgx/local-dev/decisions/111-portable-project-install.md).
 */
export const PORTABLE_LAUNCHER = 'pgx';

const PORTABLE_HEAD = `command -v ${PORTABLE_LAUNCHER} >/dev/null 2>&1 && exec ${PORTABLE_LAUNCHER} agent hook `;

/** A portable hook command (whatever its fallback says). Group 1 is the cli name. */
export const PORTABLE_HOOK_COMMAND_RE =
  /^command -v pgx >\/dev\/null 2>&1 && exec pgx agent hook (session-start|user-prompt-submit|pre-tool-use|subagent-start|subagent-stop|session-end); /;

/**
 * What each hook does on a machine where pgx is not on PATH (a teammate's clone): plain sh, no pgx. A subagent's
 * Bash is refused (exit 2 blocks; the reason reaches the model), so it never runs against whatever database it
 * names; the parent's commands go on, and SessionStart says why in a visible line. `grep` failing to run counts as
 * a subagent (refused: stricter, never weaker). JSON with `"agent_id"` as a key comes only from inside a subagent;
 * the same text inside a command string is escaped (`\"agent_id\"`), except at a string's very end, where a parent's
 * command is then refused too (stricter).
 */
const MISSING = 'pgx is not on PATH on this machine';
const FALLBACK: Record<HookCli, string> = {
  'session-start': `echo '${JSON.stringify({
    systemMessage: `${MISSING}: every subagent Bash command is refused until it is installed (see the project README; then start a new session). Your own commands run as usual.`,
    hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: `${MISSING}: subagents cannot run Bash commands (refused, so that they never share one database); the commands of the main session run as usual.` },
  })}'`,
  'user-prompt-submit': 'exit 0',
  'pre-tool-use': `grep -q '"agent_id"'; [ $? = 1 ] && exit 0; echo "${MISSING}: this subagent Bash command is refused, so that it cannot reach a database shared with other agents. Install pgx (see the project README), then start a new session." >&2; exit 2`,
  'subagent-start': `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: `${MISSING}: your Bash commands will be refused. Say so in your answer; do not work around it.` } })}'`,
  'subagent-stop': 'exit 0',
  'session-end': 'exit 0',
};

/** `command -v pgx … && exec pgx agent hook <cli>; <fallback>`: pgx on PATH, else the fallback above. */
export function portableHookCommand(cli: HookCli): string {
  return `${PORTABLE_HEAD}${cli}; ${FALLBACK[cli]}`;
}

export const OLD_EVENTS: readonly HookEventName[] = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'SessionEnd'];

export function settingsPathFor(scope: Scope, projectDir: string, home: string): string {
  switch (scope) {
    case 'project':
      return path.join(projectDir, '.claude', 'settings.json');
    case 'local':
      return path.join(projectDir, '.claude', 'settings.local.json');
    case 'user':
      return path.join(home, '.claude', 'settings.json');
    default: {
      const never: never = scope;
      throw new TypeError(`unknown scope: ${String(never)}`);
    }
  }
}

export { shellQuote };

export function checkLauncher(launcher: string): void {
  if (typeof launcher !== 'string' || launcher === '') throw new TypeError('launcher must be a non-empty path');
  if (/[\0\n\r]/.test(launcher)) throw new TypeError('launcher must not contain NUL or line breaks');
}

/** `'<launcher>' agent hook <cli>`. */
export function hookCommand(launcher: string, cli: string): string {
  checkLauncher(launcher);
  return `${shellQuote(launcher)} agent hook ${cli}`;
}

/** The cli name if `handler` is a pgx hook handler. */
export function pgxCliOf(handler: unknown): HookCli | undefined {
  if (!isPlainObject(handler) || typeof handler.command !== 'string') return undefined;
  const m = PGX_HOOK_COMMAND_RE.exec(handler.command) ?? PORTABLE_HOOK_COMMAND_RE.exec(handler.command);
  return m ? (m[1] as HookCli) : undefined;
}

export interface Located {
  event: string;
  group: JsonObject;
  handler: unknown;
  cli: HookCli;
}

/** Every pgx handler in the hooks object, in document order. Groups/handlers of unexpected shape are skipped. */
export function findPgxHandlers(hooks: JsonObject): Located[] {
  const out: Located[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isPlainObject(group) || !Array.isArray(group.hooks)) continue;
      for (const handler of group.hooks) {
        const cli = pgxCliOf(handler);
        if (cli) out.push({ event, group, handler, cli });
      }
    }
  }
  return out;
}
