// Install / uninstall pgx's GitHub Copilot CLI hooks, in Copilot's native hook format (docs/pgx/local-dev/decisions/
// 470-copilot-install.md): project scope (the default) is a file of pgx's own, `.github/hooks/pgx.json`, committed and
// naming no path of this machine (pgx found on PATH, a plain-sh fallback where it isn't); user scope is the `hooks`
// object of $COPILOT_HOME/settings.json, naming this machine's launcher. pgx never trusts a folder for the user: in
// prompt mode (-p) Copilot loads a project's hooks only in a trusted folder (`trustedFolders` in
// $COPILOT_HOME/config.json) or with COPILOT_ALLOW_ALL=true / GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true (measured on
// 1.0.102), so the install says whether this project is trusted and the doctor warns when it isn't.
//
// The planner is pure (text in, text out); fs is touched only by installCopilot / uninstallCopilot.
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import {
  isPlainObject,
  parseSettingsText,
  readSettingsFile,
  serializeSettings,
  SettingsFileError,
  type JsonObject,
} from '../lib/settings-file.js';
import { writeFileAtomic } from '../lib/fsutil.js';
import { checkLauncher, PORTABLE_LAUNCHER } from './hook-events.js';
import { shellQuote } from '../lib/shell.js';
import type { CopilotHookName } from '../hooks/copilot/handlers.js';

export type CopilotScope = 'project' | 'user';

/** The hooks pgx installs, by Copilot's native event name; timeouts in seconds (`timeoutSec`), as for Claude Code. */
export const COPILOT_HOOK_EVENTS: ReadonlyArray<{ event: string; cli: CopilotHookName; timeoutSec: number }> =
  Object.freeze([
    { event: 'sessionStart', cli: 'session-start', timeoutSec: 30 },
    { event: 'userPromptSubmitted', cli: 'user-prompt-submit', timeoutSec: 10 },
    // Native hooks have no matcher: every tool call comes here, and pgx answers nothing for a tool other than bash.
    { event: 'preToolUse', cli: 'pre-tool-use', timeoutSec: 60 },
    { event: 'subagentStart', cli: 'subagent-start', timeoutSec: 60 },
    { event: 'subagentStop', cli: 'subagent-stop', timeoutSec: 30 },
    { event: 'sessionEnd', cli: 'session-end', timeoutSec: 10 },
  ]);

/** pgx's own project hooks file: Copilot loads every `.github/hooks/*.json`, so pgx needs no other file's lines. */
export const PROJECT_HOOKS_FILE = join('.github', 'hooks', 'pgx.json');

/** Recognises a pgx Copilot hook command (any launcher, or the portable form). Group 1 is the cli name. */
export const PGX_COPILOT_HOOK_RE =
  / agent copilot-hook (session-start|user-prompt-submit|pre-tool-use|subagent-start|subagent-stop|session-end)(?=[\s;]|$)/;

/** The start of every portable Copilot hook command: pgx on PATH, as the shell finds it. */
export const COPILOT_PORTABLE_HEAD = `command -v ${PORTABLE_LAUNCHER} >/dev/null 2>&1 && `;

const MISSING = 'pgx is not installed on this machine (no pgx on PATH)';

/**
 * What each hook does where pgx is not on PATH (a teammate's clone): plain sh. A subagent's shell command is denied in
 * Copilot's own answer form; only a subagent's payload carries an `"agentId"` key (measured on 1.0.102: the root's has
 * none), so the root's commands go on. `grep` failing to run counts as a subagent (denied). No apostrophe in any text:
 * the JSON sits inside '…'.
 */
const FALLBACK: Record<CopilotHookName, string> = {
  'session-start': 'exit 0',
  'user-prompt-submit': 'exit 0',
  'pre-tool-use': `grep -q '"agentId"'; [ $? = 1 ] && exit 0; echo '${JSON.stringify({
    permissionDecision: 'deny',
    permissionDecisionReason:
      `${MISSING}: this subagent command is refused, so that it cannot reach a database shared with other agents. ` +
      `Install pgx (see the project README), then start a new session.`,
  })}'`,
  'subagent-start': 'exit 0',
  'subagent-stop': 'exit 0',
  'session-end': 'exit 0',
};

