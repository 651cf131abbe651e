// The six Claude Code hook events pgx answers: each one's settings name, the name `pgx agent hook <event>` takes,
// its matcher, its timeout and its onFailure, in one table, and the deadline pgx answers by. The installer's settings
// entries and the plugin's hooks.json are both made from it (settings-entries.ts; decisions/311-one-event-table.md),
// the hook runner and the light entry (entries/hook-fast.ts) read their deadlines from it. Its own module, importing
// nothing: the light entry loads it on every hook.

/**
 * Claude Code's default for a hook that fails (can't start, is killed, times out, exits other than 0 or 2, prints JSON
 * that fails validation) is to go on as if it said nothing: for PreToolUse, the subagent's command runs unrouted.
 * `"block"` turns each of those into a blocked call with the cause in the tool result. Releases before 2.1.295 strip
 * the key without a word (measured on 2.1.0 and 2.1.294: hooks and rules still apply), so it is written for every
 * version; the value must be exactly "block" (2.1.332 skips the whole file for "blok"). Written only on PreToolUse:
 * on SessionStart and SubagentStart it blocks nothing, on SubagentStop it is ignored with a warning
 * (docs/pgx/local-dev/decisions/191-pretooluse-fails-closed.md).
 */
export const ON_FAILURE_BLOCK = 'block' as const;
/** The first Claude Code release that honours `onFailure` (earlier ones ignore it: PreToolUse then fails open). */
export const ON_FAILURE_SINCE = '2.1.295';

/**
 * The tools whose PreToolUse pgx answers (decisions 493 and 520): Bash; Monitor, which runs a shell command (its own
 * PreToolUse entry is the one whose updatedInput Claude Code honours: measured on 2.1.328 and 2.1.332); PowerShell
 * (Windows, or CLAUDE_CODE_USE_POWERSHELL_TOOL elsewhere); the MCP resource tools; every MCP tool (`mcp__…`); and the
 * tools that run something later or out of pgx's sight: CronCreate (a prompt the main session runs later), Skill (a
 * skill's inline `!` shell commands run with no Bash call) and REPL (Code Mode's scripts). An anchored alternation,
 * not `.*`: Read, Edit, Grep and the rest start no hook process.
 */
export const ROUTED_TOOLS = [
  'Bash',
  'Monitor',
  'PowerShell',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
  'ReadMcpResourceDirTool',
  'CronCreate',
  'Skill',
  'REPL',
] as const;
export const PRE_TOOL_USE_MATCHER = `^(${ROUTED_TOOLS.join('|')}|mcp__.*)$`;

/** How PreToolUse treats a tool (pre-tool-use.ts dispatches on it). */
export type ToolKind = 'bash' | 'monitor' | 'powershell' | 'resource' | 'mcp' | 'cron' | 'skill' | 'repl' | 'other';
export function toolKind(name: unknown): ToolKind {
  if (name === 'Bash') return 'bash';
  if (name === 'Monitor') return 'monitor';
  if (name === 'PowerShell') return 'powershell';
  if (name === 'ListMcpResourcesTool' || name === 'ReadMcpResourceTool' || name === 'ReadMcpResourceDirTool')
    return 'resource';
  if (name === 'CronCreate') return 'cron';
  if (name === 'Skill') return 'skill';
  if (name === 'REPL') return 'repl';
  return typeof name === 'string' && name.startsWith('mcp__') ? 'mcp' : 'other';
}

const TABLE = [
  // Creates/attaches the session's state; may have to start the local server on a cold machine.
  { event: 'SessionStart', cli: 'session-start', timeout: 30 },
  // Cheap bookkeeping on every prompt; keep it from ever holding up the user for long.
  // It fires once per subagent as well (21 times in a 20-subagent fan-out): the launcher's sh part hands it to the
  // broker with no node process (decision 441). It fails open (no onFailure): a missed heartbeat or a handoff told
  // one prompt later isolates nothing.
  { event: 'UserPromptSubmit', cli: 'user-prompt-submit', timeout: 10 },
  // Rewrites Bash and Monitor commands to run under `agent exec`, records MCP calls for pgx's front, refuses what
  // can't be routed; may have to create the subagent's branch (a clone), hence the generous budget. The matcher
  // names the tools it answers (ROUTED_TOOLS). A hook that fails must block the call, never let a subagent's command
  // run unrouted (ON_FAILURE_BLOCK).
  { event: 'PreToolUse', cli: 'pre-tool-use', matcher: PRE_TOOL_USE_MATCHER, timeout: 60, onFailure: ON_FAILURE_BLOCK },
  // Creates the subagent's branch (a clone of the template), which can take a while on a big database.
  { event: 'SubagentStart', cli: 'subagent-start', timeout: 60 },
  // Records/retires the subagent's branch.
  { event: 'SubagentStop', cli: 'subagent-stop', timeout: 30 },
  // SessionEnd hooks share one budget of 1.5 s (CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS, default 1500) and a
  // per-hook timeout is capped by it, so 10 s only matters where a user raised that budget. pgx only marks the
  // session's branches retired here (cheap); cleanup happens later, so being cut off at 1.5 s is harmless.
  { event: 'SessionEnd', cli: 'session-end', timeout: 10 },
] as const;

type Row = (typeof TABLE)[number];
/** A hook event as `pgx agent hook <event>` names it (`pre-tool-use`): the one name the code uses for an event. */
export type HookEvent = Row['cli'];
/** A hook event as Claude Code's settings name it (`PreToolUse`). */
export type HookEventName = Row['event'];

export interface HookEntry {
  event: HookEventName;
  cli: HookEvent;
  matcher?: string;
  /** Seconds. */
  timeout: number;
  onFailure?: typeof ON_FAILURE_BLOCK;
}

/** The six hooks pgx installs. Timeouts are in seconds (Claude Code's unit). */
export const HOOK_EVENTS: readonly HookEntry[] = Object.freeze(TABLE);

export const EVENT_BY_CLI = new Map<string, HookEntry>(HOOK_EVENTS.map((h) => [h.cli, h]));
export const EVENT_BY_NAME = new Map<string, HookEntry>(HOOK_EVENTS.map((h) => [h.event, h]));

export const isHookEvent = (event: string | undefined): event is HookEvent =>
  event !== undefined && EVENT_BY_CLI.has(event);

/**
 * How long a hook may work before it answers anyway: 80% of its timeout (PGX_HOOK_DEADLINE_MS overrides).
 * Claude Code runs a PreToolUse command whose hook timed out UNCHANGED (unrouted), so pgx must answer (deny) first.
 */
export function hookDeadlineMs(event: HookEvent, env: NodeJS.ProcessEnv = process.env): number {
  const override = Number(env.PGX_HOOK_DEADLINE_MS);
  if (Number.isFinite(override) && override > 0) return override;
  return Math.round((EVENT_BY_CLI.get(event)?.timeout ?? 30) * 1000 * 0.8);
}
