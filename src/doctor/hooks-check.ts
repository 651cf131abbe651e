// Are pgx's six hooks installed where Claude Code will read them, pointing at a launcher that still exists, and is
// the wrapper allowed to run without a prompt? Hook entries merge across the three settings files, so all three
// are read; a plugin install (enabledPlugins "pgx@…") is recognised too.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  HOOK_EVENTS,
  ON_FAILURE_SINCE,
  PORTABLE_LAUNCHER,
  settingsPathFor,
  type Scope,
} from '../install/hook-events.js';
import { inspectClaudeInstall, type InstallInspection } from '../install/inspect.js';
import { claudeOnPath, claudeVersionOf } from '../verify/find-claude.js';
import { pgxOnPath } from '../install/path-launcher.js';
import { isPlainObject, parseSettingsText, readSettingsFile } from '../lib/settings-file.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { socketDirPath } from '../broker/protocol.js';
import { fail, ok, warn, type Check, type DoctorContext } from './types.js';

const SCOPES: Scope[] = ['project', 'local', 'user'];

export interface Found {
  scope: Scope;
  insp: InstallInspection;
  /** The enabledPlugins key naming the pgx plugin, when this file enables it. */
  plugin?: string;
}

export function inspectScopes(projectDir: string, home = homedir()): Found[] {
  const seen = new Set<string>(); // the project IS the home directory: its settings.json is the user's too
  return SCOPES.flatMap((scope) => {
    const path = settingsPathFor(scope, projectDir, home);
    if (seen.has(path)) return [];
    seen.add(path);
    return [{ scope, insp: inspectClaudeInstall(path), plugin: pluginEnabled(path) }];
  });
}

function pluginEnabled(path: string): string | undefined {
  try {
    const root = parseSettingsText(readSettingsFile(path), path);
    const plugins = root.enabledPlugins;
    if (!isPlainObject(plugins)) return undefined;
    return Object.keys(plugins).find((k) => /^pgx@/.test(k) && plugins[k] === true);
  } catch {
    return undefined; // a broken file is reported by inspectClaudeInstall
  }
}

export const installCmd = (scope: Scope, extra = '') =>
  `pgx agent install claude${scope === 'project' ? '' : ` --scope ${scope}`}${extra}`;

