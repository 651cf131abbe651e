// A Codex or Copilot agent's MCP call (decision 530). pgx's MCP front routes a database server's calls per agent only
// under Claude Code (mcp/front.ts, decisions 490-492); under these two CLIs pgx does not put itself in front of a
// server, so a subagent's call to a server that reaches a PostgreSQL database would run on the database every other
// agent shares: it is refused, with what works instead (the shell tool, which pgx routes). The session's own call
// goes on, as the user set it up (as under Claude Code for a server pgx does not route); a server that reaches no
// database, or one pgx does not see in the CLI's config files, is left alone. Codex's MCP resource tools naming a
// database server (or no server, while one is configured) are refused to a subagent the same way (decision 494).
import { resolve } from 'node:path';
import {
  codexMcpServers,
  copilotMcpServers,
  databaseServerNames,
  reachesDatabase,
  serverOfRuntimeTool,
  type RuntimeMcpServer,
} from '../../mcp/runtime-servers.js';
import { deny, type HookEnv, type HookResult } from '../claude/hook-handler.js';

export type McpRuntime = 'codex' | 'copilot';

const CLI_NAME: Record<McpRuntime, string> = { codex: 'the Codex CLI', copilot: 'the Copilot CLI' };
/** The tool a subagent of that CLI runs shell commands with (pgx routes it): what to use instead of the MCP call. */
export const SHELL_TOOL: Record<McpRuntime, string> = { codex: 'shell tool', copilot: 'bash tool' };

/** Codex's tools that read an MCP server's resources (0.171.0; each fires PreToolUse under its own name). */
export const CODEX_RESOURCE_TOOLS = ['list_mcp_resources', 'list_mcp_resource_templates', 'read_mcp_resource'];

export interface McpCall {
  agent_id?: string;
  cwd?: string;
  tool_name: string;
  tool_input: Record<string, unknown>;
}

function serversFor(runtime: McpRuntime, p: { cwd?: string }, h: Pick<HookEnv, 'config' | 'env'>): RuntimeMcpServer[] {
  const dirs = [...new Set([h.config.projectDir, ...(p.cwd ? [resolve(p.cwd)] : [])])];
  const read = runtime === 'codex' ? codexMcpServers : copilotMcpServers;
  return dirs.flatMap((d) => read(d, h.env));
}

export function refusedReason(runtime: McpRuntime, names: string[]): string {
  const list = names.map((n) => `"${n}"`).join(', ');
  const servers = names.length > 1 ? `the MCP servers ${list} reach` : `the MCP server ${list} reaches`;
  return (
    `pgx: ${servers} a PostgreSQL database, and under ${CLI_NAME[runtime]} pgx can't route a ` +
    `subagent's MCP calls to its own database branch, so this call was refused: it would run on the database ` +
    `shared with every other agent. Use the ${SHELL_TOOL[runtime]} instead (psql there reaches your own branch, ` +
    `with no connection flags).`
  );
}

/**
 * The hook's answer to an MCP call, or undefined when the tool is not an MCP one pgx sees (the caller goes on with
 * its own handling). Never a rewrite: nothing a hook can put in the call moves a server's connection to a branch.
 */
export function guardMcpCall(
  runtime: McpRuntime,
  p: McpCall,
  h: Pick<HookEnv, 'config' | 'env'>,
): HookResult | undefined {
  const resource = runtime === 'codex' && CODEX_RESOURCE_TOOLS.includes(p.tool_name);
  const mcpShaped = resource || (runtime === 'codex' ? p.tool_name.startsWith('mcp__') : p.tool_name.includes('-'));
  if (!mcpShaped) return undefined;
  const servers = serversFor(runtime, p, h);
  let names: string[];
  if (resource) {
    const named = p.tool_input.server;
    names =
      typeof named === 'string' && named !== ''
        ? reachesDatabase(named, servers)
          ? [named]
          : []
        : databaseServerNames(servers); // every server's list
  } else {
    const server = serverOfRuntimeTool(runtime, p.tool_name, servers);
    if (!server) return runtime === 'codex' ? { outcome: 'skipped:mcp-unseen' } : undefined;
    names = reachesDatabase(server.name, servers) ? [server.name] : [];
  }
  const kind = resource ? 'mcp-resource' : 'mcp';
  if (!names.length) return { outcome: `skipped:${kind}-not-database` };
  if (p.agent_id === undefined) return { outcome: `skipped:${kind}-parent` };
  return { output: deny(refusedReason(runtime, names)), outcome: `denied:${kind}-unrouted:${names.join(',')}` };
}

/**
 * The hook failed (config, payload): the refusal of a subagent's call to a database server, made from the payload and
 * the CLI's config files alone; undefined for anything else. A failure to read even those refuses (fail closed).
 */
export function mcpRefusalOnFailure(
  runtime: McpRuntime,
  payload: Record<string, unknown> | undefined,
  message: string,
): HookResult | undefined {
  if (!payload || payload.agent_id === undefined || typeof payload.tool_name !== 'string') return undefined;
  try {
    const dir = resolve(typeof payload.cwd === 'string' ? payload.cwd : '.');
    const input = payload.tool_input;
    const p: McpCall = {
      agent_id: String(payload.agent_id),
      cwd: dir,
      tool_name: payload.tool_name,
      tool_input: typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {},
    };
    const r = guardMcpCall(runtime, p, { config: { projectDir: dir } as HookEnv['config'], env: process.env });
    return r?.outcome.startsWith('denied:') ? { ...r, outcome: 'denied:error' } : undefined;
  } catch {
    return {
      output: deny(`pgx failed unexpectedly (${message}), so this MCP call was refused. Run \`pgx agent doctor\`.`),
      outcome: 'denied:error',
    };
  }
}
