// `pgx agent install codex` / `pgx agent uninstall codex`: parse, call the installer (src/install/codex.ts), print.
// Its own module, like the other clients'; the options and the .pgx.toml line are shared with agent-install-claude.ts.
import { resolve } from 'node:path';
import { findConfigFile } from '../project/config.js';
import { PgxError } from '../lib/errors.js';
import { pgxOnPath } from '../install/path-launcher.js';
import { installConfig, refuseNonProject, removeInstallConfig, settingsErrors } from './install-config.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import type { Output } from '../lib/output.js';
import { codexHome, installCodex, uninstallCodex, type CodexScope } from '../install/codex.js';
import { codexSandboxNote } from '../install/codex-sandbox.js';
import type { InstallOpts } from './agent-install-claude.js';
import { configLine } from './install-config.js';

function codexScope(opts: InstallOpts, defaulted: boolean): CodexScope {
  // Codex's default: the user's $CODEX_HOME/hooks.json, which runs without trusting the whole project (decisions/201).
  const scope = defaulted ? 'user' : opts.scope;
  if (scope !== 'user' && scope !== 'project')
    throw new PgxError(
      'USAGE',
      `Unknown scope "${scope}" for codex.`,
      'Use --scope user (the default: $CODEX_HOME/hooks.json) or --scope project (.codex/hooks.json).',
    );
  return scope;
}

function projectDirOf(opts: InstallOpts): string {
  const dir = resolve(opts.cwd ?? process.cwd());
  return findConfigFile(dir) ? resolve(findConfigFile(dir)!, '..') : dir;
}

export async function installCodexCommand(opts: InstallOpts, out: Output, defaulted: boolean): Promise<void> {
  if (opts.transport !== undefined && opts.transport !== 'command')
    throw new PgxError(
      'USAGE',
      `Codex has no ${opts.transport} hooks.`,
      'Install the Codex CLI hooks with the default --transport command.',
    );
  const scope = codexScope(opts, defaulted);
  const projectDir = projectDirOf(opts);
  refuseNonProject(resolve(opts.cwd ?? process.cwd()), projectDir, {
    here: opts.here,
    client: 'codex',
    userScope: scope === 'user',
  });
  const config = installConfig(projectDir, { here: opts.here, dryRun: opts.dryRun, userScope: scope === 'user' });
  const configWritten = config.config_written;
  const launcher = launcherPath();
  const r = settingsErrors(() =>
    installCodex({ scope, projectDir, codexHome: codexHome(), launcher, dryRun: opts.dryRun }),
  );
  const sandbox = codexSandboxNote();
  // Project scope: the hooks find pgx on PATH (decisions/206); say where that is, or that it isn't.
  const onPath = scope === 'project' ? (pgxOnPath() ?? null) : undefined;
  const pathNote =
    onPath === undefined
      ? null
      : onPath === null
        ? `  pgx is not on PATH here: the hooks find it there, and refuse every subagent shell command until it ` +
          `is (after an npm --prefix ~/.local install: add ~/.local/bin to PATH)`
        : onPath !== launcher
          ? `  the hooks will run ${onPath} (the first pgx on PATH), not this one (${launcher})`
          : null;
  const fileChanged = r.added.length + r.updated.length > 0;
  out.result(
    { ...r, scope, launcher, ...(onPath !== undefined ? { pgx_on_path: onPath } : {}), ...config, sandbox },
    () =>
      [
        configWritten
          ? `${opts.dryRun ? 'would write' : 'wrote'} ${configWritten} (uses the embedded local server; edit [server] url / [project] source)`
          : null,
        config.config_skipped,
        `${opts.dryRun ? (fileChanged ? 'would update' : 'would leave unchanged') : fileChanged ? 'updated' : 'unchanged'}: ` +
          `${r.path}${scope === 'project' ? ' (no path of this machine: commit it)' : ''}`,
        r.added.length ? `  added:     ${r.added.join(', ')}` : null,
        r.updated.length ? `  updated:   ${r.updated.join(', ')}` : null,
        r.unchanged.length ? `  unchanged: ${r.unchanged.join(', ')}` : null,
        r.trusted.length
          ? `  trusted in ${r.config_path}: ${r.trusted.length} hook${r.trusted.length > 1 ? 's' : ''} (Codex's [hooks.state] ` +
            `trusted_hash, as \`/hooks\` would record it)`
          : `  trust: already recorded in ${r.config_path}`,
        r.trust_moved.length ? `  kept the trust of hooks whose position moved: ${r.trust_moved.join(', ')}` : null,
        r.project_trusted === false
          ? `  this project is not trusted in Codex yet: project hooks run only once it is (Codex asks when it first starts here)`
          : null,
        pathNote,
        `  sandbox: ${sandbox.text}`,
        'next: start Codex in this project; `pgx agent doctor` checks the setup',
      ]
        .filter(Boolean)
        .join('\n'),
  );
}

export async function uninstallCodexCommand(opts: InstallOpts, out: Output, defaulted: boolean): Promise<void> {
  const scope = codexScope(opts, defaulted);
  const r = settingsErrors(() =>
    uninstallCodex({ scope, projectDir: projectDirOf(opts), codexHome: codexHome(), dryRun: opts.dryRun }),
  );
  const config = removeInstallConfig(resolve(opts.cwd ?? process.cwd()), { dryRun: opts.dryRun });
  out.result({ ...r, scope, ...config }, () =>
    [
      `${r.changed ? (opts.dryRun ? 'would remove' : 'removed') : 'nothing to remove'}${r.removed.length ? `: ${r.removed.join(', ')}` : ''} ` +
        `(${r.path}${r.untrusted.length ? `; ${r.untrusted.length} trust entries from ${r.config_path}` : ''})`,
      configLine(config, opts.dryRun),
    ]
      .filter(Boolean)
      .join('\n'),
  );
}
