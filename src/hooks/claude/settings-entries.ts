// pgx's entries in a Claude Code hooks object, made from the event table (events.ts) and recognised again: the one
// place both the installer's settings entries (install/claude-entries.ts) and the plugin's hooks/hooks.json
// (scripts/plugins-sync.mjs, pluginHooksText) are produced from, and what the hook runner (run.ts), the installer and
// doctor read back (docs/pgx/local-dev/decisions/311-one-event-table.md). Here beside the table, so that the hooks
// need nothing of install/.
import { isPlainObject, serializeSettings, type JsonObject } from '../../lib/settings-file.js';
import { shellQuote } from '../../lib/shell.js';
import { HOOK_EVENTS, type HookEntry, type HookEvent } from './events.js';

/** Recognises a pgx hook command (any launcher, quoted or not). Group 1 is the cli name. */
const CLI_NAMES = HOOK_EVENTS.map((h) => h.cli).join('|');
export const PGX_HOOK_COMMAND_RE = new RegExp(` agent hook (${CLI_NAMES})\\s*$`);

/**
 * The command name a project-scope hook finds pgx by, on PATH: `.claude/settings.json` is committed, so it names no
 * path of one user's machine (docs/pgx/local-dev/decisions/111-portable-project-install.md).
 */
export const PORTABLE_LAUNCHER = 'pgx';

const PORTABLE_HEAD = `command -v ${PORTABLE_LAUNCHER} >/dev/null 2>&1 && exec ${PORTABLE_LAUNCHER} agent hook `;

/** A portable hook command (whatever its fallback says). Group 1 is the cli name. */
export const PORTABLE_HOOK_COMMAND_RE = new RegExp(
  `^command -v pgx >/dev/null 2>&1 && exec pgx agent hook (${CLI_NAMES}); `,
);

/**
 * What each hook does on a machine where pgx is not on PATH (a teammate's clone): plain sh, no pgx. A subagent's
 * Bash is refused (exit 2 blocks; the reason reaches the model), so it never runs against whatever database it
 * names; the parent's commands go on, and SessionStart says why in a visible line. `grep` failing to run counts as
 * a subagent (refused: stricter, never weaker). JSON with `"agent_id"` as a key comes only from inside a subagent;
 * the same text inside a command string is escaped (`\"agent_id\"`), except at a string's very end, where a parent's
 * command is then refused too (stricter).
 */
const MISSING = 'pgx is not on PATH on this machine';
/**
 * The fallback texts, for a runtime whose shell tool is called `tool` ("Bash" in Claude Code, "shell" in Codex,
 * whose install uses them too: install/codex-entries.ts). Codex hashes the command text into its trust, so these bytes are
 * part of every recorded trusted_hash.
 */
export function missingPgxFallbacks(tool: string): Record<Exclude<HookEvent, 'session-end'>, string> {
  const refusedNote = `${MISSING}: your ${tool} commands will be refused. Say so in your answer; do not work around it.`;
  return {
    'session-start': `echo '${JSON.stringify({
      systemMessage:
        `${MISSING}: every subagent ${tool} command is refused until it is installed (see the project README; ` +
        `then start a new session). Your own commands run as usual.`,
      hookSpecificOutput: {
        hookEventName: 'SessionStart',
        additionalContext:
          `${MISSING}: subagents cannot run ${tool} commands (refused, so that they never share one database); ` +
          `the commands of the main session run as usual.`,
      },
    })}'`,
    'user-prompt-submit': 'exit 0',
    'pre-tool-use':
      `grep -q '"agent_id"'; [ $? = 1 ] && exit 0; echo "${MISSING}: this subagent ${tool} command is refused, ` +
      `so that it cannot reach a database shared with other agents. Install pgx (see the project README), then ` +
      `start a new session." >&2; exit 2`,
    'subagent-start': `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: refusedNote } })}'`,
    'subagent-stop': 'exit 0',
  };
}
const FALLBACK: Record<HookEvent, string> = { ...missingPgxFallbacks('Bash'), 'session-end': 'exit 0' };

/** `command -v pgx … && exec pgx agent hook <cli>; <fallback>`: pgx on PATH, else the fallback above. */
export function portableHookCommand(cli: HookEvent): string {
  return `${PORTABLE_HEAD}${cli}; ${FALLBACK[cli]}`;
}

export function checkLauncher(launcher: string): void {
  if (typeof launcher !== 'string' || launcher === '') throw new TypeError('launcher must be a non-empty path');
  if (/[\0\n\r]/.test(launcher)) throw new TypeError('launcher must not contain NUL or line breaks');
}

/** `'<launcher>' agent hook <cli>`. */
export function hookCommand(launcher: string, cli: string): string {
  checkLauncher(launcher);
  return `${shellQuote(launcher)} agent hook ${cli}`;
}

