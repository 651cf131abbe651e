// Which configured server a Codex or Copilot MCP tool call is for (mcp/runtime-servers.ts, decision 530): Codex's
// `mcp__<server>__<tool>`, Copilot's `<server>-<tool>`, the longest name winning, a name's odd characters replaced as
// the CLIs do; and which entries reach a database.
import { describe, expect, it } from 'vitest';
import {
  databaseServerNames,
  reachesDatabase,
  serverOfRuntimeTool,
  type RuntimeMcpServer,
} from '../../src/mcp/runtime-servers.js';

const s = (name: string, args: string[] = ['x.mjs']): RuntimeMcpServer => ({
  name,
  file: 'f',
  stdio: { command: 'node', args },
});
const servers = [
  s('pg', ['-y', '@modelcontextprotocol/server-postgres']),
  s('pg-main'),
  s('my.db', ['postgres://h/db']),
];

describe('serverOfRuntimeTool', () => {
  it('codex: mcp__<server>__<tool>, normalised names, nothing for another tool', () => {
    expect(serverOfRuntimeTool('codex', 'mcp__pg__query', servers)?.name).toBe('pg');
    expect(serverOfRuntimeTool('codex', 'mcp__my_db__query', servers)?.name).toBe('my.db');
    expect(serverOfRuntimeTool('codex', 'mcp__pg__', servers)).toBeUndefined();
    expect(serverOfRuntimeTool('codex', 'Bash', servers)).toBeUndefined();
    expect(serverOfRuntimeTool('codex', 'mcp__other__q', servers)).toBeUndefined();
  });

  it('copilot: <server>-<tool>, the longest name wins', () => {
    expect(serverOfRuntimeTool('copilot', 'pg-query', servers)?.name).toBe('pg');
    expect(serverOfRuntimeTool('copilot', 'pg-main-query', servers)?.name).toBe('pg-main');
    expect(serverOfRuntimeTool('copilot', 'view', servers)).toBeUndefined();
  });
});

describe('reachesDatabase', () => {
  it('a known package or a URL in the args reaches one; any entry of the name counts', () => {
    expect(reachesDatabase('pg', servers)).toBe(true);
    expect(reachesDatabase('my.db', servers)).toBe(true);
    expect(reachesDatabase('pg-main', servers)).toBe(false);
    expect(reachesDatabase('pg-main', [...servers, s('pg-main', ['postgresql://u@h/db'])])).toBe(true);
    expect(databaseServerNames(servers)).toEqual(['pg', 'my.db']);
  });
});
