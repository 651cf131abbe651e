// The MCP servers the Codex CLI and the Copilot CLI run, read from their own config files, and the server a tool call
// of theirs names. pgx can't stand in front of them per agent (decision 530), so their hooks refuse a subagent's call
// to one that reaches a database, and the doctor says one is configured: both need to know which server a call is for
// and whether it reaches a database (database-sites.ts, the same test as for Claude Code's servers). Untrusted text:
// a file that can't be read or parsed gives no server (a call to a server pgx does not see is left alone).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import * as z from 'zod/mini';
import { isDatabaseServer } from './database-sites.js';
import { readJsonFile, type StdioFields } from './servers.js';

export interface RuntimeMcpServer {
  name: string;
  /** The file it is in. */
  file: string;
  /** Its command, args and env when it is a local (stdio) server. */
  stdio?: StdioFields;
}

/** Codex's `[mcp_servers.<name>]` and Copilot's `mcpServers.<name>`: a local server's fields as far as pgx reads them. */
const localSchema = z.object({
  command: z.string(),
  args: z.optional(z.array(z.string())),
  env: z.optional(z.record(z.string(), z.string())),
  type: z.optional(z.enum(['stdio', 'local'])),
});

function serversOf(table: unknown, file: string): RuntimeMcpServer[] {
  if (typeof table !== 'object' || table === null || Array.isArray(table)) return [];
  return Object.entries(table as Record<string, unknown>).map(([name, entry]) => {
    const local = localSchema.safeParse(entry);
    return {
      name,
      file,
      ...(local.success ? { stdio: { command: local.data.command, args: local.data.args, env: local.data.env } } : {}),
    };
  });
}

function tomlServers(file: string): RuntimeMcpServer[] {
  try {
    return serversOf((parseToml(readFileSync(file, 'utf8')) as { mcp_servers?: unknown }).mcp_servers, file);
  } catch {
    return [];
  }
}

/** `$CODEX_HOME` (default ~/.codex). */
export const codexHomeOf = (env: NodeJS.ProcessEnv) => env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
/** `$COPILOT_HOME` (default ~/.copilot). */
export const copilotHomeOf = (env: NodeJS.ProcessEnv) => env.COPILOT_HOME || join(env.HOME || homedir(), '.copilot');

/** Codex 0.171.0's servers: the project's `.codex/config.toml` (a trusted project's layer), then the user's config.toml. */
export function codexMcpServers(projectDir: string, env: NodeJS.ProcessEnv = process.env): RuntimeMcpServer[] {
  return [
    ...tomlServers(join(projectDir, '.codex', 'config.toml')),
    ...tomlServers(join(codexHomeOf(env), 'config.toml')),
  ];
}

/**
 * Copilot 1.0.102's servers: the project's `.mcp.json` and `.github/mcp.json` (read from its package: it looks for
 * either), then the user's `$COPILOT_HOME/mcp-config.json`.
 */
export function copilotMcpServers(projectDir: string, env: NodeJS.ProcessEnv = process.env): RuntimeMcpServer[] {
  return [
    join(projectDir, '.mcp.json'),
    join(projectDir, '.github', 'mcp.json'),
    join(copilotHomeOf(env), 'mcp-config.json'),
  ].flatMap((file) => serversOf(readJsonFile(file).mcpServers, file));
}

/** A tool name's normalised server part: the characters a tool name can't hold replaced, as the CLIs do. */
const norm = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * The server a tool call is for, by its tool name: Codex's `mcp__<server>__<tool>`, Copilot's `<server>-<tool>`
 * (both measured). The longest matching name wins (`pg` and `pg-main`). Undefined: no configured server's tool.
 */
export function serverOfRuntimeTool(
  runtime: 'codex' | 'copilot',
  tool: string,
  servers: readonly RuntimeMcpServer[],
): RuntimeMcpServer | undefined {
  const rest = runtime === 'codex' ? (tool.startsWith('mcp__') ? tool.slice(5) : undefined) : tool;
  if (rest === undefined) return undefined;
  const sep = runtime === 'codex' ? '__' : '-';
  return servers
    .filter((s) => rest.startsWith(`${norm(s.name)}${sep}`) && rest.length > norm(s.name).length + sep.length)
    .sort((a, b) => b.name.length - a.name.length)
    .at(0);
}

/** Does any entry of this name reach a database? (Stricter than picking the one that wins: either may be the one run.) */
export function reachesDatabase(name: string, servers: readonly RuntimeMcpServer[]): boolean {
  return servers.some((s) => s.name === name && s.stdio !== undefined && isDatabaseServer(s.stdio));
}

/** The names of the configured servers that reach a database, each once. */
export function databaseServerNames(servers: readonly RuntimeMcpServer[]): string[] {
  return [...new Set(servers.filter((s) => reachesDatabase(s.name, [s])).map((s) => s.name))];
}
