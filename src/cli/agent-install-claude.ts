// `pgx agent install claude` / `pgx agent uninstall claude`: parse, call the installer (src/install/claude.ts), print;
// an install verifies the Claude Code on PATH when it isn't yet (src/verify/). Its own module, like the other clients'.
import { readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { findConfigFile } from '../project/config.js';
import { PgxError } from '../lib/errors.js';
import { installClaude, uninstallClaude } from '../install/claude.js';
import { settingsPathFor, type Scope } from '../install/hook-events.js';
import { pgxOnPath } from '../install/path-launcher.js';
import { installConfig, refuseNonProject, removeInstallConfig, settingsErrors, configLine } from './install-config.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { builtInVerified, isVerifiedClaudeCode, verdictsPath } from '../hooks/claude/claude-version.js';
import { pgxHome } from '../project/home.js';
import { claudeOnPath, claudeVersionOf } from '../verify/find-claude.js';
import { verifyClaudeCode } from '../verify/run.js';
import type { CommonOpts } from './common.js';
import { describeError } from '../lib/errors.js';
import { loadConfig } from '../project/config.js';
import type { McpServerReport } from '../install/claude-mcp.js';
import { routeServers } from './mcp.js';
import type { Output } from '../lib/output.js';

/** The options of `pgx agent install|uninstall` (agent-install.ts registers them), every client's. */
export interface InstallOpts extends CommonOpts {
  scope: Scope;
  transport?: string;
  dryRun?: boolean;
  allowRule?: boolean;
  rules?: boolean;
  verify?: boolean;
  here?: boolean;
  /** false (`--no-mcp`): leave the MCP servers as they are (their subagent calls to a database are refused). */
  mcp?: boolean;
}

export async function installClaudeCommand(opts: InstallOpts, out: Output): Promise<void> {
  const scope = checkScope(opts.scope);
  checkTransport(opts.transport);
  const dir = resolve(opts.cwd ?? process.cwd());
  const projectDir = findConfigFile(dir) ? resolve(findConfigFile(dir)!, '..') : dir;
  refuseNonProject(dir, projectDir, { here: opts.here, client: 'claude', userScope: scope === 'user' });
  // In a dry run config_written is the file that WOULD be written, like every other field of the result.
  const config = installConfig(projectDir, { here: opts.here, dryRun: opts.dryRun, userScope: scope === 'user' });
  const configWritten = config.config_written;
  // Project scope: the shared settings.json finds pgx on PATH, and this machine's rules name the launcher the
  // hooks will run, the first pgx on PATH (decisions/111-portable-project-install.md).
  const onPath = scope === 'project' && !process.env.PGX_LAUNCHER ? pgxOnPath() : undefined;
  const launcher = onPath ?? launcherPath();
  const rulesPath = scope === 'project' ? settingsPathFor('local', projectDir, homedir()) : undefined;
  const r = settingsErrors(() =>
    installClaude({
      settingsPath: settingsPathFor(scope, projectDir, homedir()),
      launcher,
      projectDir: scope === 'user' ? undefined : projectDir,
      rules: opts.rules !== false,
      dryRun: opts.dryRun,
      rulesPath,
    }),
  );
  const pathNote =
    scope !== 'project' || process.env.PGX_LAUNCHER
      ? null
      : !onPath
        ? `  pgx is not on PATH here: the hooks find it there, and refuse every subagent Bash command until it ` +
          `is (after an npm --prefix ~/.local install: add ~/.local/bin to PATH)`
        : onPath !== launcherPath()
          ? `  the hooks will run ${onPath} (the first pgx on PATH), not this one (${launcherPath()}): the rules name it`
          : null;
  const verification: Verification = opts.dryRun
    ? { status: 'skipped', reason: 'dry run' }
    : opts.verify === false
      ? { status: 'skipped', reason: '--no-verify' }
      : await verifyIfNeeded(launcher);
  const mcp = await installMcp(projectDir, opts);
  const value = { ...r, text: undefined, scope, launcher, ...config, verification, mcp };
  out.result(value, () =>
    [
      configWritten
        ? `${opts.dryRun ? 'would write' : 'wrote'} ${configWritten} (uses the embedded local server; edit [server] ` +
          `url / [project] source)`
        : null,
      config.config_skipped,
      `${opts.dryRun ? 'would update' : r.changed ? 'updated' : 'unchanged'}: ${r.path}${r.local ? ' (no path of this machine: commit it)' : ''}`,
      r.added.length ? `  added:     ${r.added.join(', ')}` : null,
      r.updated.length ? `  updated:   ${r.updated.join(', ')}` : null,
      r.unchanged.length ? `  unchanged: ${r.unchanged.join(', ')}` : null,
      ...r.rules.blanketRemoved.map(
        (b) => `  removed the blanket rule ${b}: it approved every routed command, past your deny rules`,
      ),
      r.rules.added.length
        ? `  permission rules added: ${r.rules.added.join(', ')} (routed commands get the decisions your own rules give them)`
        : null,
      r.rulesSkipped ? `  no permission rules: ${r.rulesSkipped}` : null,
      opts.rules === false
        ? '  no permission rules (--no-rules): every routed subagent command asks for approval'
        : null,
      r.local && !r.local.ownHooks && opts.rules !== false
        ? `  this machine's permission rules: ${r.local.path}` +
          (r.local.gitIgnored.status === 'added'
            ? ` (kept out of git by ${r.local.gitIgnored.exclude})`
            : r.local.gitIgnored.status === 'would-add'
              ? ` (would be kept out of git by ${r.local.gitIgnored.exclude})`
              : '')
        : null,
      r.httpRemoved
        ? `  ${opts.dryRun ? 'would remove' : 'removed'} the retired HTTP transport's entries and secret (${r.httpRemoved.join(', ')}): ` +
          `the hooks are command hooks again, which start no node when the broker answers (decision 444); restart ` +
          `the project's Claude Code sessions`
        : null,
      pathNote,
      ...mcpLines(mcp, opts.dryRun),
      verificationLine(verification),
      'next: start Claude Code in this project; `pgx agent doctor` checks the setup',
    ]
      .filter(Boolean)
      .join('\n'),
  );
}

export async function uninstallClaudeCommand(opts: InstallOpts, out: Output): Promise<void> {
  const scope = checkScope(opts.scope);
  const dir = resolve(opts.cwd ?? process.cwd());
  const projectDir = findConfigFile(dir) ? resolve(findConfigFile(dir)!, '..') : dir;
  const rulesPath = scope === 'project' ? settingsPathFor('local', projectDir, homedir()) : undefined;
  const r = settingsErrors(() =>
    uninstallClaude({
      settingsPath: settingsPathFor(scope, projectDir, homedir()),
      dryRun: opts.dryRun,
      rulesPath,
    }),
  );
  const fileRemoved = r.changed && !opts.dryRun && removeIfEmpty(r.path, scope);
  const local = r.local?.changed ? ` and ${r.local.path}${r.local.file_removed ? ', now empty: deleted' : ''}` : '';
  const mcp = await unrouteMcp(projectDir, opts.dryRun);
  const config = removeInstallConfig(dir, { dryRun: opts.dryRun });
  out.result({ ...r, text: undefined, scope, file_removed: fileRemoved, ...config, mcp }, () =>
    [
      `${r.changed ? (opts.dryRun ? 'would remove' : 'removed') : 'nothing to remove'}` +
        `${[...r.removed, ...r.rulesRemoved].length ? `: ${[...r.removed, ...r.rulesRemoved].join(', ')}` : ''} ` +
        `(${r.path}${fileRemoved ? ', now empty: deleted' : ''}${local})`,
      configLine(config, opts.dryRun),
      mcp.changed.length
        ? `${opts.dryRun ? 'would put back' : 'put back'} the MCP servers pgx stood in front of: ${mcp.changed.join(', ')}`
        : mcp.error
          ? `MCP servers: ${mcp.error}`
          : null,
    ]
      .filter(Boolean)
      .join('\n'),
  );
}

type Verification =
  | { status: 'skipped'; reason: string }
  | {
      status: 'verified' | 'built-in' | 'failed';
      claude_code: string;
      binary: string;
      failed?: string[];
      elapsed_ms?: number;
      recorded?: string | null;
    }
  | { status: 'error'; claude_code?: string; message: string };

/**
 * The first session should already run without prompts: when the Claude Code on PATH is neither built in nor
 * recorded as verified, verify it now (src/verify/; under 2 minutes, progress on stderr). No `claude` on PATH is a
 * note, not a failure: the user may install it later, and SessionStart verifies the version it runs under.
 */
async function verifyIfNeeded(launcher: string): Promise<Verification> {
  const binary = claudeOnPath();
  if (!binary) return { status: 'skipped', reason: 'no `claude` on PATH' };
  const version = claudeVersionOf(binary);
  if (!version) return { status: 'error', message: `${binary} --version printed no Claude Code version` };
  const home = pgxHome();
  if (isVerifiedClaudeCode(version, process.env, home))
    return {
      status: builtInVerified().includes(version) ? 'built-in' : 'verified',
      claude_code: version,
      binary,
      recorded: builtInVerified().includes(version) ? null : verdictsPath(home),
    };
  process.stderr.write(
    `pgx: Claude Code ${version} is not verified yet: running \`pgx agent verify claude\` (under 2 minutes; --no-verify skips)\n`,
  );
  try {
    const r = await verifyClaudeCode({
      claude: binary,
      home,
      pgxLauncher: launcher,
      progress: (line) => process.stderr.write(`pgx: ${line}\n`),
    });
    return {
      status: r.verified ? 'verified' : 'failed',
      claude_code: r.claude_code,
      binary,
      failed: r.failed,
      elapsed_ms: r.elapsed_ms,
      recorded: r.recorded,
    };
  } catch (e) {
    return { status: 'error', claude_code: version, message: e instanceof Error ? e.message : String(e) };
  }
}

function verificationLine(v: Verification): string {
  switch (v.status) {
    case 'skipped':
      return v.reason === 'no `claude` on PATH'
        ? '  Claude Code: no `claude` on PATH, nothing to verify yet (SessionStart verifies the version it runs ' +
            'under; or `pgx agent verify claude --claude PATH`)'
        : `  Claude Code: not verified now (${v.reason})`;
    case 'built-in':
      return `  Claude Code ${v.claude_code}: verified (built in)`;
    case 'verified':
      return (
        `  Claude Code ${v.claude_code}: verified on this machine${v.elapsed_ms ? ` (${(v.elapsed_ms / 1000).toFixed(0)} s)` : ''}, ` +
        `recorded in ${v.recorded}: routed commands get your rules' decisions with no extra prompt`
      );
    case 'failed':
      return [
        `  Claude Code ${v.claude_code}: NOT verified (${v.failed!.length} cells failed, e.g. ${v.failed![0]}); ` +
          `routed subagent commands ask for approval on it. \`pgx agent verify claude\` shows every cell`,
      ].join('');
    case 'error':
      return (
        `  Claude Code${v.claude_code ? ` ${v.claude_code}` : ''}: could not verify (${v.message}); routed subagent ` +
        `commands ask for approval until \`pgx agent verify claude\` succeeds`
      );
  }
}

/**
 * A settings file that held nothing but pgx's entries is `{}` after uninstall: delete it (install created it, or it
 * holds nothing anyone needs), and the project's `.claude/` directory if that leaves it empty.
 */
function removeIfEmpty(path: string, scope: Scope): boolean {
  try {
    if (readFileSync(path, 'utf8').trim() !== '{}') return false;
    rmSync(path);
    if (scope !== 'user' && readdirSync(dirname(path)).length === 0) rmdirSync(dirname(path));
    return true;
  } catch {
    return false;
  }
}

function checkTransport(transport: string | undefined): void {
  if (transport === undefined || transport === 'command') return;
  if (transport === 'http')
    throw new PgxError(
      'USAGE',
      'The HTTP transport is retired (decision 444): the command hooks now hand their work to your broker over ' +
        'its unix socket with no node process, and no pgx process listens on TCP.',
      'Run `pgx agent install claude` without --transport: it also moves an HTTP install back.',
    );
  throw new PgxError(
    'USAGE',
    `Unknown transport "${transport}".`,
    'Leave out --transport: command hooks are the only transport.',
  );
}

function checkScope(scope: string): Scope {
  if (scope !== 'project' && scope !== 'user' && scope !== 'local')
    throw new PgxError('USAGE', `Unknown scope "${scope}".`, 'Use --scope project, local or user.');
  return scope;
}

interface McpInstall {
  routed: string[];
  servers: McpServerReport[];
  origin_read: boolean;
  skipped?: string;
  error?: string;
}

/** The install's MCP step (decision 492): routes every server that reaches the project's database, unless --no-mcp. */
async function installMcp(projectDir: string, opts: InstallOpts): Promise<McpInstall> {
  try {
    const config = loadConfig({ cwd: projectDir });
    const r = await routeServers(config, { dryRun: opts.dryRun || opts.mcp === false });
    if (opts.mcp === false) return { routed: [], servers: r.servers, origin_read: r.origin_read, skipped: '--no-mcp' };
    return { routed: r.changed.map((s) => s.name), servers: r.servers, origin_read: r.origin_read };
  } catch (e) {
    return { routed: [], servers: [], origin_read: false, error: describeError(e).message };
  }
}

async function unrouteMcp(projectDir: string, dryRun?: boolean): Promise<{ changed: string[]; error?: string }> {
  try {
    const r = await routeServers(loadConfig({ cwd: projectDir }), { unroute: true, dryRun });
    return { changed: r.changed.map((s) => `${s.name} (${s.file})`) };
  } catch (e) {
    return { changed: [], error: describeError(e).message };
  }
}

function mcpLines(m: McpInstall, dryRun?: boolean): string[] {
  if (m.error) return [`  MCP servers: not looked at (${m.error}); \`pgx mcp ls\` says more`];
  const lines: string[] = [];
  const skipped = m.skipped !== undefined;
  const routable = m.servers.filter((s) => !s.shadowed && s.verdict === 'project');
  if (m.routed.length)
    lines.push(
      `  MCP: ${dryRun ? 'would route' : 'routed'} ${m.routed.join(', ')}: pgx stands in front, each agent's calls reach ` +
        `its own branch (the entry keeps its name and tools; restart Claude Code sessions to use it)`,
    );
  if (skipped && routable.length)
    lines.push(
      `  MCP: not routed (--no-mcp): ${routable.map((s) => s.name).join(', ')} reach this project's database; ` +
        `subagents' calls to them are refused until \`pgx mcp route\``,
    );
  for (const s of m.servers.filter(
    (x) => !x.shadowed && (x.verdict === 'other-database' || x.verdict === 'database-unresolved'),
  ))
    lines.push(
      `  MCP: ${s.name} is a database server pgx does not route (${s.addresses.join(' ') || s.package || 'address not readable'}` +
        `${m.origin_read ? '' : "; the source's origin could not be read"}): subagents' calls to it are refused; ` +
        `\`pgx mcp route ${s.name}\` routes it to each agent's branch`,
    );
  return lines;
}
