// PreToolUse: one handler for every tool the matcher names (events.ts ROUTED_TOOLS), dispatched by kind. The parent's
// shell commands pass as they are (a typed launcher refused, waiting handoffs said); a subagent's Bash and Monitor
// commands are routed to its own branch (shell-call.ts); MCP tools and resources are recorded for pgx's front or
// refused (mcp-call.ts); a subagent's CronCreate, REPL and shell-running Skill are refused (unseen-shell.ts); what
// can't be routed fails closed for a subagent.
import * as P from './payloads.js';
import { parentBashCall } from './rewrite.js';
import { launcherPath } from './launcher.js';
import { deny, type Handler, type HookResult } from './hook-handler.js';
import { invokesLauncherIn, launcherDeny } from './bash-plan.js';
import { handoffsFor } from './parent-handoffs.js';
import { toolKind } from './events.js';
import { routeSubagentShell } from './shell-call.js';
import { mcpResourceCall, mcpToolCall, refusesOnFailure } from './mcp-call.js';
import { laterOrUnseenShellCall } from './unseen-shell.js';

export const preToolUse: Handler<typeof P.preToolUseSchema> = {
  schema: P.preToolUseSchema,
  async run(p, h) {
    const kind = toolKind(p.tool_name);
    if (kind === 'mcp') return mcpToolCall(p, h);
    if (kind === 'resource') return mcpResourceCall(p, h);
    if (kind === 'powershell')
      return p.agent_id === undefined ? { outcome: 'skipped:parent-powershell' } : powershellDeny();
    if (kind === 'cron' || kind === 'skill' || kind === 'repl') return laterOrUnseenShellCall(p, kind, h);
    if (kind !== 'bash' && kind !== 'monitor') return { outcome: `skipped:not-routed-tool` };
    const command = p.tool_input.command;
    if (p.agent_id === undefined) {
      // The parent's commands are not rewritten, so the user's rules see them as they are; only the launcher,
      // which pgx's wrapper rule would approve unseen, is refused. (Its Monitor's shell reads the session's env file.)
      if (parentBashCall(p, h.launcher) === 'deny-launcher') return launcherDeny();
      if (kind === 'monitor') return { outcome: 'skipped:parent-monitor' };
      // What its subagents changed, if any is waiting (a foreground agent's parent has no other hook before this).
      const handoffs = await handoffsFor(h, p.session_id);
      if (handoffs.context)
        return {
          output: { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: handoffs.context } },
          outcome: `skipped:not-subagent-bash${handoffs.tail}`,
        };
      return { outcome: `skipped:not-subagent-bash${handoffs.tail}` };
    }
    if (typeof command !== 'string')
      return kind === 'monitor'
        ? { outcome: 'skipped:monitor-without-command' } // a WebSocket watch (`ws`) runs no shell
        : {
            output: deny('pgx: this Bash call has no command string; it was not routed to your database branch.'),
            outcome: 'denied:no-command',
          };
    return routeSubagentShell(p, h, command, kind);
  },
  onError: preToolUseFailure,
};

function powershellDeny(): HookResult {
  return {
    output: deny(
      "pgx: a subagent's PowerShell commands can't be routed to its own database branch (pgx routes Bash and " +
        'Monitor commands), so this one was refused: it would reach a database shared with every other agent. ' +
        'Run it with the Bash tool instead.',
    ),
    outcome: 'denied:powershell',
  };
}

/**
 * PreToolUse when pgx itself failed (every runtime's). A launcher invocation is refused even when pgx is broken: the
 * wrapper rule would otherwise approve it unseen. A subagent's shell command (Bash, Monitor, PowerShell), CronCreate,
 * Skill and REPL call fail closed, and so does its call to a database MCP server; a payload known NOT to be one of those (no agent_id: the
 * parent; another tool; an MCP server that reaches no database) fails open: a broken .pgx.toml used to deny every
 * Bash of the main session too.
 */
export function preToolUseFailure(message: string, payload?: Record<string, unknown>): HookResult {
  if (invokesLauncherIn(payload, launcherPath())) return launcherDeny();
  const kind = toolKind(payload?.tool_name);
  if (payload && (payload.agent_id === undefined || (kind === 'other' && typeof payload.tool_name === 'string')))
    return { outcome: 'error:not-subagent-bash' };
  if (payload && (kind === 'mcp' || kind === 'resource') && !refusesOnFailure(payload))
    return { outcome: 'error:not-database-mcp' };
  return {
    output: deny(
      `pgx could not ensure this subagent's own database branch, so the command was not run (it would have ` +
        `touched a shared database). ${message} Fix: run \`pgx agent doctor\` in the project; then retry the command.`,
    ),
    outcome: 'denied:error',
  };
}