export function hooksCheck(ctx: DoctorContext, found = inspectScopes(ctx.projectDir)): Check {
  const problems: Check[] = [];
  for (const { scope, insp } of found) {
    if (insp.parseError)
      problems.push(
        fail(
          'hooks',
          `${insp.path} cannot be read: ${insp.parseError}`,
          `fix the JSON in ${insp.path} by hand, then ${installCmd(scope)}`,
        ),
      );
  }
  const installs = found.filter((f) => f.insp.count > 0);
  const plugin = found.find((f) => f.plugin);
  if (!installs.length && !problems.length) {
    if (plugin) return ok('hooks', `from the pgx plugin ("${plugin.plugin}" enabled in ${plugin.insp.path})`);
    return fail(
      'hooks',
      `no pgx hooks in ${found.map((f) => f.insp.path).join(', ')}, and no enabled pgx plugin: subagents share ` +
        `whatever database their commands name (a plugin loaded with --plugin-dir is invisible from here)`,
      'pgx agent install claude',
    );
  }
  // A project install is split: the shared file holds the command entries, settings.local.json only the rules (an
  // old HTTP install's entries too); the events merge, so an event is missing only when no file has it.
  const anywhere = (event: string) => installs.some((f) => f.insp.entries[event]!.present);
  // What the retired HTTP transport left (decision 444): its entries POST to a port no pgx process listens on any
  // more (and another user could), so a subagent's every Bash command is blocked or, worse, answered by a stranger.
  for (const { scope, insp } of found) {
    const http = HOOK_EVENTS.filter((h) => insp.entries[h.event]!.transport === 'http').map((h) => h.event);
    const left = [
      ...http.map((e) => `${e} HTTP entry`),
      ...insp.keepers.map((e) => `${e} keeper`),
      ...(insp.hasSecret ? ['env.PGX_HOOK_SECRET'] : []),
    ];
    if (!left.length) continue;
    const fix = installCmd(scope === 'local' && installs.some((f) => f.scope === 'project') ? 'project' : scope);
    problems.push(
      (http.length ? fail : warn)(
        'hooks',
        `leftovers of the retired HTTP transport in ${insp.path} (${left.join(', ')}): ${
          http.length
            ? 'they POST to 127.0.0.1, where no pgx process listens any more, so every such hook fails (a subagent ' +
              'Bash call is blocked)'
            : 'nothing uses them'
        }`,
        `${fix}  # moves it back to command hooks and removes them`,
      ),
    );
  }
  const httpState = socketDirPath() ? join(socketDirPath()!, 'http.json') : undefined;
  if (httpState && existsSync(httpState))
    problems.push(
      warn(
        'hooks',
        `${httpState}, the retired HTTP broker's port and secret, is still there (nothing reads it)`,
        `rm ${httpState}`,
      ),
    );
  if (process.env.PGX_HOOK_SECRET)
    problems.push(
      warn(
        'hooks',
        'PGX_HOOK_SECRET is set in this environment, for the retired HTTP transport (nothing reads it)',
        'remove it from your shell profile',
      ),
    );
  const rewriters = installs.reduce((n, f) => n + f.insp.rewriters, 0);
  if (rewriters > 1) {
    problems.push(
      fail(
        'hooks',
        `${rewriters} pgx PreToolUse rewriters across ${installs
          .filter((f) => f.insp.rewriters > 0)
          .map((f) => f.insp.path)
          .join(', ')}: ` +
          `when two rewrite, the last to finish wins, so a subagent's command may run with the other's rewrite`,
        installCmd(installs.find((f) => f.insp.rewriters > 0)!.scope),
      ),
    );
  }
  for (const { scope, insp } of installs) {
    const missing = HOOK_EVENTS.filter((h) => !insp.entries[h.event]!.present && !anywhere(h.event)).map(
      (h) => h.event,
    );
    if (insp.olderPartial) {
      problems.push(
        fail(
          'hooks',
          `older 4-entry pgx install in ${insp.path} (${missing.join(', ')} missing): subagents get no branch at ` +
            `start and are never retired`,
          installCmd(scope),
        ),
      );
    } else if (missing.length) {
      problems.push(
        fail(
          'hooks',
          `${HOOK_EVENTS.filter((h) => anywhere(h.event)).length}/6 pgx entries in ${insp.path} (missing: ${missing.join(', ')})`,
          installCmd(scope),
        ),
      );
    }
    const gone = [
      ...new Set(
        Object.values(insp.entries)
          .filter((e) => e.launcherExists === false)
          .map((e) => e.launcher!),
      ),
    ];
    if (gone.includes(PORTABLE_LAUNCHER)) {
      problems.push(
        fail(
          'hooks',
          `pgx is not on PATH, where the hooks in ${insp.path} find it: every subagent Bash command is refused ` +
            `(the session goes on, with a warning)`,
          `put the directory holding pgx on PATH (an npm --prefix ~/.local install: ~/.local/bin), or install pgx ` +
            `(README), then ${installCmd(scope)}`,
        ),
      );
      gone.splice(gone.indexOf(PORTABLE_LAUNCHER), 1);
    }
    if (gone.length)
      problems.push(
        fail(
          'hooks',
          `the launcher ${gone.join(', ')} named in ${insp.path} no longer exists (pgx moved or was uninstalled): every hook fails`,
          installCmd(scope),
        ),
      );
    const open = HOOK_EVENTS.filter((h) => insp.entries[h.event]!.failsOpen).map((h) => h.event);
    if (open.length)
      problems.push(
        warn(
          'hooks',
          `the ${open.join(', ')} entry in ${insp.path} has no "onFailure": "block" (written by an older pgx): ` +
            `a hook process that can't start, is killed or times out lets a subagent's command run unrouted`,
          installCmd(scope),
        ),
      );
    if (insp.launcherPaths.length > 1)
      problems.push(
        warn(
          'hooks',
          `${insp.path} names ${insp.launcherPaths.length} different launchers (${insp.launcherPaths.join(', ')})`,
          installCmd(scope),
        ),
      );
  }
  const launchers = new Set(installs.flatMap((f) => f.insp.launcherPaths));
  if (installs.length > 1 && launchers.size > 1) {
    const extra = installs.find((f) => f.scope !== 'project') ?? installs[1]!;
    problems.push(
      warn(
        'hooks',
        `pgx hooks in ${installs.length} files with different launchers (${[...launchers].join(', ')}): every ` +
          `event runs once per launcher`,
        `pgx agent uninstall claude --scope ${extra.scope}`,
      ),
    );
  }
  if (problems.length) {
    const worst = problems.find((p) => p.status === 'fail') ?? problems[0]!;
    return { ...worst, detail: problems.map((p) => p.detail).join('; ') };
  }
  const old = claudeIgnoringOnFailure(process.env);
  if (old)
    return warn(
      'hooks',
      `6/6 installed, but Claude Code ${old} ignores "onFailure" (honoured since ${ON_FAILURE_SINCE}): a PreToolUse ` +
        `hook that can't start, is killed or times out lets a subagent's command run unrouted`,
      'update Claude Code (claude update, or npm install -g @anthropic-ai/claude-code)',
    );
  const where = installs.map((f) => `${f.insp.path}`).join(' and ');
  const named = [...launchers].map((l) => (l === PORTABLE_LAUNCHER ? `pgx on PATH: ${pgxOnPath() ?? '?'}` : l));
  const transports = HOOK_EVENTS.map((h) => {
    const e = installs.map((f) => f.insp.entries[h.event]!).find((x) => x.present);
    return `${h.event} ${e?.transport ?? '?'}${h.onFailure ? (e?.failsOpen ? ' (fails open)' : ' (fails closed)') : ''}`;
  });
  return ok('hooks', `6/6 in ${where} (launcher ${named.join(', ')}; ${transports.join(', ')})`);
}

