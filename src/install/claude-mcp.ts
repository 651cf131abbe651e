// Which of the user's MCP servers reach this project's PostgreSQL, and putting pgx in front of them (or taking it
// away): `pgx agent install claude` routes every stdio server that reaches the project's database by default, with
// no prompt (decision 492); `pgx mcp route|unroute` do it by name; `pgx agent uninstall claude` puts every entry back.
// The edits are planned as text for each file (the project's .mcp.json, the user's ~/.claude.json), every other key
// and entry left as it was; a file pgx can't parse is never written.
import { writeFileAtomic } from '../lib/fsutil.js';
import { PgxError } from '../lib/errors.js';
import {
  isPlainObject,
  parseSettingsText,
  readSettingsFile,
  serializeSettings,
  type JsonObject,
} from '../lib/settings-file.js';
import { existsSync } from 'node:fs';
import { isDatabaseServer, knownPackage, ownConfigFile } from '../mcp/database-sites.js';
import { frontEntry, isFronted, originalEntry, originalFields } from '../mcp/front-entry.js';
import {
  expanded,
  projectAddresses,
  projectDotenv,
  siteAddresses,
  type Address,
  type ProjectDatabases,
} from '../mcp/project-database.js';
import { mcpServers, type McpScope, type McpServer } from '../mcp/servers.js';
import { resolve } from 'node:path';

/** What pgx makes of one MCP server. */
export type McpVerdict =
  /** pgx stands in front of it */
  | 'routed'
  /** it reaches this project's database and pgx does not route it (yet) */
  | 'project'
  /** it reaches a database pgx does not know as this project's */
  | 'other-database'
  /** a database server whose address pgx can't read (a known package, a `${VAR}` unset here) */
  | 'database-unresolved'
  /** an http/sse/ws server: nothing pgx can start per branch */
  | 'remote'
  | 'no-database';

export interface McpServerReport {
  name: string;
  scope: McpScope;
  file: string;
  verdict: McpVerdict;
  /** Another scope's server of the same name wins (Claude Code runs that one). */
  shadowed: boolean;
  package: string | null;
  /** host:port/database of each address it names (never a user or password). */
  addresses: string[];
}

const addressText = (a: Address) => `${a.host}:${a.port}/${a.database}`;

/** The server's fields as the installer reads them: `${VAR}`s expanded in its environment and the project's .env. */
function fieldsOf(s: McpServer, projectDir: string, env: NodeJS.ProcessEnv) {
  const fields = isFronted(s.entry) ? originalFields(s.entry.env as Record<string, unknown>) : s.stdio;
  return fields && expanded(fields, { ...projectDotenv(projectDir), ...env });
}

export function classifyServers(projectDir: string, env: NodeJS.ProcessEnv, dbs: ProjectDatabases): McpServerReport[] {
  const seen = new Set<string>();
  return mcpServers(projectDir, env).map((s) => {
    const shadowed = seen.has(s.name);
    seen.add(s.name);
    const fields = fieldsOf(s, projectDir, env);
    const addresses = fields ? siteAddresses(fields) : [];
    const base = {
      name: s.name,
      scope: s.scope,
      file: s.file,
      shadowed,
      package: fields ? (knownPackage(fields) ?? null) : null,
      addresses: addresses.map(addressText),
    };
    if (isFronted(s.entry)) return { ...base, verdict: 'routed' as const };
    if (!fields) return { ...base, verdict: 'remote' as const };
    if (!isDatabaseServer(fields)) return { ...base, verdict: 'no-database' as const };
    if (ownConfigFile(fields, projectDir, existsSync)) return { ...base, verdict: 'database-unresolved' as const };
    if (projectAddresses(fields, dbs).length > 0) return { ...base, verdict: 'project' as const };
    return { ...base, verdict: addresses.length ? ('other-database' as const) : ('database-unresolved' as const) };
  });
}

export interface RoutingPlan {
  /** Per file: its text now and what it becomes (only files that change). */
  files: { file: string; before: string | undefined; after: string }[];
  /** The servers the plan routes (or, unrouting, puts back). */
  changed: McpServerReport[];
  /** Every server, as it is before the plan. */
  servers: McpServerReport[];
}

