// Install / uninstall pgx's Codex CLI hooks: the entries in a Codex hooks.json, and the trust Codex records for them
// in the user's config.toml (docs/pgx/local-dev/decisions/201-codex-install-and-trust.md).
//
// Codex runs a non-managed hook only once it is trusted: `[hooks.state."<file>:<event>:<group>:<handler>"]
// trusted_hash = "sha256:…"` in $CODEX_HOME/config.toml, where the hash is SHA-256 over the compact JSON of the
// hook's normalised identity, keys sorted, unset fields omitted:
//   {"event_name":"pre_tool_use","hooks":[{"async":false,"command":"…","timeout":60,"type":"command"}],"matcher":"Bash"}
// Measured against `codex app-server`'s hooks/list (its currentHash) on 0.171.0; the e2e test checks the real binary
// runs hooks pgx trusted this way. The key names the hook's position, so pgx appends its own groups (never shifts
// another hook's position on install) and, on uninstall, moves the trust of any hook its removal shifted.
//
// The planners are pure (text in, text out); fs is touched only by installCodex / uninstallCodex.
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
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
import { CODEX_HOOK_TIMEOUT_S, type CodexHookCli } from '../hooks/codex/timeouts.js';
import { missingPgxFallbacks } from '../hooks/claude/settings-entries.js';

export type CodexScope = 'user' | 'project';

/** The hooks pgx installs for Codex. There is no SessionEnd in Codex (decisions/204-codex-session-end.md). */
export const CODEX_HOOK_EVENTS: ReadonlyArray<{ event: string; snake: string; cli: CodexHookCli; matcher?: string }> =
  Object.freeze([
    { event: 'SessionStart', snake: 'session_start', cli: 'session-start' },
    { event: 'UserPromptSubmit', snake: 'user_prompt_submit', cli: 'user-prompt-submit' },
    // Only the shell tool is routed; Codex shows it to hooks as "Bash".
    { event: 'PreToolUse', snake: 'pre_tool_use', cli: 'pre-tool-use', matcher: 'Bash' },
    { event: 'SubagentStart', snake: 'subagent_start', cli: 'subagent-start' },
    { event: 'SubagentStop', snake: 'subagent_stop', cli: 'subagent-stop' },
  ]);

const SNAKE: Record<string, string> = Object.fromEntries(
  [
    'SessionStart',
    'UserPromptSubmit',
    'PreToolUse',
    'PermissionRequest',
    'PostToolUse',
    'PreCompact',
    'PostCompact',
    'Stop',
    'SubagentStart',
    'SubagentStop',
  ].map((e) => [e, e.replace(/[A-Z]/g, (c, i: number) => (i ? '_' : '') + c.toLowerCase())]),
);

/** Codex's default timeout for a command hook without one (seconds): part of the trust hash. */
const CODEX_DEFAULT_TIMEOUT_S = 600;

/**
 * Recognises a pgx Codex hook command (any launcher, quoted or not, or the portable `… exec pgx agent codex-hook
 * <cli>; <fallback>`). Group 1 is the cli name.
 */
export const PGX_CODEX_HOOK_RE =
  / agent codex-hook (session-start|user-prompt-submit|pre-tool-use|subagent-start|subagent-stop)(?=[\s;]|$)/;

/**
 * Codex runs a PreToolUse hook that fails (exit other than 0 or 2, no start, a crash) as if it said nothing: the
 * subagent's command would run unrouted. `|| exit 2` turns every failure of the launcher into a block, with the cause
 * on stderr, which Codex gives the model as the reason.
 */
const FAIL_CLOSED =
  `|| { echo "pgx: the hook failed, so this command was not routed to a database branch and did not run; ` +
  `run \\\`pgx agent doctor\\\`." >&2; exit 2; }`;

export function codexHookCommand(launcher: string, cli: CodexHookCli): string {
  checkLauncher(launcher);
  const base = `${shellQuote(launcher)} agent codex-hook ${cli}`;
  return cli === 'pre-tool-use' ? `${base} ${FAIL_CLOSED}` : base;
}

// ---------------------------------------------------------------------------------------------------------------
// The portable project-scope command (decisions/206-codex-portable-project-install.md): `.codex/hooks.json` is
// committed, so it names no path of one user's machine. pgx is found on PATH; the text, and with it the trust hash,
// is the same on every machine.

