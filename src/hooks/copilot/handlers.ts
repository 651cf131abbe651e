// The GitHub Copilot CLI's hook events, handled with the same engine calls and the same routing plan as Claude Code's
// and Codex's (../claude/bash-plan.ts planSubagentBash, exec's route()); only what Copilot does differently lives here.
//  - pgx never answers "allow" (docs/pgx/local-dev/decisions/472-copilot-permissions.md). Measured on 1.0.102: a
//    preToolUse answer with `modifiedArgs` and NO permissionDecision runs the rewritten command through Copilot's own
//    permission check (--allow-all, --allow-tool, --deny-tool, the prompt), which judges the rewrite, whose verbatim
//    copy of the original (line 2, after `exit`) every rule that matches the original also matches. An "allow" would
//    skip that check, --deny-tool included. So the user's permission state decides on every routed command, and a
//    rewrite is never judged more leniently than the original.
//  - The root session's commands have no env file to ride on (Copilot gives hooks none), so with session_branch on
//    they are rewritten to the session's branch with a selector that fails open, as a Codex parent's (decision 205).
//  - Copilot has sessionEnd: the session's branches end there, as under Claude Code.
//  - The rewrite names pgx as `pgx` (found on PATH) when that is this very launcher: Copilot's path check asks before a
//    command that names a file outside the allowed directories, which `--allow-all-tools` (without
//    `--allow-all-paths`) does not grant, so the absolute launcher path would make -p refuse every routed command
//    there (measured on 1.0.102; decisions/472). Where pgx on PATH is another file, the absolute path stays (stricter).
import { startPoolFill } from '../claude/pool-fill.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { invokesLauncher } from '../claude/rewrite.js';
import { executableOnPath } from '../../lib/fsutil.js';
import { deny, type Handler } from '../claude/hook-handler.js';
import { launcherDeny } from '../claude/bash-plan.js';
import { planShellCall } from '../shared/shell-plan.js';
import { guardMcpCall } from '../shared/mcp-guard.js';
import { mcpAwareFailure, withHandoffs } from '../shared/parent-word.js';
import { sessionEnd } from '../claude/session-lifecycle.js';
import { subagentStart, subagentStop } from '../claude/subagent-lifecycle.js';
import { userPromptSubmit } from '../claude/user-prompt-submit.js';
import type { AnyHandler, HookRuntime } from '../claude/run.js';
import type * as z from 'zod/mini';
import * as P from './payloads.js';

export const preToolUse: Handler<typeof P.copilotPreToolUseSchema> = {
  schema: P.copilotPreToolUseSchema,
  async run(p, h) {
    // An MCP tool (`<server>-<tool>`): refused to a subagent when the server reaches a database, else left alone
    // (../shared/mcp-guard.ts, decision 530).
    const mcp = p.tool_name === 'Bash' ? undefined : guardMcpCall('copilot', p, h);
    if (mcp) return mcp;
    const parent = p.agent_id === undefined;
    if (p.tool_name !== 'Bash') return withHandoffs(h, p, { outcome: 'skipped:not-bash' });
    const command = p.tool_input.command;
    if (parent && (!h.config.sessionBranch || typeof command !== 'string')) {
      if (typeof command === 'string' && invokesLauncher(command, h.launcher)) return launcherDeny();
      return withHandoffs(h, p, { outcome: 'skipped:not-subagent-bash' });
    }
    if (typeof command !== 'string')
      return {
        output: deny('pgx: this bash call has no command string; it was not routed to your database branch.'),
        outcome: 'denied:no-command',
      };
    // A subagent's command fails closed (no branch: onError denies; a fork miss: refused and the parent told,
    // decision 532); the root's runs on the session branch with `--session … --fail-open` (unrouted, loudly, when
    // that branch can't be had), as a Codex parent's. The rewrite names pgx as the agent's shell finds it (see the
    // top of this file); the launcher checks keep the absolute path (a bare `pgx` would match every command that
    // mentions pgx).
    const plan = await planShellCall(p, h, command, (params) => ({ ...params, launcher: rewriteLauncher(h.launcher) }));
    if (plan.kind === 'answered') return withHandoffs(h, p, plan.result);
    plan.ticket();
    // No permissionDecision: Copilot's own permission check judges the rewritten command (see the top of this file).
    return withHandoffs(h, p, {
      output: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          updatedInput: { ...p.tool_input, command: plan.command },
          ...(plan.note ? { additionalContext: plan.note } : {}),
        },
      },
      outcome: `rewritten:${plan.ensured.method}${plan.tail}`,
      branch: plan.ensured.branch,
    });
  },
  onError: (message, payload) => mcpAwareFailure('copilot', message, payload),
};

/** `pgx` when the first pgx on PATH is this launcher (the agent's shell has the hook's PATH), else the absolute path. */
export function rewriteLauncher(launcher: string, env: NodeJS.ProcessEnv = process.env): string {
  // as the agent's shell finds `pgx` (an absolute PATH entry only: a relative one depends on the command's cwd)
  return executableOnPath('pgx', env, { absoluteOnly: true }) === launcher ? 'pgx' : launcher;
}

/** SessionStart: warm the pool before the first subagent asks. No env file (Copilot gives none), no output. */
export const sessionStart: Handler<typeof P.copilotBaseSchema> = {
  schema: P.copilotBaseSchema,
  async run(_p, h) {
    startPoolFill(h.config);
    return { outcome: 'ok' };
  },
  onError: () => ({ outcome: 'error' }),
};

/** A shared handler on the translated payload (payloads.ts), with Copilot's schema. */
function onCopilotPayload<S extends z.ZodMiniType>(handler: Handler<z.ZodMiniType>, schema: S): Handler<S> {
  return { schema, run: (p, h) => handler.run(p, h), onError: handler.onError };
}

export const COPILOT_HANDLERS = {
  'session-start': sessionStart,
  'user-prompt-submit': onCopilotPayload(userPromptSubmit as unknown as Handler<z.ZodMiniType>, P.copilotBaseSchema),
  'pre-tool-use': preToolUse,
  'subagent-start': onCopilotPayload(subagentStart as unknown as Handler<z.ZodMiniType>, P.copilotSubagentSchema),
  'subagent-stop': onCopilotPayload(subagentStop as unknown as Handler<z.ZodMiniType>, P.copilotSubagentSchema),
  'session-end': onCopilotPayload(sessionEnd as unknown as Handler<z.ZodMiniType>, P.copilotBaseSchema),
} as const;

export type CopilotHookName = keyof typeof COPILOT_HANDLERS;

/** Does this project's own .github/hooks/*.json run pgx's Copilot hooks? (a project-scope install) */
function projectInstallsPgx(projectDir: string): boolean {
  const dir = resolve(projectDir, '.github', 'hooks');
  if (!existsSync(dir)) return false;
  try {
    return readdirSync(dir).some(
      (f) => f.endsWith('.json') && / agent copilot-hook /.test(readFileSync(join(dir, f), 'utf8')),
    );
  } catch {
    return false;
  }
}

/** Copilot's shell tool is `bash`: the routed command's inner shell is bash too, whatever $SHELL says. */
export const COPILOT_RUNTIME: HookRuntime = {
  name: 'copilot',
  handlers: COPILOT_HANDLERS as unknown as Record<string, AnyHandler>,
  projectInstalls: projectInstallsPgx,
  shell: 'bash',
};
