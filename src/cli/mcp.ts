// `pgx mcp ls | route | unroute | serve`: the user's MCP servers that reach this project's database, pgx in front of
// them (src/install/claude-mcp.ts plans the edits), and the front itself (src/mcp/front.ts), which the routed entry runs.
import type { Command } from 'commander';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  applyRoutingPlan,
  classifyServers,
  planRoute,
  planUnroute,
  type McpServerReport,
  type RoutingPlan,
} from '../install/claude-mcp.js';
import { PORTABLE_LAUNCHER } from '../install/hook-events.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { frontsDir, serveFront, type FrontState } from '../mcp/front.js';
import { projectDatabases } from '../mcp/project-database.js';
import { pidAlive } from '../lib/fsutil.js';
import { table } from '../lib/output.js';
import type { Config } from '../project/config.js';
import { action, projectConfigFor, withCommon, type CommonOpts } from './common.js';
import type { McpScope } from '../mcp/servers.js';

/** Registered by cli/commands.ts under `pgx`. */
export const under = 'pgx';

/** What a routed entry runs: pgx on PATH in the project's shared .mcp.json, this machine's launcher in ~/.claude.json. */
export const frontLauncher = (scope: McpScope): string => (scope === 'project' ? PORTABLE_LAUNCHER : launcherPath());

const VERDICT_TEXT: Record<McpServerReport['verdict'], string> = {
  routed: 'routed by pgx: each agent reaches its own branch',
  project: "reaches this project's database, NOT routed: subagents' calls are refused",
  'other-database': "reaches a database pgx does not know as this project's: subagents' calls are refused",
  'database-unresolved': "a database server whose address pgx can't read: subagents' calls are refused",
  remote: 'a remote (http/sse) server: left alone',
  'no-database': 'reaches no database: left alone',
};

/** One line per server, for `mcp ls`, `mcp route` and the install. */
export function serverLines(servers: McpServerReport[]): string {
  return table(
    ['server', 'scope', 'verdict', 'address'],
    servers.map((s) => [
      s.name + (s.shadowed ? ' (shadowed)' : ''),
      s.scope,
      VERDICT_TEXT[s.verdict],
      s.addresses.join(' ') || s.package,
    ]),
  );
}

/** The running fronts of this project: their copies, one per branch. */
export function runningFronts(config: Config): FrontState[] {
  let files: string[];
  try {
    files = readdirSync(frontsDir(config.home));
  } catch {
    return [];
  }
  return files.flatMap((f) => {
    try {
      const s = JSON.parse(readFileSync(join(frontsDir(config.home), f), 'utf8')) as FrontState;
      return s.project_dir === config.projectDir && pidAlive(s.pid) ? [s] : [];
    } catch {
      return [];
    }
  });
}

/** Routes (or unroutes) and returns what changed, for `mcp route|unroute` and the install. */
export async function routeServers(
  config: Config,
  opts: { names?: string[]; unroute?: boolean; dryRun?: boolean; env?: NodeJS.ProcessEnv },
): Promise<RoutingPlan & { origin_read: boolean }> {
  const env = opts.env ?? process.env;
  const dbs = await projectDatabases(config);
  const dir = claudeDir(config);
  const plan = opts.unroute
    ? planUnroute(dir, env, dbs, opts.names)
    : planRoute(dir, env, dbs, { names: opts.names, launcher: frontLauncher });
  applyRoutingPlan(plan, opts.dryRun);
  return { ...plan, origin_read: dbs.originRead };
}

/** The directory Claude Code reads .mcp.json from: the project's (where .pgx.toml is). */
const claudeDir = (config: Config) => resolve(config.projectDir);

function changedLine(plan: RoutingPlan, unroute: boolean | undefined, dryRun: boolean | undefined): string {
  if (!plan.changed.length) return unroute ? 'no routed MCP server to put back' : 'no MCP server to route';
  const verb = unroute ? (dryRun ? 'would put back' : 'put back') : dryRun ? 'would route' : 'routed';
  return `${verb}: ${plan.changed.map((s) => `${s.name} (${s.scope}, ${s.file})`).join(', ')}`;
}

export function register(pgx: Command): void {
  const mcp = pgx
    .command('mcp')
    .description("the MCP servers that reach this project's database: pgx routes each agent's calls to its own branch");

  withCommon(mcp.command('ls').description('every MCP server Claude Code reads here, and what pgx makes of it')).action(
    action<CommonOpts>(async (opts, out) => {
      const config = projectConfigFor(opts);
      const dbs = await projectDatabases(config);
      const servers = classifyServers(claudeDir(config), process.env, dbs);
      const fronts = runningFronts(config);
      out.result({ servers, fronts, origin_read: dbs.originRead }, () =>
        [
          servers.length
            ? serverLines(servers)
            : `no MCP server in ${claudeDir(config)}/.mcp.json or ${homedir()}/.claude.json`,
          ...fronts.map(
            (f) =>
              `front ${f.pid} (${f.server}): ${f.copies.length} cop${f.copies.length === 1 ? 'y' : 'ies'}` +
              f.copies
                .map((c) => `\n  ${c.branch} pid ${c.pid ?? '-'} ${c.agent_id ? `agent ${c.agent_id}` : 'session'}`)
                .join(''),
          ),
        ].join('\n'),
      );
    }),
  );

  for (const unroute of [false, true]) {
    withCommon(
      mcp
        .command(unroute ? 'unroute' : 'route')
        .description(
          unroute
            ? 'put routed MCP servers back as they were (all, or the ones named)'
            : "put pgx in front of the MCP servers that reach this project's database (all, or the ones named)",
        )
        .argument('[names...]', 'server names (default: every one)')
        .option('--dry-run', 'show what would change, write nothing'),
    ).action(
      action<CommonOpts & { dryRun?: boolean }>(async (opts, out, cmd) => {
        const config = projectConfigFor(opts);
        const names = cmd.args as string[];
        const r = await routeServers(config, { names, unroute, dryRun: opts.dryRun });
        out.result(
          { changed: r.changed, servers: r.servers, files: r.files.map((f) => f.file), dry_run: !!opts.dryRun },
          () =>
            [
              changedLine(r, unroute, opts.dryRun),
              r.changed.length
                ? "  restart the project's Claude Code sessions: MCP servers start with the session"
                : null,
            ]
              .filter(Boolean)
              .join('\n'),
        );
      }),
    );
  }

  mcp
    .command('serve')
    .description("(what a routed entry runs) pgx in front of the user's MCP server: one copy of it per branch")
    .argument('<name>', "the server's name in the MCP config")
    .action(action<CommonOpts>(async (_opts, _out, cmd) => serveFront(cmd.args[0]!), 'stderr'));
}