/** The entry's container in a parsed file: ~/.claude.json's top level (user) or its project record (local). */
function containerOf(root: JsonObject, s: McpServerReport, projectDir: string): JsonObject | undefined {
  if (s.scope !== 'local') return root;
  const projects = root.projects;
  return isPlainObject(projects) && isPlainObject(projects[resolve(projectDir)])
    ? (projects[resolve(projectDir)] as JsonObject)
    : undefined;
}

function edit(
  reports: McpServerReport[],
  projectDir: string,
  change: (entry: JsonObject, s: McpServerReport) => JsonObject | undefined,
  servers: McpServerReport[],
): RoutingPlan {
  const files: RoutingPlan['files'] = [];
  const changed: McpServerReport[] = [];
  for (const file of [...new Set(reports.map((r) => r.file))]) {
    const before = readSettingsFile(file);
    const root = parseSettingsText(before, file);
    let touched = false;
    for (const s of reports.filter((r) => r.file === file)) {
      const servers = containerOf(root, s, projectDir)?.mcpServers;
      const entry = isPlainObject(servers) ? servers[s.name] : undefined;
      if (!isPlainObject(servers) || !isPlainObject(entry)) continue;
      const next = change(entry, s);
      if (!next) continue;
      servers[s.name] = next;
      changed.push(s);
      touched = true;
    }
    if (touched) files.push({ file, before, after: serializeSettings(root) });
  }
  return { files, changed, servers };
}

/**
 * Routes `names` (each must be a stdio server whose command line or env names a database), or, with none given,
 * every server that reaches this project's database and is not routed yet. `launcher(scope)`: what the entry runs
 * (the project's shared .mcp.json finds pgx on PATH; the user's own file names this machine's launcher).
 */
export function planRoute(
  projectDir: string,
  env: NodeJS.ProcessEnv,
  dbs: ProjectDatabases,
  opts: { names?: string[]; launcher: (scope: McpScope) => string },
): RoutingPlan {
  const servers = classifyServers(projectDir, env, dbs);
  const live = servers.filter((s) => !s.shadowed);
  let pick: McpServerReport[];
  if (opts.names?.length) {
    pick = opts.names.map((n) => {
      const s = live.find((x) => x.name === n);
      if (!s)
        throw new PgxError(
          'NOT_FOUND',
          `No MCP server named "${n}" in ${projectDir}/.mcp.json or ~/.claude.json.`,
          'List them with `pgx mcp ls`.',
        );
      if (
        s.verdict === 'remote' ||
        s.verdict === 'no-database' ||
        (s.verdict !== 'routed' && s.addresses.length === 0)
      ) {
        const why =
          s.verdict === 'remote'
            ? 'it is a remote server'
            : 'no postgres:// URL, PG* or DB_* variable in its command line or env';
        throw new PgxError(
          'USAGE',
          `The MCP server "${n}" names no PostgreSQL address pgx could point at a branch (${why}).`,
          'pgx routes stdio servers whose args or env hold the database URL (or PG* variables); put it there, then retry.',
        );
      }
      return s;
    });
  } else pick = live.filter((s) => s.verdict === 'project');
  return edit(
    pick.filter((s) => s.verdict !== 'routed'),
    projectDir,
    (entry, s) => {
      const stdio = mcpServers(projectDir, env).find((x) => x.name === s.name && x.scope === s.scope)?.stdio;
      return stdio ? frontEntry(entry, stdio, s.name, opts.launcher(s.scope)) : undefined;
    },
    servers,
  );
}

/** Puts back every routed server (or those of `names`), as it was before pgx stood in front of it. */
export function planUnroute(
  projectDir: string,
  env: NodeJS.ProcessEnv,
  dbs: ProjectDatabases,
  names?: string[],
): RoutingPlan {
  const servers = classifyServers(projectDir, env, dbs);
  const pick = servers.filter((s) => s.verdict === 'routed' && (!names?.length || names.includes(s.name)));
  return edit(pick, projectDir, (entry) => originalEntry(entry), servers);
}

/** Writes the plan's files (atomically, through a symlink), unless a dry run. */
export function applyRoutingPlan(plan: RoutingPlan, dryRun = false): void {
  if (dryRun) return;
  for (const f of plan.files) writeFileAtomic(f.file, f.after, { throughLinks: true });
}
