// Codex's and Copilot's PreToolUse on MCP calls, through the built hook entries (`pgx agent codex-hook`, `pgx agent
// copilot-hook`), with the payloads the real CLIs sent (Codex 0.171.0, Copilot 1.0.102, recorded offline: decision
// 530). A subagent's call to a server that reaches a database is refused with a reason naming the server and the
// shell tool; a server that reaches none, the session's own call, and a server pgx does not see are left alone;
// Codex's resource tools naming a database server are refused to a subagent; pgx failing still refuses a subagent's
// database call. The real binaries: tests/e2e/runtime-mcp.test.ts.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, pgInfo, runPgxAsync } from '../helpers/pgx.js';

type Project = ReturnType<typeof makeProject>;

async function runtimeHook(cli: 'codex' | 'copilot', payload: Record<string, unknown>, p: Project, env = {}) {
  const r = await runPgxAsync(['agent', `${cli}-hook`, 'pre-tool-use'], {
    cwd: p.dir,
    env: { ...p.env, SHELL: '/bin/bash', ...env },
    input: JSON.stringify(payload),
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout.includes(pgInfo().password), 'a password in hook output').toBe(false);
  return r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, any>) : undefined;
}

const lastOutcome = (p: Project) =>
  JSON.parse(
    readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8')
      .trim()
      .split('\n')
      .pop()!,
  ).outcome as string;

/** The database URL as the servers' READMEs put it: in the args (with a password, as users write it). */
const devUrl = 'postgresql://app:s3cret@127.0.0.1:5432/app_dev';
const tinyServer = { command: 'node', args: ['/opt/tiny-server.mjs'] };
const serverPostgres = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-postgres', devUrl] };

/** Codex's config: $CODEX_HOME/config.toml with the user's servers (pg, tiny), the project's with dbhub's env form. */
function codexProject(): { p: Project; env: NodeJS.ProcessEnv } {
  const p = makeProject();
  const codexHome = join(p.dir, '.codex-home');
  mkdirSync(codexHome);
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      '[mcp_servers.pg]',
      'command = "npx"',
      `args = ["-y", "@modelcontextprotocol/server-postgres", "${devUrl}"]`,
      '[mcp_servers.tiny]',
      'command = "node"',
      'args = ["/opt/tiny-server.mjs"]',
      '',
    ].join('\n'),
  );
  mkdirSync(join(p.dir, '.codex'));
  writeFileSync(
    join(p.dir, '.codex', 'config.toml'),
    '[mcp_servers.hub]\ncommand = "my-db-server"\nenv = { DSN = "postgres://app@db:5432/app" }\n',
  );
  return { p, env: { CODEX_HOME: codexHome } };
}

/** A Codex PreToolUse payload as 0.171.0 sent it for an MCP tool (a subagent's carries agent_id, agent_type). */
const codexCall = (p: Project, tool: string, input: Record<string, unknown>, agentId?: string) => ({
  session_id: randomUUID(),
  turn_id: randomUUID(),
  transcript_path: null,
  cwd: p.dir,
  hook_event_name: 'PreToolUse',
  model: 'fake-model',
  permission_mode: 'bypassPermissions',
  ...(agentId ? { agent_id: agentId, agent_type: 'default' } : {}),
  tool_name: tool,
  tool_input: input,
  tool_use_id: `call_${randomUUID()}`,
});

/** A Copilot preToolUse payload as 1.0.102 sent it (a subagent's: its own sessionId, agentId, parentAgentId). */
const copilotCall = (p: Project, tool: string, args: Record<string, unknown>, root: string, agentId?: string) => ({
  sessionId: agentId ?? root,
  timestamp: Date.now(),
  cwd: p.dir,
  toolName: tool,
  toolArgs: args,
  ...(agentId ? { agentId, agentType: 'general-purpose', parentAgentId: root } : {}),
});