/** One pgx handler, keys in the order Claude Code's own examples write them. */
export interface HookHandler {
  type: 'command';
  command: string;
  timeout: number;
  onFailure?: HookEntry['onFailure'];
}

/** The handler for one row of the table, running `command`: its timeout, and `onFailure` where the row has one. */
export function hookHandler(entry: HookEntry, command: string): HookHandler {
  const handler: HookHandler = { type: 'command', command, timeout: entry.timeout };
  if (entry.onFailure) handler.onFailure = entry.onFailure;
  return handler;
}

/** A matcher group of its own for one row: `matcher` first (where the row has one), then the one handler. */
export function hookGroup(entry: HookEntry, command: string): JsonObject {
  const group: JsonObject = entry.matcher !== undefined ? { matcher: entry.matcher } : {};
  group.hooks = [hookHandler(entry, command)];
  return group;
}

/**
 * The plugin's launcher as its hooks.json names it: Claude Code sets CLAUDE_PLUGIN_ROOT for the command's shell, so
 * it is double-quoted (expanded there), not shell-quoted like an installed launcher.
 */
const PLUGIN_LAUNCHER = '"${CLAUDE_PLUGIN_ROOT}/bin/pgx.js"';
const PLUGIN_DESCRIPTION =
  'pgx: every subagent gets its own PostgreSQL branch (projects without a .pgx.toml are left alone)';

/** plugins/claude/pgx/hooks/hooks.json: the six rows, each a group of its own calling the plugin's launcher. */
export function pluginHooksText(): string {
  const hooks: JsonObject = {};
  for (const e of HOOK_EVENTS) hooks[e.event] = [hookGroup(e, `${PLUGIN_LAUNCHER} agent hook ${e.cli}`)];
  return serializeSettings({ description: PLUGIN_DESCRIPTION, hooks });
}

// ---------------------------------------------------------------------------------------------------------------
// The retired HTTP transport (decisions 223, 444): its entries and keepers are only recognised, for install to move
// them back to command hooks, uninstall to remove them and the doctor to flag them.

/** An HTTP entry of pgx's (Claude Code POSTed to the HTTP broker). Group 1 is the cli name. */
export const PGX_HOOK_URL_RE = new RegExp(`^http://127\\.0\\.0\\.1:[0-9]{1,5}/hook/(${CLI_NAMES})(\\?.*)?$`);

/** The HTTP broker's keeper, by its first words, naming the row it was written for. Group 1 is the cli name. */
export const KEEPER_COMMAND_RE = new RegExp(`^: pgx http keeper for (${CLI_NAMES});`);

/** What kind of pgx handler it is: a hook command, an HTTP entry, or the HTTP broker's keeper. */
export type PgxHandlerKind = 'command' | 'http' | 'keeper';

/** The cli name (and kind) if `handler` is one of pgx's. */
export function pgxHandlerOf(handler: unknown): { cli: HookEvent; kind: PgxHandlerKind } | undefined {
  if (!isPlainObject(handler)) return undefined;
  if (handler.type === 'http') {
    const m = typeof handler.url === 'string' ? PGX_HOOK_URL_RE.exec(handler.url) : null;
    return m ? { cli: m[1] as HookEvent, kind: 'http' } : undefined;
  }
  if (typeof handler.command !== 'string') return undefined;
  const k = KEEPER_COMMAND_RE.exec(handler.command);
  if (k) return { cli: k[1] as HookEvent, kind: 'keeper' };
  const m = PGX_HOOK_COMMAND_RE.exec(handler.command) ?? PORTABLE_HOOK_COMMAND_RE.exec(handler.command);
  return m ? { cli: m[1] as HookEvent, kind: 'command' } : undefined;
}

/** The cli name if `handler` is a pgx hook handler (a command or an HTTP entry; not the keeper). */
export function pgxCliOf(handler: unknown): HookEvent | undefined {
  const h = pgxHandlerOf(handler);
  return h && h.kind !== 'keeper' ? h.cli : undefined;
}

export interface Located {
  event: string;
  group: JsonObject;
  handler: unknown;
  cli: HookEvent;
  kind: PgxHandlerKind;
}

/** Every pgx handler in the hooks object (commands, HTTP entries, keepers), in document order. Groups/handlers of unexpected shape are skipped. */
export function findPgxHandlers(hooks: JsonObject): Located[] {
  const out: Located[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isPlainObject(group) || !Array.isArray(group.hooks)) continue;
      for (const handler of group.hooks) {
        const found = pgxHandlerOf(handler);
        if (found) out.push({ event, group, handler, ...found });
      }
    }
  }
  return out;
}
