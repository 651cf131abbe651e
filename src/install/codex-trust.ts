// The trust Codex records for pgx's hooks in the user's config.toml (docs/pgx/local-dev/decisions/
// 201-codex-install-and-trust.md): the hash of each hook, and the `[hooks.state."…"]` tables, planned as text.
import { createHash } from 'node:crypto';
import { parse as parseToml } from 'smol-toml';
import { isPlainObject, SettingsFileError, type JsonObject } from '../lib/settings-file.js';
import { SNAKE, type CodexHooksPlan } from './codex-entries.js';

// Codex runs a non-managed hook only once it is trusted: `[hooks.state."<file>:<event>:<group>:<handler>"]
// trusted_hash = "sha256:…"` in $CODEX_HOME/config.toml, where the hash is SHA-256 over the compact JSON of the
// hook's normalised identity, keys sorted, unset fields omitted:
//   {"event_name":"pre_tool_use","hooks":[{"async":false,"command":"…","timeout":60,"type":"command"}],"matcher":"Bash"}
// Measured against `codex app-server`'s hooks/list (its currentHash) on 0.171.0; the e2e test checks the real binary
// runs hooks pgx trusted this way. The key names the hook's position, so pgx appends its own groups (never shifts
// another hook's position on install) and, on uninstall, moves the trust of any hook its removal shifted.

/** Codex's default timeout for a command hook without one (seconds): part of the trust hash. */
const CODEX_DEFAULT_TIMEOUT_S = 600;

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
