// The project side of `pgx agent install|uninstall`: whether the directory may be made a project (never $HOME, /, or
// a directory with no project marker, unless --here: project/markers.ts), the .pgx.toml install writes when there is
// none, and its removal by uninstall while it is unchanged and no pgx hooks are left to read it (decision 421).
import { existsSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { inspectScopes } from '../doctor/hooks-check.js';
import { codexHome, codexHooksPathFor } from '../install/codex.js';
import { planCodexHooks } from '../install/codex-entries.js';
import { copilotHome, copilotHooksPathFor, planCopilotHooks } from '../install/copilot.js';
import { readSettingsFile, SettingsFileError } from '../lib/settings-file.js';
import { PgxError } from '../lib/errors.js';
import { CONFIG_FILE, findConfigFile } from '../project/config.js';
import { initProject, installWroteUnchanged } from '../project/init.js';
import { isHomeOrRoot, requireProjectDir } from '../project/markers.js';

/**
 * Refuses, before anything is written, to install into a directory that is not a project (NOT_A_PROJECT). `dir` is
 * where the user ran it, `projectDir` where the nearest .pgx.toml puts the project (dir itself when there is none).
 * A user-scope install writes the user's own settings and is never refused: it only skips the .pgx.toml
 * (installConfig).
 */
export function refuseNonProject(
  dir: string,
  projectDir: string,
  o: { here?: boolean; client: 'claude' | 'codex' | 'copilot'; userScope: boolean },
): void {
  if (o.userScope) return;
  const command = `pgx agent install ${o.client}`;
  const userScope = `${command} --scope user`;
  // A stray .pgx.toml in $HOME (written by an older pgx) makes every directory below it that project: say it is that file.
  if (projectDir !== dir && isHomeOrRoot(projectDir) && !o.here) {
    const file = join(projectDir, CONFIG_FILE);
    requireProjectDir(projectDir, {
      command: `${command} --cwd ${dir}`,
      userScope,
      extra:
        `${dir} resolves to it through ${file}; if pgx wrote that file by mistake, delete it (\`pgx agent uninstall ` +
        `${o.client} --cwd ${projectDir}\` deletes it while unchanged)`,
    });
  }
  requireProjectDir(projectDir, { here: o.here, command, userScope });
}

/** What install does about .pgx.toml: the file it wrote (or would), or why it wrote none. */
export interface ConfigOutcome {
  config_written: string | null;
  config_skipped: string | null;
}

export function installConfig(
  projectDir: string,
  o: { here?: boolean; dryRun?: boolean; userScope: boolean },
): ConfigOutcome {
  const file = join(projectDir, CONFIG_FILE);
  if (existsSync(file)) return { config_written: null, config_skipped: null };
  // a user-scope install from a directory that is not a project: hooks for every project, no .pgx.toml here
  if (o.userScope && !o.here && !isProject(projectDir))
    return {
      config_written: null,
      config_skipped:
        `${projectDir} is not a project: no ${CONFIG_FILE} written there (the hooks act only in projects with ` +
        `one: \`pgx init\` in each)`,
    };
  return {
    config_written: o.dryRun ? file : initProject({ dir: projectDir, by: 'install' }).path,
    config_skipped: null,
  };
}

function isProject(dir: string): boolean {
  try {
    requireProjectDir(dir, { command: '' });
    return true;
  } catch {
    return false;
  }
}

/** Where pgx hooks are still installed that would read this project's .pgx.toml (Claude Code's, Codex's and Copilot's, every scope). */
export function hooksLeft(projectDir: string): string[] {
  const claude = inspectScopes(projectDir, homedir())
    .filter((f) => f.insp.count > 0 || f.plugin)
    .map((f) => f.insp.path);
  const codex = (['project', 'user'] as const)
    .map((scope) => codexHooksPathFor(scope, projectDir, codexHome()))
    .filter((path) => {
      try {
        const text = readSettingsFile(path);
        return text !== undefined && planCodexHooks(text, { file: path, remove: true }).removed.length > 0;
      } catch {
        return false; // unreadable: uninstall codex says so; it runs no pgx hook either
      }
    });
  const copilot = (['project', 'user'] as const)
    .map((scope) => copilotHooksPathFor(scope, projectDir, copilotHome()))
    .filter((path) => {
      try {
        const text = readSettingsFile(path);
        return text !== undefined && planCopilotHooks(text, { file: path, remove: true }).removed.length > 0;
      } catch {
        return false; // unreadable: uninstall copilot says so
      }
    });
  return [...new Set([...claude, ...codex, ...copilot])];
}

/** What uninstall did about .pgx.toml: the file it deleted (or would), or why it kept it. */
export interface ConfigRemoval {
  config_removed: string | null;
  config_kept: string | null;
}

export function removeInstallConfig(dir: string, o: { dryRun?: boolean }): ConfigRemoval {
  const found = findConfigFile(dir);
  if (!found) return { config_removed: null, config_kept: null };
  const projectDir = join(found, '..');
  const state = installWroteUnchanged(found);
  if (state === 'missing') return { config_removed: null, config_kept: null };
  if (state === 'not-install')
    return {
      config_removed: null,
      config_kept: `${found}: not written by \`pgx agent install\` (yours, or \`pgx init\`'s)`,
    };
  if (state === 'changed')
    return { config_removed: null, config_kept: `${found}: changed since \`pgx agent install\` wrote it` };
  const left = hooksLeft(projectDir);
  if (left.length)
    return {
      config_removed: null,
      config_kept: `${found}: the pgx hooks in ${left.map((f) => (f.startsWith(projectDir + '/') ? relative(projectDir, f) : f)).join(', ')} still use it`,
    };
  if (!o.dryRun) rmSync(found, { force: true });
  return { config_removed: found, config_kept: null };
}

/** A settings file pgx can't safely edit, as the CLI reports it (CONFIG_INVALID, exit 3), for every client's install. */
export function settingsErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SettingsFileError) throw new PgxError('CONFIG_INVALID', e.message, e.hint);
    throw e;
  }
}

/** What uninstall did about the project's .pgx.toml, as a line (none when there was nothing to say). */
export function configLine(c: ConfigRemoval, dryRun?: boolean): string | null {
  if (c.config_removed)
    return (
      `${dryRun ? 'would delete' : 'deleted'} ${c.config_removed} (written by \`pgx agent install\`, unchanged, ` +
      `and no pgx hooks left to read it)`
    );
  return c.config_kept ? `kept ${c.config_kept}` : null;
}
