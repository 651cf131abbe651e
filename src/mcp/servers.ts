// Where Claude Code keeps its MCP servers, read: the project's `.mcp.json` (project scope), and the user's
// `~/.claude.json` (local scope: `projects[<dir>].mcpServers`; user scope: the top-level `mcpServers`). The hook asks
// which entry a tool call's server is (its name, and the scope Claude Code said), install and the doctor list them
// all. Untrusted text: each entry is kept as the JSON object it is (pgx rewrites only the keys it owns), its fields
// read through one schema. Parsed files are cached by size and mtime: the broker answers many calls from one read.
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import * as z from 'zod/mini';
import { isPlainObject, parseSettingsText, type JsonObject } from '../lib/settings-file.js';

/** Claude Code's three places for an MCP server, in the order it lets one win over another of the same name. */
export type McpScope = 'local' | 'project' | 'user';
export const SCOPE_PRECEDENCE: readonly McpScope[] = ['local', 'project', 'user'];

/** A stdio server's fields, as far as pgx reads them (the entry keeps every other key as it is). */
const stdioSchema = z.object({
  command: z.string(),
  args: z.optional(z.array(z.string())),
  env: z.optional(z.record(z.string(), z.string())),
  type: z.optional(z.literal('stdio')),
});
export type StdioFields = z.infer<typeof stdioSchema>;

export interface McpServer {
  name: string;
  scope: McpScope;
  /** The file it is in (for a local-scope or user-scope server: ~/.claude.json). */
  file: string;
  /** The entry, as written. */
  entry: JsonObject;
  /** Its command, args and env when it is a stdio server; undefined for a remote one (http, sse, ws) or a broken one. */
  stdio?: StdioFields;
}

/** `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`: Claude Code's own state, which holds the user's servers. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.CLAUDE_CONFIG_DIR || env.HOME || homedir(), '.claude.json');
}

export function projectConfigPath(projectDir: string): string {
  return join(projectDir, '.mcp.json');
}

const cache = new Map<string, { size: number; mtimeMs: number; root: JsonObject }>();

/** The parsed file, or {} when it does not exist or is not a JSON object (Claude Code then reads no server from it). */
export function readJsonFile(file: string): JsonObject {
  let st: { size: number; mtimeMs: number };
  try {
    st = statSync(file);
  } catch {
    return {};
  }
  const hit = cache.get(file);
  if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.root;
  let root: JsonObject;
  try {
    root = parseSettingsText(readFileSync(file, 'utf8'), file);
  } catch {
    root = {};
  }
  cache.set(file, { size: st.size, mtimeMs: st.mtimeMs, root });
  return root;
}

function serversIn(container: unknown, scope: McpScope, file: string): McpServer[] {
  if (!isPlainObject(container) || !isPlainObject(container.mcpServers)) return [];
  return Object.entries(container.mcpServers).flatMap(([name, entry]) => {
    if (!isPlainObject(entry)) return [];
    const stdio = stdioSchema.safeParse(entry);
    return [{ name, scope, file, entry, ...(stdio.success ? { stdio: stdio.data } : {}) }];
  });
}

/** The local-scope container of `projectDir` in ~/.claude.json (Claude Code keys it by the directory's path). */
export function localContainer(root: JsonObject, projectDir: string): JsonObject | undefined {
  const projects = root.projects;
  if (!isPlainObject(projects)) return undefined;
  const own = projects[resolve(projectDir)];
  return isPlainObject(own) ? own : undefined;
}

/** Every MCP server Claude Code would read for `projectDir`, in all three scopes (a shadowed one too). */
export function mcpServers(projectDir: string, env: NodeJS.ProcessEnv = process.env): McpServer[] {
  const user = userConfigPath(env);
  const userRoot = readJsonFile(user);
  const project = projectConfigPath(projectDir);
  return [
    ...serversIn(localContainer(userRoot, projectDir), 'local', user),
    ...serversIn(readJsonFile(project), 'project', project),
    ...serversIn(userRoot, 'user', user),
  ];
}

/** The servers Claude Code runs, one per name: local wins over project, project over user. */
export function effectiveServers(projectDir: string, env: NodeJS.ProcessEnv = process.env): McpServer[] {
  const seen = new Set<string>();
  return mcpServers(projectDir, env).filter((s) => !seen.has(s.name) && seen.add(s.name));
}

/**
 * The server a tool call went to: by its name, in the scope the payload names (`mcp_server.source`, observed on
 * 2.1.328 and 2.1.332: "project", "local", "user"), else the one that wins. Undefined: pgx does not see it (a
 * plugin's server, one given by --mcp-config, a managed or claude.ai one).
 */
export function serverNamed(
  name: string,
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
  scope?: string,
): McpServer | undefined {
  const all = mcpServers(projectDir, env).filter((s) => s.name === name);
  return all.find((s) => s.scope === scope) ?? all[0];
}

/**
 * The server name in a tool name `mcp__<server>__<tool>` when the payload gives none. Claude Code replaces the
 * characters a tool name can't hold, so a server named `my.db` shows as `my_db`: matched by that normalised form.
 */
export function serverOfToolName(tool: string, names: readonly string[]): string | undefined {
  if (!tool.startsWith('mcp__')) return undefined;
  const rest = tool.slice(5);
  const norm = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');
  return names
    .filter((n) => rest.startsWith(`${norm(n)}__`))
    .sort((a, b) => b.length - a.length)
    .at(0);
}