/** `'<launcher>' agent copilot-hook <cli>` (user scope). Copilot denies the call when a preToolUse hook fails. */
export function copilotHookCommand(launcher: string, cli: CopilotHookName): string {
  checkLauncher(launcher);
  return `${shellQuote(launcher)} agent copilot-hook ${cli}`;
}

/**
 * `command -v pgx … && exec pgx agent copilot-hook <cli>; <fallback>` (project scope). A pgx that crashes exits
 * non-zero, which Copilot turns into a denied tool call (measured: "hook errored"): fail closed with no shell around it.
 */
export function portableCopilotHookCommand(cli: CopilotHookName): string {
  return `${COPILOT_PORTABLE_HEAD}exec ${PORTABLE_LAUNCHER} agent copilot-hook ${cli}; ${FALLBACK[cli]}`;
}

export const isPortableCopilotCommand = (command: string): boolean =>
  command.startsWith(COPILOT_PORTABLE_HEAD) && PGX_COPILOT_HOOK_RE.test(command);

export function copilotHome(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return env.COPILOT_HOME || join(home, '.copilot');
}

export function copilotHooksPathFor(scope: CopilotScope, projectDir: string, copilotHomeDir: string): string {
  return scope === 'user' ? join(copilotHomeDir, 'settings.json') : join(projectDir, PROJECT_HOOKS_FILE);
}

/** One native hook entry: the command Copilot runs with bash, and its timeout. */
export interface CopilotEntry {
  type: 'command';
  bash: string;
  timeoutSec: number;
}

/** pgx's entries in a hooks object, with the cli each runs. */
export function pgxEntriesOf(hooks: JsonObject): { event: string; cli: CopilotHookName; command: string }[] {
  const out: { event: string; cli: CopilotHookName; command: string }[] = [];
  for (const [event, entries] of Object.entries(hooks)) {
    if (!Array.isArray(entries)) continue;
    for (const e of entries) {
      const cli =
        isPlainObject(e) && typeof e.bash === 'string'
          ? (PGX_COPILOT_HOOK_RE.exec(e.bash)?.[1] as CopilotHookName | undefined)
          : undefined;
      if (cli) out.push({ event, cli, command: (e as { bash: string }).bash });
    }
  }
  return out;
}

const isPgxEntry = (e: unknown) => isPlainObject(e) && typeof e.bash === 'string' && PGX_COPILOT_HOOK_RE.test(e.bash);

export interface CopilotHooksPlan {
  text: string;
  changed: boolean;
  added: string[];
  updated: string[];
  unchanged: string[];
  removed: string[];
  /** Nothing of the file is left but what pgx wrote (uninstall of the project file: the file goes). */
  empty: boolean;
}

/** pgx's entries in a hooks file: each event's own entry, appended when absent, replaced in place, or removed. */
export function planCopilotHooks(
  text: string | undefined,
  opts: { file: string; launcher?: string; portable?: boolean; remove?: boolean },
): CopilotHooksPlan {
  const root = parseSettingsText(text, opts.file);
  if (root.hooks !== undefined && !isPlainObject(root.hooks))
    throw new SettingsFileError(opts.file, '"hooks" is not an object');
  const hooks = (root.hooks as JsonObject | undefined) ?? {};
  for (const [event, entries] of Object.entries(hooks))
    if (!Array.isArray(entries)) throw new SettingsFileError(opts.file, `"hooks.${event}" is not an array`);
  const added: string[] = [];
  const updated: string[] = [];
  const unchanged: string[] = [];
  const removed: string[] = [];
  const next: JsonObject = {};
  for (const [event, entries] of Object.entries(hooks)) {
    const kept = (entries as unknown[]).filter((e) => !(opts.remove && isPgxEntry(e)));
    if (kept.length < (entries as unknown[]).length) removed.push(event);
    if (kept.length) next[event] = kept;
  }
  if (!opts.remove) {
    for (const e of COPILOT_HOOK_EVENTS) {
      const want: CopilotEntry = {
        type: 'command',
        bash: opts.portable ? portableCopilotHookCommand(e.cli) : copilotHookCommand(opts.launcher!, e.cli),
        timeoutSec: e.timeoutSec,
      };
      const entries = (next[e.event] as unknown[] | undefined) ?? [];
      const at = entries.findIndex(
        (x) => isPlainObject(x) && typeof x.bash === 'string' && PGX_COPILOT_HOOK_RE.exec(x.bash)?.[1] === e.cli,
      );
      if (at < 0) {
        next[e.event] = [...entries, want];
        added.push(e.event);
      } else if (JSON.stringify(entries[at]) === JSON.stringify(want)) {
        unchanged.push(e.event);
      } else {
        entries[at] = want;
        updated.push(e.event);
      }
    }
  }
  // Copilot's hook files carry `"version": 1`; a file of pgx's own starts with it.
  const out: JsonObject =
    opts.portable && root.version === undefined ? { version: 1, ...root, hooks: next } : { ...root, hooks: next };
  if (opts.remove && Object.keys(next).length === 0) delete out.hooks;
  const changed = opts.remove ? removed.length > 0 : added.length + updated.length > 0;
  const left = Object.keys(out).filter((k) => k !== 'version');
  return { text: serializeSettings(out), changed, added, updated, unchanged, removed, empty: left.length === 0 };
}

