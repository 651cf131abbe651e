// `pgx agent install copilot` / `pgx agent uninstall copilot`: parse, call the installer (src/install/copilot.ts),
// print. One module per client, as agent-install-claude.ts and agent-install-codex.ts (decisions/470-copilot-install.md).
import { resolve } from 'node:path';
import { findConfigFile } from '../project/config.js';
import { PgxError } from '../lib/errors.js';
import { installConfig, refuseNonProject, settingsErrors } from './install-config.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { pgxOnPath } from '../install/path-launcher.js';
import { copilotHome, installCopilot, uninstallCopilot, type CopilotScope } from '../install/copilot.js';
import type { Output } from '../lib/output.js';

interface CopilotOpts {
  scope: string;
  cwd?: string;
  dryRun?: boolean;
  transport?: string;
  here?: boolean;
}

function copilotScope(opts: CopilotOpts): CopilotScope {
  if (opts.scope !== 'user' && opts.scope !== 'project')
    throw new PgxError(
      'USAGE',
      `Unknown scope "${opts.scope}" for copilot.`,
      'Use --scope project (the default: .github/hooks/pgx.json) or --scope user ($COPILOT_HOME/settings.json).',
    );
  return opts.scope;
}

function projectDirOf(opts: CopilotOpts): string {
  const dir = resolve(opts.cwd ?? process.cwd());
  return findConfigFile(dir) ? resolve(findConfigFile(dir)!, '..') : dir;
}

export async function installCopilotCommand(opts: CopilotOpts, out: Output): Promise<void> {
  if (opts.transport !== undefined && opts.transport !== 'command')
    throw new PgxError(
      'USAGE',
      `The Copilot CLI hooks have no ${opts.transport} transport.`,
      'Install the Copilot CLI hooks with the default --transport command.',
    );
  const scope = copilotScope(opts);
  const projectDir = projectDirOf(opts);
  // Never a project by accident: not in $HOME or /, nor a directory with no project marker (decision 421).
  refuseNonProject(resolve(opts.cwd ?? process.cwd()), projectDir, {
    here: opts.here,
    client: 'copilot',
    userScope: scope === 'user',
  });
  // The same .pgx.toml rule as Claude Code's and Codex's install: none for a user-scope install outside a project.
  const config = installConfig(projectDir, { here: opts.here, dryRun: opts.dryRun, userScope: scope === 'user' });
  const configWritten = config.config_written;
  const launcher = launcherPath();
  const r = settingsErrors(() =>
    installCopilot({ scope, projectDir, copilotHome: copilotHome(), launcher, dryRun: opts.dryRun }),
  );
  // Project scope: the hooks find pgx on PATH; say where that is, or that it isn't.
  const onPath = scope === 'project' ? (pgxOnPath() ?? null) : undefined;
  const pathNote =
    onPath === undefined
      ? null
      : onPath === null
        ? '  pgx is not on PATH here: the hooks find it there, and refuse every subagent shell command until it is'
        : onPath !== launcher
          ? `  the hooks will run ${onPath} (the first pgx on PATH), not this one (${launcher})`
          : null;
  out.result(
    { ...r, scope, launcher, ...(onPath !== undefined ? { pgx_on_path: onPath } : {}), config_written: configWritten },
    () =>
      [
        configWritten
          ? `${opts.dryRun ? 'would write' : 'wrote'} ${configWritten} (uses the embedded local server; edit [server] url / [project] source)`
          : null,
        `${opts.dryRun ? (r.changed ? 'would update' : 'would leave unchanged') : r.changed ? 'updated' : 'unchanged'}: ` +
          `${r.path}${scope === 'project' ? ' (no path of this machine: commit it)' : ''}`,
        r.added.length ? `  added:     ${r.added.join(', ')}` : null,
        r.updated.length ? `  updated:   ${r.updated.join(', ')}` : null,
        r.unchanged.length ? `  unchanged: ${r.unchanged.join(', ')}` : null,
        r.project_trusted === false
          ? `  this folder is not trusted in Copilot yet: copilot asks when it first starts here; \`copilot -p\` ` +
            `runs a project's hooks only in a trusted folder (or with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true)`
          : null,
        pathNote,
        '  permissions: pgx never approves a command for Copilot; your --allow-tool/--deny-tool rules and prompts ' +
          'judge every routed command (docs: permissions-copilot.md)',
        'next: start copilot in this project; `pgx agent doctor` checks the setup',
      ]
        .filter(Boolean)
        .join('\n'),
  );
}

export async function uninstallCopilotCommand(opts: CopilotOpts, out: Output): Promise<void> {
  const scope = copilotScope(opts);
  const r = settingsErrors(() =>
    uninstallCopilot({ scope, projectDir: projectDirOf(opts), copilotHome: copilotHome(), dryRun: opts.dryRun }),
  );
  out.result(
    { ...r, scope },
    () =>
      `${r.changed ? (opts.dryRun ? 'would remove' : 'removed') : 'nothing to remove'}${r.removed.length ? `: ${r.removed.join(', ')}` : ''} ` +
      `(${r.path}${r.file_removed ? ', the file itself: it held nothing else' : ''})`,
  );
}
