// The PreToolUse rewrite. The original command becomes ONE single-quoted argument of `<shell> -c`, so the user's
// shell parses it exactly as it would have (pipes, heredocs, quotes, background jobs, exit status). The rewrite
// starts with the launcher so a permission allow rule `Bash(<launcher> agent exec:*)` can match it.

import { quoteIfNeeded, shellQuote } from '../../shell.js';

export const ROUTED_MARKER = '# pgx-routed ';

export interface RewriteParams {
  launcher: string; // absolute path of the pgx launcher
  agentId: string;
  projectDir: string;
  shell: string;
  branch: string;
}

export function routedPrefix(p: Pick<RewriteParams, 'launcher' | 'agentId' | 'projectDir'>): string {
  return `${shellQuote(p.launcher)} agent exec --agent ${quoteIfNeeded(p.agentId)} --cwd ${quoteIfNeeded(p.projectDir)} -- `;
}

export function rewriteCommand(original: string, p: RewriteParams): string {
  return `${routedPrefix(p)}${quoteIfNeeded(p.shell)} -c ${shellQuote(original)} ${ROUTED_MARKER}${p.branch}`;
}

/**
 * Already routed to THIS agent's branch by THIS launcher? Only then is the command left alone: a command that merely
 * contains the marker text (typed by the model) is wrapped like any other, so the marker can't be used to escape.
 */
export function isRouted(command: string, p: RewriteParams): boolean {
  const prefix = routedPrefix(p);
  const suffix = ` ${ROUTED_MARKER}${p.branch}`;
  if (!command.startsWith(prefix) || !command.endsWith(suffix)) return false;
  // The middle must be exactly `<shell> -c '<single-quoted text>'`: nothing can follow the quoted argument, and the
  // shell word must be OUR shell, verbatim. (It used to be any \S+, so `…-- true;psql${IFS}…;bash -c 'x' # pgx-routed
  // <branch>` counted as routed and its psql ran outside `agent exec`, on whatever database the user's shell pointed at.)
  const middle = command.slice(prefix.length, command.length - suffix.length);
  const shellWord = `${quoteIfNeeded(p.shell)} -c `;
  return middle.startsWith(shellWord) && /^'(?:[^']|'\\'')*'$/.test(middle.slice(shellWord.length));
}
