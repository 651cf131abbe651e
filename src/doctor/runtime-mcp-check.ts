// The Codex CLI's and the Copilot CLI's database MCP servers, when that CLI has pgx's hooks: pgx can't route their
// calls to each agent's branch (decision 530), so its hook refuses a subagent's call to one, and the session's own
// calls reach the database the server names. The doctor says so, naming the servers and the file, as a choice the
// user makes (keep them for the session, or remove them): a known limit, not a fault of the setup. No such server,
// or no install of that CLI: no line.
import { codexMcpServers, copilotMcpServers, databaseServerNames } from '../mcp/runtime-servers.js';
import { SHELL_TOOL } from '../hooks/shared/mcp-guard.js';
import { decide, type Check } from './types.js';

const CLI = { codex: 'Codex', copilot: 'Copilot' } as const;

export function runtimeMcpCheck(
  runtime: 'codex' | 'copilot',
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Check | undefined {
  const servers = (runtime === 'codex' ? codexMcpServers : copilotMcpServers)(projectDir, env);
  const names = databaseServerNames(servers);
  if (!names.length) return undefined;
  const files = [...new Set(servers.filter((s) => names.includes(s.name)).map((s) => s.file))].join(', ');
  const list = names.map((n) => `"${n}"`).join(', ');
  return decide(
    `${runtime}-mcp`,
    `${names.length > 1 ? 'MCP servers' : 'an MCP server'} ${list} configured for ${CLI[runtime]} (${files}) ` +
      `${names.length > 1 ? 'reach' : 'reaches'} a PostgreSQL database. Under ${CLI[runtime]} pgx can't route MCP ` +
      `calls to each agent's branch, so its hook refuses a subagent's call to ${names.length > 1 ? 'them' : 'it'}, ` +
      `and the session's own calls reach the database the entry names (docs/pgx/local-dev/agents.md, known limits)`,
    `keep ${names.length > 1 ? 'them' : 'it'} for the session (subagents use psql through the ${SHELL_TOOL[runtime]}, ` +
      `which pgx routes to their branches), or remove ${list} from ${files}`,
  );
}