/** The start of every portable Codex hook command: pgx on PATH, as the shell finds it. */
export const CODEX_PORTABLE_HEAD = `command -v ${PORTABLE_LAUNCHER} >/dev/null 2>&1 && `;

/**
 * What each hook does where pgx is not on PATH (a teammate's clone): plain sh, nothing of pgx's. A subagent's shell
 * command is refused (exit 2 blocks in Codex, the reason on stderr reaches the model), so it never runs against
 * whatever database it names; the parent's commands go on, and SessionStart says why in a visible line. Only a
 * subagent's payload carries an `"agent_id"` key (measured on 0.171.0: the parent's has none); the same text inside
 * a command string is escaped (`\"agent_id\"`) except at the string's very end, where the parent's command is then
 * refused too (stricter). `grep` failing to run counts as a subagent (refused). No apostrophe in any text: the JSON
 * sits inside '…'.
 */
const CODEX_FALLBACK: Record<CodexHookCli, string> = missingPgxFallbacks('shell');

/**
 * `command -v pgx … && exec pgx agent codex-hook <cli>; <fallback>`. PreToolUse is not exec'd: the shell stays to
 * turn any failure of pgx (a crash, an exit other than 0) into a block, as the absolute form's `|| exit 2` does.
 */
export function portableCodexHookCommand(cli: CodexHookCli): string {
  const run = `${PORTABLE_LAUNCHER} agent codex-hook ${cli}`;
  const found = cli === 'pre-tool-use' ? `{ ${run} ${FAIL_CLOSED}; exit 0; }` : `exec ${run}`;
  return `${CODEX_PORTABLE_HEAD}${found}; ${CODEX_FALLBACK[cli]}`;
}

/** Does this hook command find pgx on PATH (the portable form) rather than name a launcher? */
export const isPortableCodexCommand = (command: string): boolean =>
  command.startsWith(CODEX_PORTABLE_HEAD) && PGX_CODEX_HOOK_RE.test(command);

