// Claude Code hook payloads, shaped like the ones observed on Claude Code 2.1.328 (see the shared hook contract):
// session_id is a UUID, agent_id 17 hex characters ("a5550b0ae3d1c2c1c"), every event carries session_id,
// transcript_path, cwd and hook_event_name; subagent events carry agent_id and agent_type.
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';

export const newSessionId = (): string => randomUUID();

/** A subagent id as Claude Code makes them: "a" + 16 hex. `prefix` (hex) forces ids that share their first characters. */
export function newAgentId(prefix = ''): string {
  if (!/^[0-9a-f]*$/.test(prefix)) throw new Error(`agent id prefix must be hex: ${prefix}`);
  return ('a' + prefix + randomBytes(8).toString('hex')).slice(0, 17);
}

/** One Claude Code session in one project directory: what every payload of that session shares. */
export interface SessionCtx {
  sessionId: string;
  cwd: string;
  /** The user's home (transcripts live under ~/.claude/projects/<munged cwd>/). */
  home: string;
}

export function session(cwd: string, home: string, sessionId = newSessionId()): SessionCtx {
  return { sessionId, cwd, home };
}

const projectsDir = (s: SessionCtx) => join(s.home, '.claude', 'projects', s.cwd.replace(/[^A-Za-z0-9]/g, '-'));
const toolUseId = () => `toolu_01${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

function common(s: SessionCtx, event: string) {
  return {
    session_id: s.sessionId,
    transcript_path: join(projectsDir(s), `${s.sessionId}.jsonl`),
    cwd: s.cwd,
    hook_event_name: event,
  };
}

export function sessionStart(s: SessionCtx, source: 'startup' | 'resume' | 'clear' | 'compact' = 'startup') {
  return { ...common(s, 'SessionStart'), source, model: 'claude-opus-5-5' };
}

export function userPromptSubmit(s: SessionCtx, prompt = 'Run the migrations in three parallel agents.') {
  return { ...common(s, 'UserPromptSubmit'), permission_mode: 'default', prompt, prompt_id: randomUUID() };
}

export function subagentStart(s: SessionCtx, agentId: string, agentType = 'general-purpose') {
  return { ...common(s, 'SubagentStart'), agent_id: agentId, agent_type: agentType, prompt_id: randomUUID() };
}

export interface BashInput {
  command: string;
  description?: string;
  timeout?: number;
  run_in_background?: boolean;
}

/** PreToolUse(Bash). With `agentId` it comes from inside a subagent; without, from the parent (no agent fields). */
export function preToolUseBash(
  s: SessionCtx,
  command: string,
  opts: { agentId?: string; agentType?: string; input?: Partial<BashInput> } = {},
) {
  const subagent =
    opts.agentId !== undefined ? { agent_id: opts.agentId, agent_type: opts.agentType ?? 'general-purpose' } : {};
  return {
    ...common(s, 'PreToolUse'),
    permission_mode: 'default',
    ...subagent,
    effort: { level: 'high' },
    tool_name: 'Bash',
    tool_input: { command, description: 'Run a database command', timeout: 120000, ...opts.input },
    tool_use_id: toolUseId(),
  };
}

export function subagentStop(s: SessionCtx, agentId: string, agentType = 'general-purpose') {
  return {
    ...common(s, 'SubagentStop'),
    permission_mode: 'default',
    agent_id: agentId,
    agent_type: agentType,
    stop_hook_active: false,
    agent_transcript_path: join(projectsDir(s), s.sessionId, 'subagents', `agent-${agentId}.jsonl`),
    last_assistant_message: 'Done: the migration ran on my branch.',
    background_tasks: [],
    session_crons: [],
  };
}

export function sessionEnd(
  s: SessionCtx,
  reason: 'clear' | 'resume' | 'logout' | 'prompt_input_exit' | 'other' = 'other',
) {
  return { ...common(s, 'SessionEnd'), reason };
}

/** PreToolUse of another tool (Monitor, an MCP tool, a resource tool), shaped as 2.1.328 and 2.1.332 send it. */
export function preToolUseTool(
  s: SessionCtx,
  tool: string,
  input: Record<string, unknown>,
  opts: { agentId?: string; mcpServer?: { name: string; source: string }; toolUseId?: string } = {},
) {
  const subagent = opts.agentId !== undefined ? { agent_id: opts.agentId, agent_type: 'general-purpose' } : {};
  return {
    ...common(s, 'PreToolUse'),
    permission_mode: 'default',
    ...subagent,
    tool_name: tool,
    tool_input: input,
    tool_use_id: opts.toolUseId ?? toolUseId(),
    ...(opts.mcpServer ? { mcp_server: opts.mcpServer } : {}),
  };
}
