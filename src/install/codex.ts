// Install / uninstall pgx's Codex CLI hooks: the entries in a Codex hooks.json, and the trust Codex records for them
// in the user's config.toml (docs/pgx/local-dev/decisions/201-codex-install-and-trust.md).
//
// The planners (codex-entries.ts, codex-trust.ts) are pure (text in, text out); fs is touched only by installCodex /
// uninstallCodex.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readSettingsFile } from '../lib/settings-file.js';
import { writeFileAtomic } from '../lib/fsutil.js';
import { PORTABLE_LAUNCHER } from './hook-events.js';
import { planCodexHooks } from './codex-entries.js';
import { planCodexTrust, projectTrusted } from './codex-trust.js';

export type CodexScope = 'user' | 'project';

export function codexHome(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return env.CODEX_HOME || join(home, '.codex');
}

export function codexHooksPathFor(scope: CodexScope, projectDir: string, codexHomeDir: string): string {
  return scope === 'user' ? join(codexHomeDir, 'hooks.json') : join(projectDir, '.codex', 'hooks.json');
}

// ---------------------------------------------------------------------------------------------------------------
// fs

export interface CodexInstallResult {
  path: string;
  config_path: string;
  changed: boolean;
  added: string[];
  updated: string[];
  unchanged: string[];
  trusted: string[];
  trust_moved: string[];
  project_trusted: boolean | null;
  /** What the hooks run: `pgx` (found on PATH: project scope) or the absolute launcher (user scope). */
  hooks_launcher: string;
  dry_run: boolean;
}

export function installCodex(opts: {
  scope: CodexScope;
  projectDir: string;
  codexHome: string;
  launcher: string;
  dryRun?: boolean;
}): CodexInstallResult {
  const path = codexHooksPathFor(opts.scope, opts.projectDir, opts.codexHome);
  const configPath = join(opts.codexHome, 'config.toml');
  const hooksText = readSettingsFile(path);
  const configText = readSettingsFile(configPath);
  // Project scope: the committed .codex/hooks.json finds pgx on PATH, the same text on every machine (decisions/206);
  // user scope names this machine's launcher (nobody shares that file).
  const portable = opts.scope === 'project';
  const hooks = planCodexHooks(hooksText, { file: path, launcher: opts.launcher, portable });
  const trust = planCodexTrust(configText, hooks, configPath);
  const dryRun = opts.dryRun === true;
  if (!dryRun) {
    // A file already holding these hooks is left byte for byte as it is (a teammate's checkout): only the trust,
    // which is this user's, is written.
    if (hooks.changed) writeFileAtomic(path, hooks.text);
    if (trust.changed) writeFileAtomic(configPath, trust.text);
  }
  return {
    path,
    config_path: configPath,
    changed: hooks.changed || trust.changed,
    added: hooks.added,
    updated: hooks.updated,
    unchanged: hooks.unchanged,
    trusted: trust.trusted,
    trust_moved: trust.moved,
    project_trusted: opts.scope === 'project' ? projectTrusted(configText, configPath, opts.projectDir) : null,
    hooks_launcher: portable ? PORTABLE_LAUNCHER : opts.launcher,
    dry_run: dryRun,
  };
}

export interface CodexUninstallResult {
  path: string;
  config_path: string;
  changed: boolean;
  removed: string[];
  untrusted: string[];
  trust_moved: string[];
  dry_run: boolean;
}

export function uninstallCodex(opts: {
  scope: CodexScope;
  projectDir: string;
  codexHome: string;
  dryRun?: boolean;
}): CodexUninstallResult {
  const path = codexHooksPathFor(opts.scope, opts.projectDir, opts.codexHome);
  const configPath = join(opts.codexHome, 'config.toml');
  const hooksText = readSettingsFile(path);
  const configText = readSettingsFile(configPath);
  const hooks = planCodexHooks(hooksText, { file: path, remove: true });
  const trust = planCodexTrust(configText, hooks, configPath);
  const dryRun = opts.dryRun === true;
  const hooksChanged = hooksText !== undefined && hooks.removed.length > 0;
  if (!dryRun) {
    if (hooksChanged) writeFileAtomic(path, hooks.text);
    if (trust.changed) writeFileAtomic(configPath, trust.text);
  }
  return {
    path,
    config_path: configPath,
    changed: hooksChanged || trust.changed,
    removed: hooks.removed,
    untrusted: trust.untrusted,
    trust_moved: trust.moved,
    dry_run: dryRun,
  };
}
