// Install / uninstall pgx's Claude Code hooks: the fs edges. Both files of a project-scope install are planned
// (claude-entries.ts, claude-local-rules.ts) before either is written; the per-machine one is kept out of git
// (git-exclude.ts).
import { rmSync } from 'node:fs';
import { writeFileAtomic } from '../lib/fsutil.js';
import { readSettingsFile } from '../lib/settings-file.js';
import { dropGitExclude, keepOutOfGit, type GitIgnoreResult } from './git-exclude.js';
import { mergeRules } from './permission-rules.js';
import { planInstall, planUninstall, SECRET_VAR_NAME, type InstallPlan, type UninstallPlan } from './claude-entries.js';
import { planRulesFile } from './claude-local-rules.js';

/** Where a project-scope install keeps this machine's rules (see PlanInstallOptions.portable). */
export interface LocalRulesResult {
  path: string;
  changed: boolean;
  /** The file already runs pgx's hooks (a --scope local install): left as it is. */
  ownHooks: boolean;
  /** Is the file kept out of git? (install/git-exclude.ts) */
  gitIgnored: GitIgnoreResult;
}

export function installClaude(opts: {
  settingsPath: string;
  launcher: string;
  projectDir?: string;
  rules?: boolean;
  dryRun?: boolean;
  /** Portable hooks in settingsPath; the rules in this file instead (project scope). */
  rulesPath?: string;
}): InstallPlan & { path: string; dryRun: boolean; local?: LocalRulesResult } {
  const existing = readSettingsFile(opts.settingsPath);
  const portable = opts.rulesPath !== undefined;
  const plan = planInstall(existing, {
    launcher: opts.launcher,
    portable,
    projectDir: opts.projectDir,
    rules: opts.rules,
    path: opts.settingsPath,
  });
  const dryRun = opts.dryRun === true;
  // Plan both files before writing either: a broken settings.local.json leaves settings.json untouched too.
  const localText = portable ? readSettingsFile(opts.rulesPath!) : undefined;
  const localPlan = portable
    ? planRulesFile(localText, {
        launcher: opts.launcher,
        projectDir: opts.projectDir!,
        rules: opts.rules,
        path: opts.rulesPath,
      })
    : undefined;
  if (plan.changed && !dryRun && plan.text !== existing)
    writeFileAtomic(opts.settingsPath, plan.text, { throughLinks: true });
  if (!localPlan) return { ...plan, path: opts.settingsPath, dryRun };
  if (localPlan.changed && !dryRun) writeFileAtomic(opts.rulesPath!, localPlan.text, { throughLinks: true });
  const gitIgnored: GitIgnoreResult =
    localText !== undefined || localPlan.changed ? keepOutOfGit(opts.rulesPath!, { dryRun }) : { status: 'no-file' };
  // The per-machine file of a project-scope HTTP install held its entries, keepers and secret: gone now too.
  const httpRemoved = [
    ...new Set([
      ...(plan.httpRemoved ?? []),
      ...(localPlan.removed ?? []),
      ...(localPlan.removed?.length ? ['env.' + SECRET_VAR_NAME] : []),
    ]),
  ];
  return {
    ...plan,
    changed: plan.changed || localPlan.changed,
    rules: mergeRules(plan.rules, localPlan.rules),
    ...(localPlan.rulesSkipped ? { rulesSkipped: localPlan.rulesSkipped } : {}),
    ...(httpRemoved.length ? { httpRemoved } : {}),
    path: opts.settingsPath,
    dryRun,
    local: { path: opts.rulesPath!, changed: localPlan.changed, ownHooks: localPlan.ownHooks, gitIgnored },
  };
}

export function uninstallClaude(opts: { settingsPath: string; dryRun?: boolean; rulesPath?: string }): UninstallPlan & {
  path: string;
  dryRun: boolean;
  local?: { path: string; changed: boolean; ownHooks: boolean; file_removed: boolean; gitExcludeRemoved: boolean };
} {
  const existing = readSettingsFile(opts.settingsPath);
  const plan = planUninstall(existing, { path: opts.settingsPath });
  const dryRun = opts.dryRun === true;
  const localText = opts.rulesPath !== undefined ? readSettingsFile(opts.rulesPath) : undefined;
  const localPlan =
    opts.rulesPath !== undefined && localText !== undefined
      ? planRulesFile(localText, { launcher: 'pgx', projectDir: '/', remove: true, path: opts.rulesPath })
      : undefined;
  if (plan.changed && !dryRun) writeFileAtomic(opts.settingsPath, plan.text, { throughLinks: true });
  if (opts.rulesPath === undefined) return { ...plan, path: opts.settingsPath, dryRun };
  // A local file that only pgx's rules filled is deleted; pgx's exclude lines go once the file they hide is gone (a
  // file left with the user's own settings stays hidden).
  const localGone = localText === undefined || (localPlan?.changed === true && localPlan.text.trim() === '{}');
  if (localPlan?.changed && !dryRun) {
    if (localGone) rmSync(opts.rulesPath);
    else writeFileAtomic(opts.rulesPath, localPlan.text, { throughLinks: true });
  }
  const gitExcludeRemoved = localGone ? dropGitExclude(opts.rulesPath, { dryRun }) : false;
  return {
    ...plan,
    changed: plan.changed || localPlan?.changed === true,
    removed: [...new Set([...plan.removed, ...(localPlan?.removed ?? [])])],
    rulesRemoved: [...plan.rulesRemoved, ...(localPlan?.rules.removed ?? [])],
    path: opts.settingsPath,
    dryRun,
    local: {
      path: opts.rulesPath,
      changed: localPlan?.changed === true,
      ownHooks: localPlan?.ownHooks === true,
      file_removed: localPlan?.changed === true && localGone,
      gitExcludeRemoved,
    },
  };
}
