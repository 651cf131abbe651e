// The MCP servers that reach this project's database, and whether pgx routes each (decision 495): one line per server
// with the command that fixes it; and whether pgx's PreToolUse hook matches the tools it must see (an install from
// before today's matcher misses some tools (Bash alone: Monitor, MCP; before decision 520: CronCreate, Skill, REPL),
// and a routed server then refuses every call: no record).
import { homedir } from 'node:os';
import { classifyServers, type McpServerReport } from '../install/claude-mcp.js';
import { findPgxHandlers, settingsPathFor, type Scope } from '../install/hook-events.js';
import { PRE_TOOL_USE_MATCHER } from '../hooks/claude/events.js';
import { isPlainObject, parseSettingsText, readSettingsFile } from '../lib/settings-file.js';
import { urlAddress } from '../mcp/database-sites.js';
import type { ProjectDatabases } from '../mcp/project-database.js';
import { importRecordOf } from '../engine/inspect.js';
import { decide, fail, ok, warn, type Check, type DoctorContext } from './types.js';

/** pgx's PreToolUse groups in the three settings files whose matcher is not today's (the tools it must see). */
function staleMatchers(projectDir: string): string[] {
  const out: string[] = [];
  for (const scope of ['project', 'local', 'user'] as Scope[]) {
    const file = settingsPathFor(scope, projectDir, homedir());
    try {
      const root = parseSettingsText(readSettingsFile(file), file);
      if (!isPlainObject(root.hooks)) continue;
      for (const loc of findPgxHandlers(root.hooks))
        if (loc.event === 'PreToolUse' && loc.group.matcher !== PRE_TOOL_USE_MATCHER)
          out.push(`${file} (matcher ${JSON.stringify(loc.group.matcher ?? '')})`);
    } catch {
      // the hooks check reports a file it can't read
    }
  }
  return out;
}

/** This project's databases as the doctor reads them: the server it connected to, the source and its origin. */
async function databases(ctx: DoctorContext): Promise<ProjectDatabases> {
  const names = ctx.config?.source ? [ctx.config.source] : [];
  const conn = await ctx.server();
  if (!conn.ok) return { names, origins: [] };
  const server = { host: conn.admin.host, port: conn.admin.port };
  const reg = ctx.config?.source ? await ctx.registry() : null;
  const rec = reg && ctx.config?.source ? await importRecordOf(reg, ctx.config.source) : undefined;
  const origin = rec && rec.origin_kind !== 'file' ? urlAddress(rec.origin) : undefined;
  return { server, names, origins: origin ? [origin] : [] };
}

const list = (servers: McpServerReport[]) => servers.map((s) => `${s.name} (${s.scope})`).join(', ');

export async function mcpCheck(ctx: DoctorContext): Promise<Check> {
  const servers = classifyServers(ctx.projectDir, process.env, await databases(ctx)).filter((s) => !s.shadowed);
  const routed = servers.filter((s) => s.verdict === 'routed');
  const project = servers.filter((s) => s.verdict === 'project');
  const other = servers.filter((s) => s.verdict === 'other-database' || s.verdict === 'database-unresolved');
  const stale = staleMatchers(ctx.projectDir);
  if (stale.length) {
    const refusing = routed.length
      ? `, and ${list(routed)} refuse${routed.length === 1 ? 's' : ''} every call (no record of its caller)`
      : '';
    return fail(
      'mcp',
      `pgx's PreToolUse hook matches only part of what it must see in ${stale.join(', ')}: subagents' Monitor, MCP, ` +
        `CronCreate, Skill or REPL calls are not all routed or refused${refusing}`,
      'pgx agent install claude',
    );
  }
  const parts = [
    routed.length ? `routed (each agent reaches its own branch): ${list(routed)}` : null,
    project.length ? `reach this project's database, NOT routed (subagents' calls refused): ${list(project)}` : null,
    other.length
      ? `database servers pgx does not route (subagents' calls refused): ${other
          .map((s) => `${s.name} (${s.addresses.join(' ') || s.package || 'address not readable'})`)
          .join(', ')}`
      : null,
  ].filter(Boolean);
  if (!parts.length) return ok('mcp', `no MCP server reaches a database (${servers.length} server(s) left alone)`);
  if (project.length) return warn('mcp', parts.join('; '), `pgx mcp route ${project.map((s) => s.name).join(' ')}`);
  if (other.length)
    return decide(
      'mcp',
      parts.join('; '),
      `pgx mcp route ${other.map((s) => s.name).join(' ')} points their calls at each agent's own branch; leave them ` +
        "if their database is not this project's (subagents then use Bash)",
    );
  return ok('mcp', parts.join('; '));
}