/**
 * Copilot's own state file ($COPILOT_HOME/config.json: managed by Copilot, `//` comment lines at its top), read for
 * `trustedFolders` only; never written by pgx.
 */
export function trustedFoldersOf(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const root: unknown = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''));
    const list = isPlainObject(root) ? root.trustedFolders : undefined;
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** Is the project (or a folder above it) among the user's trusted folders? Prompt mode loads its hooks only then. */
export function projectTrusted(copilotHomeDir: string, projectDir: string): boolean {
  const dir = resolve(projectDir);
  return trustedFoldersOf(readSettingsFile(join(copilotHomeDir, 'config.json'))).some((f) => {
    const t = resolve(f);
    return dir === t || dir.startsWith(t.endsWith('/') ? t : `${t}/`);
  });
}

export interface CopilotInstallResult {
  path: string;
  changed: boolean;
  added: string[];
  updated: string[];
  unchanged: string[];
  /** Project scope: is the project a trusted folder of the user's (null: user scope, where no trust is needed)? */
  project_trusted: boolean | null;
  /** What the hooks run: `pgx` (found on PATH: project scope) or the absolute launcher (user scope). */
  hooks_launcher: string;
  dry_run: boolean;
}

export function installCopilot(opts: {
  scope: CopilotScope;
  projectDir: string;
  copilotHome: string;
  launcher: string;
  dryRun?: boolean;
}): CopilotInstallResult {
  const path = copilotHooksPathFor(opts.scope, opts.projectDir, opts.copilotHome);
  const portable = opts.scope === 'project';
  const plan = planCopilotHooks(readSettingsFile(path), { file: path, launcher: opts.launcher, portable });
  const dryRun = opts.dryRun === true;
  // A file already holding these hooks is left byte for byte as it is (a teammate's checkout).
  if (!dryRun && plan.changed) writeFileAtomic(path, plan.text);
  return {
    path,
    changed: plan.changed,
    added: plan.added,
    updated: plan.updated,
    unchanged: plan.unchanged,
    project_trusted: portable ? projectTrusted(opts.copilotHome, opts.projectDir) : null,
    hooks_launcher: portable ? PORTABLE_LAUNCHER : opts.launcher,
    dry_run: dryRun,
  };
}

export interface CopilotUninstallResult {
  path: string;
  changed: boolean;
  removed: string[];
  /** The project file held nothing else, so it was deleted. */
  file_removed: boolean;
  dry_run: boolean;
}

export function uninstallCopilot(opts: {
  scope: CopilotScope;
  projectDir: string;
  copilotHome: string;
  dryRun?: boolean;
}): CopilotUninstallResult {
  const path = copilotHooksPathFor(opts.scope, opts.projectDir, opts.copilotHome);
  const text = readSettingsFile(path);
  const plan = planCopilotHooks(text, { file: path, remove: true });
  const dryRun = opts.dryRun === true;
  const changed = text !== undefined && plan.removed.length > 0;
  // pgx's own project file with nothing else in it goes, and with it the .github/hooks directory if it is empty.
  const fileRemoved = changed && opts.scope === 'project' && plan.empty;
  if (!dryRun && changed) {
    if (fileRemoved) {
      rmSync(path);
      for (const dir of [dirname(path), dirname(dirname(path))]) {
        if (readdirSync(dir).length) break;
        rmdirSync(dir);
      }
    } else {
      writeFileAtomic(path, plan.text);
    }
  }
  return { path, changed, removed: plan.removed, file_removed: fileRemoved, dry_run: dryRun };
}
