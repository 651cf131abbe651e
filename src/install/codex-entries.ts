// pgx's Codex hook entries in a hooks.json, planned as text: the command each hook runs (this machine's launcher, or
// the portable form a committed project file needs) and the merge (planCodexHooks), which appends pgx's groups so no
// other hook's position, its trust key, shifts. The trust: codex-trust.ts; the fs edges: codex.ts.
import {
  isPlainObject,
  parseSettingsText,
  serializeSettings,
  SettingsFileError,
  type JsonObject,
} from '../lib/settings-file.js';
import { checkLauncher, PORTABLE_LAUNCHER } from './hook-events.js';
import { shellQuote } from '../lib/shell.js';
import { CODEX_HOOK_TIMEOUT_S, type CodexHookCli } from '../hooks/codex/timeouts.js';
import { missingPgxFallbacks } from '../hooks/claude/settings-entries.js';
import { CODEX_RESOURCE_TOOLS } from '../hooks/shared/mcp-guard.js';

/** PreToolUse's matcher: a regex over the tool name (an anchored one was measured to match exactly on 0.171.0). */
export const CODEX_PRE_TOOL_USE_MATCHER = `^(Bash|mcp__.*|${CODEX_RESOURCE_TOOLS.join('|')})$`;

/** The hooks pgx installs for Codex. There is no SessionEnd in Codex (decisions/204-codex-session-end.md). */
export const CODEX_HOOK_EVENTS: ReadonlyArray<{ event: string; snake: string; cli: CodexHookCli; matcher?: string }> =
  Object.freeze([
    { event: 'SessionStart', snake: 'session_start', cli: 'session-start' },
    { event: 'UserPromptSubmit', snake: 'user_prompt_submit', cli: 'user-prompt-submit' },
    // The shell tool (Codex shows it to hooks as "Bash") is routed; MCP tools and resource reads are judged
    // (hooks/shared/mcp-guard.ts, decision 530). Anchored: other tools start no hook process.
    { event: 'PreToolUse', snake: 'pre_tool_use', cli: 'pre-tool-use', matcher: CODEX_PRE_TOOL_USE_MATCHER },
    { event: 'SubagentStart', snake: 'subagent_start', cli: 'subagent-start' },
    { event: 'SubagentStop', snake: 'subagent_stop', cli: 'subagent-stop' },
  ]);

/** Codex's names of its hook events (snake_case), in trust keys and trust hashes. */
export const SNAKE: Record<string, string> = Object.fromEntries(
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