/** SHA-256 of the hook's normalised identity, as Codex computes its `currentHash` (measured on 0.171.0). */
export function codexTrustHash(
  eventName: string,
  matcher: string | undefined,
  command: string,
  timeoutS: number | undefined,
): string {
  const handler = { async: false, command, timeout: timeoutS ?? CODEX_DEFAULT_TIMEOUT_S, type: 'command' };
  const identity: Record<string, unknown> = { event_name: SNAKE[eventName] ?? eventName, hooks: [handler] };
  if (matcher !== undefined) identity.matcher = matcher;
  return `sha256:${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
}

export function codexHome(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return env.CODEX_HOME || join(home, '.codex');
}

export function codexHooksPathFor(scope: CodexScope, projectDir: string, codexHomeDir: string): string {
  return scope === 'user' ? join(codexHomeDir, 'hooks.json') : join(projectDir, '.codex', 'hooks.json');
}

export interface HandlerAt {
  key: string;
  event: string;
  matcher: string | undefined;
  command: string;
  timeout: number | undefined;
  cli?: CodexHookCli;
}

/** Every command handler in a hooks object, with the trust key Codex gives it. */
export function handlersOf(hooks: JsonObject, file: string): HandlerAt[] {
  const out: HandlerAt[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((group, g) => {
      if (!isPlainObject(group) || !Array.isArray(group.hooks)) return;
      group.hooks.forEach((h, i) => {
        if (!isPlainObject(h) || typeof h.command !== 'string') return;
        const cli = PGX_CODEX_HOOK_RE.exec(h.command)?.[1] as CodexHookCli | undefined;
        out.push({
          key: `${file}:${SNAKE[event] ?? event}:${g}:${i}`,
          event,
          matcher: typeof group.matcher === 'string' ? group.matcher : undefined,
          command: h.command,
          timeout: typeof h.timeout === 'number' ? h.timeout : undefined,
          cli,
        });
      });
    });
  }
  return out;
}

function hooksRoot(text: string | undefined, file: string): { root: JsonObject; hooks: JsonObject } {
  const root = parseSettingsText(text, file);
  if (root.hooks !== undefined && !isPlainObject(root.hooks))
    throw new SettingsFileError(file, '"hooks" is not an object');
  const hooks = (root.hooks as JsonObject | undefined) ?? {};
  for (const [event, groups] of Object.entries(hooks))
    if (!Array.isArray(groups)) throw new SettingsFileError(file, `"hooks.${event}" is not an array`);
  return { root, hooks };
}

export interface CodexHooksPlan {
  text: string;
  changed: boolean;
  added: string[];
  updated: string[];
  unchanged: string[];
  removed: string[];
  /** The hooks after the change: what the trust state must name. */
  after: HandlerAt[];
  before: HandlerAt[];
}

/** pgx's groups in the hooks file: each event's own group (appended when absent, its command updated in place). */
export function planCodexHooks(
  text: string | undefined,
  opts: { file: string; launcher?: string; portable?: boolean; remove?: boolean },
): CodexHooksPlan {
  const { root, hooks } = hooksRoot(text, opts.file);
  const before = handlersOf(hooks, opts.file);
  const added: string[] = [];
  const updated: string[] = [];
  const unchanged: string[] = [];
  const removed: string[] = [];
  const next: JsonObject = {};
  for (const [event, groups] of Object.entries(hooks)) {
    const kept = (groups as unknown[]).flatMap((group) => {
      if (!isPlainObject(group) || !Array.isArray(group.hooks)) return [group];
      const others = group.hooks.filter(
        (h) => !(isPlainObject(h) && typeof h.command === 'string' && PGX_CODEX_HOOK_RE.test(h.command)),
      );
      if (others.length === group.hooks.length) return [group];
      if (opts.remove) removed.push(event);
      if (others.length === 0 && opts.remove) return [];
      return [opts.remove ? { ...group, hooks: others } : group];
    });
    if (kept.length) next[event] = kept;
  }
  if (!opts.remove) {
    for (const e of CODEX_HOOK_EVENTS) {
      const want = {
        type: 'command',
        command: opts.portable ? portableCodexHookCommand(e.cli) : codexHookCommand(opts.launcher!, e.cli),
        timeout: CODEX_HOOK_TIMEOUT_S[e.cli],
      };
      const groups = (next[e.event] as unknown[] | undefined) ?? [];
      const mine = groups.find(
        (g) =>
          isPlainObject(g) &&
          Array.isArray(g.hooks) &&
          g.hooks.some(
            (h) =>
              isPlainObject(h) && typeof h.command === 'string' && PGX_CODEX_HOOK_RE.exec(h.command)?.[1] === e.cli,
          ),
      ) as JsonObject | undefined;
      if (!mine) {
        next[e.event] = [...groups, { ...(e.matcher ? { matcher: e.matcher } : {}), hooks: [want] }];
        added.push(e.event);
        continue;
      }
      const hs = mine.hooks as unknown[];
      const at = hs.findIndex(
        (h) => isPlainObject(h) && typeof h.command === 'string' && PGX_CODEX_HOOK_RE.exec(h.command)?.[1] === e.cli,
      );
      const same = JSON.stringify(hs[at]) === JSON.stringify(want) && (mine.matcher ?? undefined) === e.matcher;
      if (same) {
        unchanged.push(e.event);
      } else {
        hs[at] = want;
        if (e.matcher) mine.matcher = e.matcher;
        else delete mine.matcher;
        updated.push(e.event);
      }
    }
  }
  const out = { ...root, hooks: next };
  if (opts.remove && Object.keys(next).length === 0) delete (out as JsonObject).hooks;
  const changed = opts.remove ? removed.length > 0 : added.length + updated.length > 0;
  return {
    text: serializeSettings(out),
    changed,
    added,
    updated,
    unchanged,
    removed: [...new Set(removed)],
    after: handlersOf(next, opts.file),
    before,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The trust state in config.toml, edited as text so comments and the user's layout survive.

const tomlKey = (key: string) => JSON.stringify(key); // a TOML basic string: JSON's escapes are valid TOML
const stateHeader = (key: string) => `[hooks.state.${tomlKey(key)}]`;

function parseConfig(text: string | undefined, file: string): JsonObject {
  if (text === undefined || text.trim() === '') return {};
  try {
    return parseToml(text) as JsonObject;
  } catch (e) {
    throw new SettingsFileError(file, `it is not valid TOML (${(e as Error).message})`, { cause: e });
  }
}

/** The `[hooks.state."<key>"]` tables, by key. */
export function trustStateOf(text: string | undefined, file: string): Record<string, JsonObject> {
  const root = parseConfig(text, file);
  const hooks = isPlainObject(root.hooks) ? root.hooks : {};
  const state = isPlainObject(hooks.state) ? hooks.state : {};
  return Object.fromEntries(Object.entries(state).filter(([, v]) => isPlainObject(v))) as Record<string, JsonObject>;
}

/** Removes one `[hooks.state."<key>"]` table (its header and lines up to the next table), if written that way. */
function dropStateTable(text: string, key: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === stateHeader(key));
  if (start < 0) return text;
  let end = start + 1;
  while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
  while (end > start + 1 && lines[end - 1]!.trim() === '') end--;
  lines.splice(start, end - start);
  if (lines[start]?.trim() === '' && (start === 0 || lines[start - 1]!.trim() === '')) lines.splice(start, 1);
  return lines.join('\n');
}

function appendStateTable(text: string, key: string, hash: string): string {
  const body = text.replace(/\n*$/, '');
  return `${body}${body ? '\n\n' : ''}${stateHeader(key)}\ntrusted_hash = ${JSON.stringify(hash)}\n`;
}

export interface TrustPlan {
  text: string;
  changed: boolean;
  trusted: string[];
  untrusted: string[];
  /** Other hooks whose position (so their trust key) the change moved, with their trust moved along. */
  moved: string[];
}

/**
 * The config.toml text that trusts pgx's hooks as they are after `hooks` (and forgets pgx's old entries), and keeps
 * the trust of other hooks whose key the change moved.
 */
export function planCodexTrust(configText: string | undefined, hooks: CodexHooksPlan, file: string): TrustPlan {
  const state = trustStateOf(configText, file);
  let text = configText ?? '';
  const trusted: string[] = [];
  const untrusted: string[] = [];
  const moved: string[] = [];
  const afterKeys = new Set(hooks.after.map((h) => h.key));
  // pgx's old entries (a removed hook, a moved one, an old hash) go first.
  for (const h of hooks.before.filter((b) => b.cli)) {
    const now = hooks.after.find((a) => a.cli === h.cli && a.key === h.key && a.command === h.command);
    if (!now && state[h.key]) {
      text = dropStateTable(text, h.key);
      untrusted.push(h.key);
    }
  }
  // Another hook that moved: its trust follows it (only when it is still the same hook).
  const cleared = trustStateOf(text, file);
  for (const h of hooks.before.filter((b) => !b.cli)) {
    const now = hooks.after.find(
      (a) =>
        !a.cli &&
        a.event === h.event &&
        a.command === h.command &&
        a.matcher === h.matcher &&
        a.key !== h.key &&
        !hooks.before.some((b) => b.key === a.key && b.command === a.command),
    );
    const s = state[h.key];
    if (now && s && typeof s.trusted_hash === 'string' && !cleared[now.key]) {
      if (!afterKeys.has(h.key)) text = dropStateTable(text, h.key);
      text = appendStateTable(text, now.key, s.trusted_hash);
      moved.push(`${h.key} -> ${now.key}`);
    }
  }
  const nowState = trustStateOf(text, file);
  for (const h of hooks.after.filter((a) => a.cli)) {
    const hash = codexTrustHash(h.event, h.matcher, h.command, h.timeout);
    if (nowState[h.key]?.trusted_hash === hash) continue;
    if (nowState[h.key]) {
      const droppable = dropStateTable(text, h.key);
      if (droppable === text)
        throw new SettingsFileError(
          file,
          `the trust entry for ${h.key} is not written as its own [hooks.state."…"] table, so pgx cannot update it`,
        );
      text = droppable;
    }
    text = appendStateTable(text, h.key, hash);
    trusted.push(h.key);
  }
  parseConfig(text, file); // never write what Codex could not read
  return { text, changed: text !== (configText ?? ''), trusted, untrusted, moved };
}

/** Is the project trusted in the user's config (a project-layer hook runs only then)? */
export function projectTrusted(configText: string | undefined, file: string, projectDir: string): boolean {
  const root = parseConfig(configText, file);
  const projects = isPlainObject(root.projects) ? root.projects : {};
  const p = projects[projectDir];
  return isPlainObject(p) && p.trust_level === 'trusted';
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
