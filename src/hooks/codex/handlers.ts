// The Codex CLI's hook events, handled with the same engine calls and the same routing plan as Claude Code's
// (../claude/handlers.ts); only what Codex does differently lives here (docs/pgx/local-dev/decisions/202-codex-allow.md):
//  - Codex applies a rewrite (updatedInput) only together with permissionDecision "allow", and an allow skips the
//    approval the user's mode asks for. So pgx allows only where the payload's mode already bypasses approvals
//    (`codex exec` always sends "bypassPermissions"). Anywhere else it denies, and the reason gives the routed command
//    for the model to run itself: that command then goes through the user's approval like any other, and is left
//    alone here when it comes back (exactly pgx's form for this agent and branch: planSubagentBash's 'routed').
//  - The parent's own commands have no env file to ride on (Codex gives SessionStart none), so with session_branch on
//    they go the same way, to the session's branch, with a selector that fails open (decisions/205-codex-parent-routing.md).
//  - Codex has no SessionEnd: a session's branches end on their idle TTL (decisions/204-codex-session-end.md).
import { startPoolFill } from '../claude/pool-fill.js';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseSettingsText } from '../../lib/settings-file.js';
import { invokesLauncher } from '../claude/rewrite.js';
import { deny, type Handler, type HookResult } from '../claude/hook-handler.js';
import { launcherDeny } from '../claude/bash-plan.js';
import { planShellCall } from '../shared/shell-plan.js';
import { guardMcpCall } from '../shared/mcp-guard.js';
import { mcpAwareFailure, withHandoffs } from '../shared/parent-word.js';
import { subagentStart as claudeSubagentStart, subagentStop } from '../claude/subagent-lifecycle.js';
import { userPromptSubmit } from '../claude/user-prompt-submit.js';
import type { AnyHandler, HookRuntime } from '../claude/run.js';
import type * as z from 'zod/mini';
import * as P from './payloads.js';

/** The one permission_mode in which an allow grants nothing the user did not already give. */
export const BYPASS_MODE = 'bypassPermissions';

/**
 * Does this payload's mode already skip every approval? Only then may pgx answer allow. Unknown or absent: no.
 * `PGX_CODEX_ALLOW=never` makes pgx never allow, even then (stricter only: every routed command goes the deny way).
 */
export function bypassesApprovals(mode: unknown, env: NodeJS.ProcessEnv = process.env): boolean {
  return mode === BYPASS_MODE && env.PGX_CODEX_ALLOW !== 'never';
}

/** The line that ends the deny's explanation; the routed command follows it. */
export const ROUTED_INTRO = 'your approval settings decide as usual):\n';

/** The line after the routed command: Codex appends ". Command: <the original>" to a deny's reason (measured). */
export const ROUTED_END = '\n(end of the command to run)';

/** The routed command a deny's reason hands over, as the model reads it back (undefined: none). */
export function routedCommandIn(text: string): string | undefined {
  const at = text.indexOf(ROUTED_INTRO);
  const end = text.indexOf(ROUTED_END, at);
  return at < 0 || end < 0 ? undefined : text.slice(at + ROUTED_INTRO.length, end);
}

/** The deny that hands the model its routed command: run under the user's own approval, never pre-approved by pgx. */
export function runRoutedInstead(routed: string, branch: string): string {
  return (
    `pgx: not run yet. This command must run on your own database branch "${branch}", and under your approval ` +
    `settings pgx may not approve it for you. Run exactly this command instead (it runs your command once, ` +
    `unchanged, with the branch's connection settings; ${ROUTED_INTRO}${routed}${ROUTED_END}`
  );
}

/**
 * The parent's Bash (no agent_id) is routed to the session's own branch when `[agent] session_branch` is on, as Claude
 * Code's parent is by its env file, which Codex has none of (decision 205); else it passes as typed.
 */
const routesParent = (h: { config: { sessionBranch: boolean } }) => h.config.sessionBranch;