/** The version of the `claude` on PATH when it is older than ON_FAILURE_SINCE; undefined when newer or not found. */
function claudeIgnoringOnFailure(env: NodeJS.ProcessEnv): string | undefined {
  const bin = claudeOnPath(env);
  const version = bin ? claudeVersionOf(bin, env) : undefined;
  if (!version) return undefined;
  const [a, b] = [version, ON_FAILURE_SINCE].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a![i] !== b![i]) return a![i]! < b![i]! ? version : undefined;
  return undefined;
}

/** The launcher(s) rewritten commands start with: the installed hooks', else the plugin's, else this pgx's. */
export function launchersInUse(found: Found[]): string[] {
  // A portable hook runs the first pgx on PATH: its resolved file is what the rewrite starts with.
  const resolve = (l: string) =>
    l === PORTABLE_LAUNCHER ? (process.env.PGX_LAUNCHER ? launcherPath() : (pgxOnPath() ?? launcherPath())) : l;
  const installed = [...new Set(found.flatMap((f) => f.insp.launcherPaths).map(resolve))];
  if (installed.length) return installed;
  if (found.some((f) => f.plugin)) {
    const cached = pluginLaunchers();
    if (cached.length) return cached;
  }
  return [launcherPath()];
}

/** Claude Code keeps installed plugins under ~/.claude/plugins/cache/<marketplace>/<plugin>/<version>/. */
function pluginLaunchers(home = homedir()): string[] {
  const root = join(home, '.claude', 'plugins', 'cache');
  const out: string[] = [];
  try {
    for (const market of readdirSync(root)) {
      const dir = join(root, market, 'pgx');
      if (!existsSync(dir)) continue;
      for (const version of readdirSync(dir)) {
        const bin = join(dir, version, 'bin', 'pgx.js');
        if (existsSync(bin)) out.push(realpathSync(bin));
      }
    }
  } catch {
    // no plugin cache
  }
  return out;
}
