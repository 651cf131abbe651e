// The PreToolUse rewrite, shaped so that Claude Code judges a routed command by the user's own permission rules.
//
//   '<pgx>' agent exec --agent ID --cwd P -- <shell> -c '<original, quoted>'; exit # pgx-routed BRANCH
//   <original, verbatim>
//
// A Codex session's own command (decision 205) names the session instead of an agent, and fails open:
//   '<pgx>' agent exec --session SID --fail-open --cwd P -- <shell> -c '<original, quoted>'; exit # pgx-routed BRANCH
//
// Claude Code matches its rules against the REWRITTEN command, one subcommand at a time (split on ; && || | and
// line breaks; any deny denies, all must be allowed to run without a prompt). The first line is allowed by pgx's
// narrow wrapper rule and `exit` by `Bash(exit)` (install/permission-rules.ts); the verbatim copy after it is what
// the user's rules judge, exactly as they would judge the unrouted command. The shell never reaches the copy:
// `exit` (no argument: the wrapper's own status) ends it first, so each command runs once, through pgx, with its
// output and exit status unchanged. Measured on Claude Code 2.1.328 (docs/pgx/local-dev/permissions.md); the
// version pin lives in claude-version.ts.
//
// The original becomes ONE single-quoted argument of `<shell> -c`, so the inner shell parses it exactly as the
// unrouted shell would have (pipes, heredocs, quotes, background jobs, exit status).

import { quoteIfNeeded, shellQuote } from '../../lib/shell.js';

export const ROUTED_MARKER = '# pgx-routed ';

/** Whose branch a routed command runs on: a subagent's, or (a Codex parent, decision 205) the session's own. */
export type RoutedFor = { agentId: string; sessionId?: undefined } | { sessionId: string; agentId?: undefined };

export type RewriteParams = RoutedFor & {
  launcher: string; // absolute path of the pgx launcher
  projectDir: string;
  shell: string;
  branch: string;
};

/** The selector flags: `--agent ID`, or `--session SID --fail-open` (the session's commands are not isolation-critical). */
function selectorFlags(p: RoutedFor): string {
  return p.agentId !== undefined
    ? `--agent ${quoteIfNeeded(p.agentId)}`
    : `--session ${quoteIfNeeded(p.sessionId)} --fail-open`;
}

export function routedPrefix(p: RoutedFor & { launcher: string; projectDir: string }): string {
  return `${shellQuote(p.launcher)} agent exec ${selectorFlags(p)} --cwd ${quoteIfNeeded(p.projectDir)} -- `;
}

export function rewriteCommand(original: string, p: RewriteParams): string {
  return `${routedPrefix(p)}${quoteIfNeeded(p.shell)} -c ${shellQuote(original)}; exit ${ROUTED_MARKER}${p.branch}\n${original}`;
}

const SINGLE_QUOTED = /^'(?:[^']|'\\'')*'/;

/**
 * Is `command` exactly what rewriteCommand produces for THIS agent (or session), launcher, project, shell and branch, for the
 * command its verbatim copy holds? Only then is it left alone. Anything else that merely looks routed (another
 * agent's form, a marker typed by the model, a copy that differs from what runs) is not routed, and the launcher
 * guard denies it.
 */
export function isRouted(command: string, p: RewriteParams): boolean {
  const inner = innerCommand(command, p);
  return inner !== undefined && command === rewriteCommand(inner, p);
}

/** The original inside a command that starts like pgx's rewrite for these params (isRouted checks the rest). */
export function innerCommand(command: string, p: RewriteParams): string | undefined {
  const head = `${routedPrefix(p)}${quoteIfNeeded(p.shell)} -c `;
  if (!command.startsWith(head)) return undefined;
  const quoted = SINGLE_QUOTED.exec(command.slice(head.length))?.[0];
  return quoted === undefined ? undefined : quoted.slice(1, -1).replace(/'\\''/g, "'");
}

/**
 * Does the command (typed by the model, parent or subagent) invoke pgx's launcher, or any `pgx agent exec`? Such a
 * command would be approved by pgx's wrapper rule without the user's rules ever seeing what it runs, so the hook
 * denies it unless isRouted. Over-matches on purpose: quotes and backslashes are removed first (`'/x/pg''x.js'`),
 * and any mention of the launcher's path counts.
 */
export function invokesLauncher(command: string, launcher: string): boolean {
  const flat = command.replace(/['"\\]/g, '');
  if (flat.includes(launcher)) return true;
  return /(^|[^A-Za-z0-9_.-])pgx(\.js|\.mjs)?\s+(\S+\s+)*?agent\s+(\S+\s+)*?exec\b/.test(flat);
}

/**
 * Does the command contain a bare `exit` as one of its subcommands? pgx installs `Bash(exit)` for its own
 * terminator, which would also approve the user's bare `exit` without a prompt: the hook denies those instead
 * (stricter, never weaker). Over-matches (`echo exit` counts); `exit 1` and `exit $?` do not count.
 */
export function hasBareExit(command: string): boolean {
  return /(^|[\s;&|(){}!`])exit[ \t]*($|[;&|)}`#\n])/m.test(command);
}

/** The tools whose `command` is a shell command pgx's rewrite applies to: Bash, and Monitor (decision 493). */
export const isShellTool = (name: unknown): boolean => name === 'Bash' || name === 'Monitor';

/**
 * The parent session's Bash call (a PreToolUse payload with no agent_id and a command): pgx does not rewrite it, so
 * the user's rules see it as it is; only a command invoking pgx's launcher, which pgx's wrapper rule would approve
 * unseen, is refused ('deny-launcher'). undefined: not a parent's Bash call. The one place this is decided: the light
 * entry answers 'skip' itself (entries/hook-fast.ts), the PreToolUse handler both (pre-tool-use.ts).
 */
export function parentBashCall(
  payload: { agent_id?: unknown; tool_name?: unknown; tool_input?: unknown },
  launcher: string,
): 'deny-launcher' | 'skip' | undefined {
  const command = (payload.tool_input as Record<string, unknown> | undefined)?.command;
  if (payload.agent_id !== undefined || !isShellTool(payload.tool_name) || typeof command !== 'string')
    return undefined;
  return invokesLauncher(command, launcher) ? 'deny-launcher' : 'skip';
}