describe('Codex: MCP calls (PreToolUse tool_name mcp__<server>__<tool>)', () => {
  it("a subagent's call to a database server is refused with the reason; the session's call, another server's and an unseen one pass", async () => {
    const { p, env } = codexProject();
    const agent = randomUUID();
    const denied = await runtimeHook('codex', codexCall(p, 'mcp__pg__query', { sql: 'select 1' }, agent), p, env);
    expect(denied!.hookSpecificOutput.permissionDecision).toBe('deny');
    const reason: string = denied!.hookSpecificOutput.permissionDecisionReason;
    expect(reason).toContain('the MCP server "pg" reaches a PostgreSQL database');
    expect(reason).toContain('under the Codex CLI');
    expect(reason).toContain('Use the shell tool instead');
    expect(reason).not.toContain('s3cret');
    expect(lastOutcome(p)).toBe('denied:mcp-unrouted:pg');

    // dbhub-style env (the project's .codex/config.toml): a URL in DSN
    const hub = await runtimeHook('codex', codexCall(p, 'mcp__hub__execute_sql', { sql: 'select 1' }, agent), p, env);
    expect(hub!.hookSpecificOutput.permissionDecision).toBe('deny');

    expect(await runtimeHook('codex', codexCall(p, 'mcp__tiny__echo', { text: 'x' }, agent), p, env)).toBeUndefined();
    expect(lastOutcome(p)).toBe('skipped:mcp-not-database');
    expect(await runtimeHook('codex', codexCall(p, 'mcp__pg__query', { sql: 'select 1' }), p, env)).toBeUndefined();
    expect(lastOutcome(p)).toBe('skipped:mcp-parent');
    expect(await runtimeHook('codex', codexCall(p, 'mcp__other__x', {}, agent), p, env)).toBeUndefined();
    expect(lastOutcome(p)).toBe('skipped:mcp-unseen');
  });

  it("a subagent's resource read of a database server, or a list while one is configured, is refused; another server's resources pass", async () => {
    const { p, env } = codexProject();
    const agent = randomUUID();
    const read = await runtimeHook(
      'codex',
      codexCall(p, 'read_mcp_resource', { server: 'pg', uri: 'postgres://x/items/schema' }, agent),
      p,
      env,
    );
    expect(read!.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(lastOutcome(p)).toBe('denied:mcp-resource-unrouted:pg');
    const list = await runtimeHook('codex', codexCall(p, 'list_mcp_resources', {}, agent), p, env);
    expect(list!.hookSpecificOutput.permissionDecisionReason).toContain('the MCP servers "hub", "pg" reach');
    const tiny = codexCall(p, 'read_mcp_resource', { server: 'tiny', uri: 'tiny://note' }, agent);
    expect(await runtimeHook('codex', tiny, p, env)).toBeUndefined();
    expect(await runtimeHook('codex', codexCall(p, 'list_mcp_resources', {}), p, env)).toBeUndefined();
  });

  it("pgx failing (a broken .pgx.toml) still refuses a subagent's database call, and lets another server's through", async () => {
    const { p, env } = codexProject();
    writeFileSync(join(p.dir, '.pgx.toml'), '[project\nname = ');
    const agent = randomUUID();
    const denied = await runtimeHook('codex', codexCall(p, 'mcp__pg__query', { sql: 'select 1' }, agent), p, env);
    expect(denied!.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(denied!.hookSpecificOutput.permissionDecisionReason).toContain('"pg"');
    expect(await runtimeHook('codex', codexCall(p, 'mcp__tiny__echo', { text: 'x' }, agent), p, env)).toBeUndefined();
  });
});

describe('Copilot: MCP calls (preToolUse toolName <server>-<tool>)', () => {
  it("a subagent's call to a database server is refused (native deny); the root's call and another server's pass", async () => {
    const p = makeProject();
    const copilotHome = join(p.dir, '.copilot-home');
    mkdirSync(copilotHome);
    // the user's servers (type "local", as Copilot writes them) and the project's .mcp.json
    writeFileSync(
      join(copilotHome, 'mcp-config.json'),
      JSON.stringify({ mcpServers: { tiny: { type: 'local', ...tinyServer, tools: ['*'] } } }),
    );
    writeFileSync(join(p.dir, '.mcp.json'), JSON.stringify({ mcpServers: { 'pg-main': serverPostgres } }));
    const env = { COPILOT_HOME: copilotHome };
    const root = randomUUID();
    const agent = randomUUID();
    const denied = await runtimeHook(
      'copilot',
      copilotCall(p, 'pg-main-query', { sql: 'select 1' }, root, agent),
      p,
      env,
    );
    expect(denied).toMatchObject({ permissionDecision: 'deny' });
    expect(denied!.permissionDecisionReason).toContain('the MCP server "pg-main" reaches a PostgreSQL database');
    expect(denied!.permissionDecisionReason).toContain('Use the bash tool instead');
    expect(lastOutcome(p)).toBe('denied:mcp-unrouted:pg-main');
    expect(
      await runtimeHook('copilot', copilotCall(p, 'tiny-echo', { text: 'x' }, root, agent), p, env),
    ).toBeUndefined();
    expect(lastOutcome(p)).toBe('skipped:mcp-not-database');
    expect(
      await runtimeHook('copilot', copilotCall(p, 'pg-main-query', { sql: 'select 1' }, root), p, env),
    ).toBeUndefined();
    expect(lastOutcome(p)).toBe('skipped:mcp-parent');
    // a built-in tool is no MCP call
    expect(await runtimeHook('copilot', copilotCall(p, 'view', { path: '.' }, root, agent), p, env)).toBeUndefined();
    expect(lastOutcome(p)).toBe('skipped:not-bash');
  });
});