export const preToolUse: Handler<typeof P.codexPreToolUseSchema> = {
  schema: P.codexPreToolUseSchema,
  async run(p, h) {
    // An MCP tool or resource call (the matcher names them: install/codex-entries.ts): refused to a subagent when the
    // server reaches a database, else left alone (../shared/mcp-guard.ts, decision 530).
    const mcp = p.tool_name === 'Bash' ? undefined : guardMcpCall('codex', p, h);
    if (mcp) return mcp;
    if (p.tool_name !== 'Bash') return { outcome: 'skipped:not-bash' };
    const command = p.tool_input.command;
    const parent = p.agent_id === undefined;
    if (parent && (!routesParent(h) || typeof command !== 'string')) {
      if (typeof command === 'string' && invokesLauncher(command, h.launcher)) return launcherDeny();
      return withHandoffs(h, p, { outcome: 'skipped:not-subagent-bash' });
    }
    if (typeof command !== 'string')
      return {
        output: deny('pgx: this shell call has no command string; it was not routed to your database branch.'),
        outcome: 'denied:no-command',
      };
    // The same plan and the same allow rule for the session's own command as for a subagent's; only the selector
    // differs (`--session … --fail-open`: the session's command runs unrouted, loudly, when its branch can't be had).
    // A subagent whose fork of the session's branch missed is refused, and the parent told (decision 532).
    const plan = await planShellCall(p, h, command);
    if (plan.kind === 'answered') return parent ? withHandoffs(h, p, plan.result) : plan.result;
    const { ensured, note, tail } = plan;
    if (!bypassesApprovals(p.permission_mode)) {
      const reason = runRoutedInstead(plan.command, ensured.branch);
      return withHandoffs(h, p, {
        output: deny(note ? `${reason}\n${note}` : reason),
        outcome: `denied:run-routed:${ensured.method}${tail}`,
        branch: ensured.branch,
      });
    }
    plan.ticket();
    return withHandoffs(h, p, {
      output: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'allow',
          permissionDecisionReason: 'pgx: routed to your database branch',
          updatedInput: { ...p.tool_input, command: plan.command },
          ...(note ? { additionalContext: note } : {}),
        },
      },
      outcome: `rewritten:${ensured.method}${tail}`,
      branch: ensured.branch,
    });
  },
  // Fail closed for a subagent's shell command, or its call to a database MCP server (or a payload too broken to
  // tell), as for Claude Code; the parent's fails open: no answer, the command runs as typed (preToolUseFailure).
  onError: (message, payload) => mcpAwareFailure('codex', message, payload),
};

/** Claude's SubagentStart (the same branch, the same context line), with Codex's note on approvals added. */
export const subagentStart: Handler<typeof P.codexSubagentStartSchema> = {
  schema: P.codexSubagentStartSchema,
  async run(p, h) {
    const r: HookResult = await claudeSubagentStart.run({ ...p, transcript_path: p.transcript_path ?? undefined }, h);
    const out = r.output?.hookSpecificOutput as { additionalContext?: string } | undefined;
    if (out?.additionalContext)
      out.additionalContext +=
        ' Under Codex approval settings that ask before commands, pgx refuses a command once and gives you the ' +
        'routed form to run instead: run that exact command.';
    return r;
  },
  onError: claudeSubagentStart.onError,
};

/** SessionStart: warm the pool before the first subagent asks. No env file, no output (decisions/202). */
export const sessionStart: Handler<typeof P.codexSessionStartSchema> = {
  schema: P.codexSessionStartSchema,
  async run(_p, h) {
    startPoolFill(h.config, h.env);
    return { outcome: 'ok' };
  },
  onError: () => ({ outcome: 'error' }),
};

/** A Claude handler that takes the Codex payload (its nullable transcript_path, the extra fields) as is. */
function onCodexPayload<S extends z.ZodMiniType>(handler: Handler<z.ZodMiniType>, schema: S): Handler<S> {
  return {
    schema,
    run: (p, h) =>
      handler.run(
        {
          ...(p as Record<string, unknown>),
          transcript_path: (p as { transcript_path?: string | null }).transcript_path ?? undefined,
        },
        h,
      ),
    onError: handler.onError,
  };
}

export const CODEX_HANDLERS = {
  'session-start': sessionStart,
  'user-prompt-submit': onCodexPayload(userPromptSubmit as unknown as Handler<z.ZodMiniType>, P.codexBaseSchema),
  'pre-tool-use': preToolUse,
  'subagent-start': subagentStart,
  'subagent-stop': onCodexPayload(subagentStop as unknown as Handler<z.ZodMiniType>, P.codexSubagentStartSchema),
} as const;

export type CodexHookName = keyof typeof CODEX_HANDLERS;

/** Does this project's own .codex/hooks.json run pgx's hooks? (a project-scope install) */
function projectInstallsPgx(projectDir: string): boolean {
  const file = resolve(projectDir, '.codex', 'hooks.json');
  if (!existsSync(file)) return false;
  try {
    return / agent codex-hook /.test(JSON.stringify(parseSettingsText(readFileSync(file, 'utf8'), file).hooks ?? {}));
  } catch {
    return false;
  }
}

export const CODEX_RUNTIME: HookRuntime = {
  name: 'codex',
  handlers: CODEX_HANDLERS as unknown as Record<string, AnyHandler>,
  projectInstalls: projectInstallsPgx,
};
