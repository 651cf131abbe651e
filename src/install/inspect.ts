// Reading an install back, for `pgx agent doctor`: which entries, which launcher, does it still exist, allow rule.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isPlainObject, parseSettingsText, readSettingsFile, type JsonObject } from '../lib/settings-file.js';
import {
  EVENT_BY_CLI,
  findPgxHandlers,
  HOOK_EVENTS,
  OLD_EVENTS,
  PGX_HOOK_COMMAND_RE,
  PORTABLE_HOOK_COMMAND_RE,
  PORTABLE_LAUNCHER,
} from './hook-events.js';
import { findRules, type RulesFound } from './permission-rules.js';

export interface InstallInspection {
  path: string;
  exists: boolean;
  entries: Record<
    string,
    {
      present: boolean;
      command?: string;
      launcher?: string;
      launcherExists?: boolean;
      failsOpen?: boolean;
      transport?: 'command' | 'http';
      url?: string;
    }
  >;
  /** Events holding a keeper of the HTTP broker (--transport http). */
  keepers: string[];
  /** pgx's PreToolUse rewriters in this file (command or HTTP): more than one across the files that merge races. */
  rewriters: number;
  /** `env.PGX_HOOK_SECRET` is set in this file (what pgx's HTTP entries send). */
  hasSecret: boolean;
  /** How many of the six events have a pgx entry (0..6). */
  count: number;
  /** Exactly the four events of older pgx versions are present (SubagentStart/SubagentStop missing). */
  olderPartial: boolean;
  /** Distinct launchers of every pgx entry in the file (more than one means a stale or mixed install). */
  launcherPaths: string[];
  /** pgx's rules (and Bash(exit)) found in permissions.allow. */
  rules: RulesFound;
  parseError?: string;
}

export function inspectClaudeInstall(settingsPath: string): InstallInspection {
  const entries: InstallInspection['entries'] = {};
  for (const { event } of HOOK_EVENTS) entries[event] = { present: false };
  const result: InstallInspection = {
    path: settingsPath,
    exists: false,
    entries,
    count: 0,
    olderPartial: false,
    launcherPaths: [],
    rules: { blanket: [], wrapper: [], exit: false },
    keepers: [],
    rewriters: 0,
    hasSecret: false,
  };
  let text: string | undefined;
  let root: JsonObject;
  try {
    text = readSettingsFile(settingsPath);
    result.exists = text !== undefined;
    root = parseSettingsText(text, settingsPath);
  } catch (e) {
    result.exists = fs.existsSync(settingsPath);
    result.parseError = e instanceof Error ? e.message : String(e);
    return result;
  }
  const hooks = isPlainObject(root.hooks) ? root.hooks : undefined;
  if (root.hooks !== undefined && !hooks) result.parseError = `${settingsPath}: "hooks" is not a JSON object`;

  const launchers: string[] = [];
  result.hasSecret =
    isPlainObject(root.env) && typeof root.env.PGX_HOOK_SECRET === 'string' && root.env.PGX_HOOK_SECRET !== '';
  for (const loc of hooks ? findPgxHandlers(hooks) : []) {
    if (loc.kind === 'keeper') {
      if (!result.keepers.includes(loc.event)) result.keepers.push(loc.event);
      continue;
    }
    const spec0 = EVENT_BY_CLI.get(loc.cli)!;
    if (spec0.event === 'PreToolUse' && loc.event === 'PreToolUse') result.rewriters++;
    if (loc.kind === 'http') {
      const h = loc.handler as { url: string; onFailure?: unknown };
      if (loc.event !== spec0.event || entries[spec0.event]!.present) continue;
      const failsOpen = spec0.onFailure !== undefined && h.onFailure !== spec0.onFailure;
      entries[spec0.event] = { present: true, transport: 'http', url: h.url, ...(failsOpen ? { failsOpen } : {}) };
      continue;
    }
    const command = (loc.handler as { command: string }).command;
    const launcher = launcherOf(command);
    if (!launchers.includes(launcher)) launchers.push(launcher);
    const spec = EVENT_BY_CLI.get(loc.cli)!;
    if (loc.event !== spec.event || entries[spec.event]!.present) continue;
    // An entry pgx writes with onFailure "block" that lacks it (an older pgx wrote it) lets a failed hook pass.
    const failsOpen =
      spec.onFailure !== undefined && (loc.handler as { onFailure?: unknown }).onFailure !== spec.onFailure;
    entries[spec.event] = {
      present: true,
      transport: 'command',
      command,
      launcher,
      launcherExists: launcherExists(launcher),
      ...(failsOpen ? { failsOpen } : {}),
    };
  }
  result.launcherPaths = launchers;
  result.count = HOOK_EVENTS.filter((h) => entries[h.event]!.present).length;
  result.olderPartial = result.count === OLD_EVENTS.length && OLD_EVENTS.every((e) => entries[e]!.present);

  result.rules = findRules(root);
  return result;
}

/** The launcher of a pgx hook command, unquoted when it is one shell word; the raw prefix otherwise. */
export function launcherOf(command: string): string {
  if (PORTABLE_HOOK_COMMAND_RE.test(command)) return PORTABLE_LAUNCHER; // found on PATH when the hook runs
  const m = PGX_HOOK_COMMAND_RE.exec(command);
  const prefix = (m ? command.slice(0, m.index) : command).trim();
  const words = shellWords(prefix);
  return words && words.length === 1 ? words[0]! : prefix;
}

/**
 * Split a string into words the way sh would for plain quoting (single quotes, double quotes, backslashes).
 * Returns undefined for anything it does not model (unterminated quotes, `$`/backquote expansions).
 */
function shellWords(s: string): string[] | undefined {
  const words: string[] = [];
  let cur: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1) return undefined;
      cur = (cur ?? '') + s.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let buf = '';
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === '$' || s[j] === '`') return undefined;
        if (s[j] === '\\' && j + 1 < s.length && '$`"\\\n'.includes(s[j + 1]!)) j++;
        buf += s[j];
      }
      if (j >= s.length) return undefined;
      cur = (cur ?? '') + buf;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= s.length) return undefined;
      cur = (cur ?? '') + s[++i];
    } else if (c === '$' || c === '`') {
      return undefined;
    } else if (/\s/.test(c)) {
      if (cur !== null) words.push(cur);
      cur = null;
    } else {
      cur = (cur ?? '') + c;
    }
  }
  if (cur !== null) words.push(cur);
  return words;
}

/** Does the launcher exist? undefined when that cannot be told from here (variables, relative paths, ~). */
export function launcherExists(launcher: string): boolean | undefined {
  if (launcher.startsWith('~') || /[$`]/.test(launcher)) return undefined;
  if (path.isAbsolute(launcher)) return fs.existsSync(launcher);
  if (!launcher.includes('/')) {
    // A bare command name: look it up on PATH, as the shell running the hook would.
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
      if (dir && fs.existsSync(path.join(dir, launcher))) return true;
    }
    return false;
  }
  return undefined;
}
