// PreToolUse of an MCP tool (`mcp__<server>__<tool>`) or an MCP resource tool. A server pgx stands in front of
// (mcp/front-entry.ts): the call is recorded under its tool_use_id, and pgx's front sends it to the caller's branch
// (mcp/calls.ts, decision 491). A database server pgx does not route: a subagent's call is refused with what to do
// instead (its database would be shared with every agent); the parent's goes on, as the user set it up. A server
// that reaches no database: left alone. Resources carry no caller id to Claude Code's server request, so a
// subagent's resource call to a database server is refused, routed or not (decision 494).
import { resolve } from 'node:path';
import { recordCall, isToolUseId } from '../../mcp/calls.js';
import { isDatabaseServer } from '../../mcp/database-sites.js';
import { isFronted } from '../../mcp/front-entry.js';
import { effectiveServers, serverNamed, serverOfToolName, type McpServer } from '../../mcp/servers.js';
import type * as P from './payloads.js';
import { deny, type HookEnv, type HookResult } from './hook-handler.js';

/** The directory Claude Code reads `.mcp.json` from and keys the local scope by: its project directory. */
function claudeProjectDir(p: { cwd?: unknown }, h: Pick<HookEnv, 'env' | 'config'>): string {
  return resolve(h.env.CLAUDE_PROJECT_DIR || (typeof p.cwd === 'string' ? p.cwd : '') || h.config.projectDir);
}

type Verdict = 'routed' | 'database' | 'other' | 'unseen';

function verdictOf(s: McpServer | undefined): Verdict {
  if (!s) return 'unseen';
  if (isFronted(s.entry)) return 'routed';
  return s.stdio && isDatabaseServer(s.stdio) ? 'database' : 'other';
}

/** The server of an MCP tool call: the payload's `mcp_server.name`, else the tool name's part. */
function serverOfCall(p: Record<string, unknown>, dir: string, env: NodeJS.ProcessEnv): McpServer | undefined {
  const given = p.mcp_server as { name?: unknown; source?: unknown } | undefined;
  if (typeof given?.name === 'string')
    return serverNamed(given.name, dir, env, typeof given.source === 'string' ? given.source : undefined);
  const servers = effectiveServers(dir, env);
  const name = serverOfToolName(
    String(p.tool_name),
    servers.map((s) => s.name),
  );
  return name === undefined ? undefined : servers.find((s) => s.name === name);
}

const unroutedReason = (name: string) =>
  `pgx: the MCP server "${name}" reaches a PostgreSQL database that pgx does not route to each agent's own branch, ` +
  `so this call was refused: it would run on a database shared with every other agent. Use the Bash tool instead ` +
  `(psql there reaches your own branch, with no connection flags), or tell the user to run \`pgx mcp route ${name}\`, ` +
  `which routes the server's calls to each agent's branch.`;

export async function mcpToolCall(p: P.PreToolUsePayload, h: HookEnv): Promise<HookResult> {
  const dir = claudeProjectDir(p, h);
  const server = serverOfCall(p, dir, h.env);
  const verdict = verdictOf(server);
  if (verdict === 'routed') {
    if (!isToolUseId(p.tool_use_id))
      return {
        output: deny(
          `pgx: this call to the MCP server "${server!.name}" has no tool_use_id, so pgx can't tell its database ` +
            'branch which agent it is for; it was refused. Use the Bash tool (psql) instead.',
        ),
        outcome: 'denied:mcp-no-tool-use-id',
      };
    recordCall(h.config.home, p.tool_use_id, {
      session_id: p.session_id,
      agent_id: p.agent_id ?? null,
      server: server!.name,
      project_dir: h.config.projectDir,
    });
    return { outcome: `recorded:mcp:${server!.name}` };
  }
  if (verdict !== 'database') return { outcome: `skipped:mcp-${verdict}` };
  if (p.agent_id === undefined) return { outcome: 'skipped:mcp-parent-unrouted' };
  return { output: deny(unroutedReason(server!.name)), outcome: `denied:mcp-unrouted:${server!.name}` };
}

export async function mcpResourceCall(p: P.PreToolUsePayload, h: HookEnv): Promise<HookResult> {
  if (p.agent_id === undefined) return { outcome: 'skipped:parent-mcp-resource' };
  const dir = claudeProjectDir(p, h);
  const named = p.tool_input.server;
  const servers =
    typeof named === 'string'
      ? [serverNamed(named, dir, h.env)].filter((s): s is McpServer => s !== undefined)
      : effectiveServers(dir, h.env); // ListMcpResourcesTool without a server: every server's list
  const db = servers.filter((s) => {
    const v = verdictOf(s);
    return v === 'routed' || v === 'database';
  });
  if (db.length === 0) return { outcome: 'skipped:mcp-resource-not-database' };
  const names = db.map((s) => `"${s.name}"`).join(', ');
  return {
    output: deny(
      `pgx: ${names} ${db.length > 1 ? 'are MCP servers that reach' : 'is an MCP server that reaches'} a PostgreSQL ` +
        `database, and a subagent's resource calls can't be routed to its own branch (Claude Code names no caller ` +
        `when it reads a resource, and the resource list was read from the session's branch), so this call was ` +
        `refused. Use the Bash tool (psql \\dt, \\d <table> there show your own branch)` +
        `${db.some((s) => isFronted(s.entry)) ? `, or the server's tools, which pgx routes to your branch` : ''}.`,
    ),
    outcome: 'denied:mcp-resource',
  };
}

/** PreToolUse failed (config, payload): would this MCP call reach a database? Then it is refused, else let through. */
export function refusesOnFailure(payload: Record<string, unknown>): boolean {
  try {
    const env = process.env;
    const dir = resolve(env.CLAUDE_PROJECT_DIR || (typeof payload.cwd === 'string' ? payload.cwd : '.'));
    if (payload.tool_name !== undefined && String(payload.tool_name).startsWith('mcp__')) {
      const v = verdictOf(serverOfCall(payload, dir, env));
      return v === 'routed' || v === 'database';
    }
    return true; // a resource call of a subagent: refused
  } catch {
    return true;
  }
}
