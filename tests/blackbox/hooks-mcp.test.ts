// PreToolUse for the tools beside Bash (the built CLI, as Claude Code runs it): a subagent's Monitor command is
// rewritten like its Bash (every other field kept); a call to an MCP server pgx stands in front of is recorded for the
// front, the parent's too; a subagent's call to a database server pgx does not route is refused with what to do, the
// parent's goes on; a server that reaches no database is left alone; a subagent's resource call to a database server
// and its PowerShell are refused.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject } from '../helpers/pgx.js';
import { newAgentId, preToolUseTool, session } from '../helpers/hook-payloads.js';
import { hook, rewriteOf } from '../helpers/hooks.js';
import { takeCall } from '../../src/mcp/calls.js';

const URL = 'postgresql://me:s3cret-pw@127.0.0.1:5432/shop_dev';

function mcpProject() {
  const p = makeProject();
  writeFileSync(
    join(p.dir, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        routed: {
          command: 'pgx',
          args: ['mcp', 'serve', 'routed'],
          env: { PGX_MCP_COMMAND: 'npx', PGX_MCP_ARG_0: URL, PGX_MCP_ARGC: '1' },
        },
        pg: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-postgres', URL] },
        files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] },
      },
    }),
  );
  // a local-scope database server in the user's ~/.claude.json
  mkdirSync(p.env.HOME!, { recursive: true });
  writeFileSync(
    join(p.env.HOME!, '.claude.json'),
    JSON.stringify({
      projects: {
        [p.dir]: { mcpServers: { mine: { command: 'node', args: ['x.js'], env: { PGDATABASE: 'shop_dev' } } } },
      },
    }),
  );
  return p;
}

describe('PreToolUse: MCP tools, resources, Monitor, PowerShell', () => {
  it('MCP: routed calls recorded (subagent and parent); unrouted database calls of a subagent refused; others left alone', async () => {
    const p = mcpProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const call = (tool: string, server: string, agentId?: string, source = 'project') =>
      preToolUseTool(s, tool, { sql: 'select 1' }, { agentId, mcpServer: { name: server, source } });

    const sub = call('mcp__routed__query', 'routed', a);
    const r1 = await hook('pre-tool-use', sub, p);
    expect(r1.stdout).toBe('');
    expect(takeCall(p.home, sub.tool_use_id)).toEqual({
      session_id: s.sessionId,
      agent_id: a,
      server: 'routed',
      project_dir: p.dir,
    });
    const parent = call('mcp__routed__query', 'routed');
    expect((await hook('pre-tool-use', parent, p)).stdout).toBe('');
    expect(takeCall(p.home, parent.tool_use_id)?.agent_id).toBeNull();

    for (const [tool, server, source] of [
      ['mcp__pg__query', 'pg', 'project'],
      ['mcp__mine__query', 'mine', 'local'],
    ] as const) {
      const denied = await hook('pre-tool-use', call(tool, server, a, source), p);
      expect(denied.json.hookSpecificOutput.permissionDecision).toBe('deny');
      expect(denied.json.hookSpecificOutput.permissionDecisionReason).toContain(`pgx mcp route ${server}`);
      expect(denied.json.hookSpecificOutput.permissionDecisionReason).toContain('Use the Bash tool instead');
      expect((await hook('pre-tool-use', call(tool, server, undefined, source), p)).stdout).toBe('');
    }
    // no mcp_server in the payload: found by the tool name
    const byName = preToolUseTool(s, 'mcp__pg__query', { sql: 'x' }, { agentId: a });
    expect((await hook('pre-tool-use', byName, p)).json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect((await hook('pre-tool-use', call('mcp__files__read', 'files', a), p)).stdout).toBe('');
    expect((await hook('pre-tool-use', call('mcp__plugin_x__y', 'plugin_x', a, 'plugin'), p)).stdout).toBe('');
  });

  it("resources: a subagent's resource call to a database server is refused, to another server left alone; the parent's left alone", async () => {
    const p = mcpProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    for (const [tool, input] of [
      ['ReadMcpResourceTool', { server: 'routed', uri: 'postgres://x/t/schema' }],
      ['ReadMcpResourceTool', { server: 'pg', uri: 'postgres://x/t/schema' }],
      ['ListMcpResourcesTool', {}],
      ['ReadMcpResourceDirTool', { server: 'mine', uri: 'x://' }],
    ] as const) {
      const r = await hook('pre-tool-use', preToolUseTool(s, tool, input, { agentId: a }), p);
      expect(r.json?.hookSpecificOutput?.permissionDecision, `${tool} ${JSON.stringify(input)}`).toBe('deny');
      expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(/Use the Bash tool/);
      expect((await hook('pre-tool-use', preToolUseTool(s, tool, input), p)).stdout).toBe('');
    }
    const files = await hook(
      'pre-tool-use',
      preToolUseTool(s, 'ReadMcpResourceTool', { server: 'files', uri: 'file:///tmp' }, { agentId: a }),
      p,
    );
    expect(files.stdout).toBe('');
  });

  it("Monitor: a subagent's command rewritten like its Bash, every other field kept; a WebSocket watch and the parent's left alone", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const input = {
      description: 'watch the log',
      timeout_ms: 60000,
      persistent: false,
      command: 'psql -X -c "select 1"',
    };
    const r = await hook('pre-tool-use', preToolUseTool(s, 'Monitor', input, { agentId: a }), p);
    const rw = rewriteOf(r);
    expect(rw.updatedInput).toEqual({ ...input, command: rw.command });
    expect(rw.command.endsWith(`\n${input.command}`)).toBe(true);
    expect(rw.command).toContain(`agent exec --agent ${a} `);
    expect(
      (
        await hook(
          'pre-tool-use',
          preToolUseTool(s, 'Monitor', { description: 'ws', ws: 'ws://127.0.0.1:1' }, { agentId: a }),
          p,
        )
      ).stdout,
    ).toBe('');
    expect((await hook('pre-tool-use', preToolUseTool(s, 'Monitor', input), p)).stdout).toBe('');
    // a launcher typed into a Monitor command is refused, the parent's too
    const typed = { ...input, command: 'pgx agent exec --agent a0000000000000000 -- psql' };
    for (const agentId of [a, undefined])
      expect(
        (await hook('pre-tool-use', preToolUseTool(s, 'Monitor', typed, { agentId }), p)).json.hookSpecificOutput
          .permissionDecision,
      ).toBe('deny');
  });

  it("PowerShell: a subagent's is refused (Bash routes), the parent's left alone", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const r = await hook(
      'pre-tool-use',
      preToolUseTool(s, 'PowerShell', { command: 'psql -c "select 1"' }, { agentId: newAgentId() }),
      p,
    );
    expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toContain('Run it with the Bash tool instead');
    expect((await hook('pre-tool-use', preToolUseTool(s, 'PowerShell', { command: 'dir' }), p)).stdout).toBe('');
  });
});
