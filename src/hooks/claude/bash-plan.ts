// The Bash tool's plan, decided once for every runtime's PreToolUse and for `pgx agent verify`'s probe: a subagent's
// command is left alone (pgx's own rewrite), refused (a typed launcher, a bare `exit`) or rewritten to its branch.
import {
  hasBareExit,
  innerCommand,
  invokesLauncher,
  isRouted,
  isShellTool,
  rewriteCommand,
  type RewriteParams,
} from './rewrite.js';
import { deny, type HookResult } from './hook-handler.js';

/** What `agent exec` will run for this command: the command itself, or, already routed, the copy it carries. */
export function original(command: string, p: RewriteParams): string {
  return isRouted(command, p) ? innerCommand(command, p)! : command;
}

/** The deny for a command that invokes pgx's launcher itself (see invokesLauncher). */
export function launcherDeny(): HookResult {
  return {
    output: deny(
      "pgx: this command runs pgx's own `agent exec` launcher. pgx's permission rule pre-approves that launcher " +
        'only in the exact form its hook writes, so a hand-written one is refused: it would run a command your ' +
        'permission rules never checked. Run the inner command directly; pgx routes it to your database branch by itself.',
    ),
    outcome: 'denied:launcher',
  };
}

/** A Bash or Monitor payload whose command invokes the launcher: denied whatever else happens (scope, config, errors). */
export function invokesLauncherIn(payload: Record<string, unknown> | undefined, launcher: string): boolean {
  const input = payload?.tool_input;
  if (!isShellTool(payload?.tool_name) || typeof input !== 'object' || input === null) return false;
  const command = (input as Record<string, unknown>).command;
  return typeof command === 'string' && invokesLauncher(command, launcher);
}

export type BashPlan = { kind: 'routed' } | { kind: 'deny'; result: HookResult } | { kind: 'rewrite'; command: string };

/**
 * What pgx does with a subagent's Bash command once its branch is known: leave pgx's own rewrite alone, refuse a
 * typed launcher or a bare `exit`, or rewrite. The one place this is decided: the hook, and `pgx agent verify`'s
 * probe (src/verify/probe.ts), which must test exactly what the hook writes.
 */
export function planSubagentBash(command: string, params: RewriteParams): BashPlan {
  if (isRouted(command, params)) return { kind: 'routed' };
  if (invokesLauncher(command, params.launcher)) return { kind: 'deny', result: launcherDeny() };
  if (hasBareExit(command)) {
    return {
      kind: 'deny',
      result: {
        output: deny(
          "pgx: this command contains a bare `exit`. pgx's routing relies on a permission rule for a bare `exit` " +
            "of its own, which would also approve yours without your rules' say, so pgx refuses it. Leave it out, " +
            'or write `exit 0` / `exit 1`.',
        ),
        outcome: 'denied:bare-exit',
      },
    };
  }
  return { kind: 'rewrite', command: rewriteCommand(command, params) };
}
