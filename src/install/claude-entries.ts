// pgx's Claude Code hook entries in one settings file, planned as text: install (planInstall) and uninstall
// (planUninstall). The entries themselves: hooks/claude/settings-entries.ts, made from the event table; the rules file
// beside a portable one: claude-local-rules.ts; the fs edges: claude.ts; reading back: inspect.ts.
//
// Settings shape (code.claude.com/docs/en/hooks):
//   "hooks": { <Event>: [ { "matcher"?: string, "hooks": [ { "type": "command", "command": "...", "timeout": N } ] } ] }
// Hook entries from user, project and local settings MERGE (they are not overridden), and an identical handler
// present in several files runs once. So installing into any one scope is enough.
//
// A pgx entry is any command handler whose command ends in ` agent hook <cli>` (whatever the launcher path, quoted
// or not). Everything else in the file is left exactly as it was: other top-level keys, other events, other
// handlers (even in the same matcher group), key order. The planners are pure; fs is touched only by
// installClaude / uninstallClaude (claude.ts) and inspectClaudeInstall (inspect.ts).

import {
  SettingsFileError,
  isPlainObject,
  parseSettingsText,
  serializeSettings,
  type JsonObject,
} from '../lib/settings-file.js';
import {
  checkLauncher,
  EVENT_BY_CLI,
  EVENT_BY_NAME,
  findPgxHandlers,
  hookCommand,
  HOOK_EVENTS,
  hookHandler,
  portableHookCommand,
  type HookEntry,
  type Located,
} from './hook-events.js';
import { planRules, wantedRule, type RulesPlan } from './permission-rules.js';

export interface InstallPlan {
  text: string;
  changed: boolean;
  added: string[];
  updated: string[];
  unchanged: string[];
  /** What happened to pgx's permission rules (install/permission-rules.ts). */
  rules: RulesPlan;
  /** Why no wrapper rule could be written (a path Claude Code's rule syntax cannot hold), if so. */
  rulesSkipped?: string;
  /**
   * What an install of the retired HTTP transport had put here and this install took out (decision 444): the events
   * whose HTTP entry or keeper went, and `env.PGX_HOOK_SECRET`. Absent when there was none.
   */
  httpRemoved?: string[];
}

export interface UninstallPlan {
  text: string;
  changed: boolean;
  removed: string[];
  rulesRemoved: string[];
}

export interface PlanInstallOptions {
  /** The absolute launcher: in the hook commands (unless `portable`) and in the wrapper rule. */
  launcher: string;
  /**
   * Hook commands that find pgx on PATH, and no permission rules in this file (pgx's are removed from it): the
   * project's shared `.claude/settings.json`. The rules, which name this machine's launcher, go to
   * `.claude/settings.local.json` (planRulesFile).
   */
  portable?: boolean;
  /**
   * The project whose routed commands the wrapper rule covers; undefined for the user's own settings file, which
   * serves every project (`--cwd *`).
   */
  projectDir?: string;
  /** false: write no wrapper rule (routed commands then ask); pgx's old blanket rule is removed either way. */
  rules?: boolean;
  /** Only used to name the file in errors. */
  path?: string;
}

type Slot = 'main' | 'keeper';

interface Wanted {
  spec: HookEntry;
  slot: Slot;
  handler: unknown;
}

/**
 * The handlers this file should hold: one command entry per event. A keeper or an HTTP entry of the retired HTTP
 * transport (decision 444) is wanted nowhere: an HTTP entry is the event's main handler, so the command entry takes
 * its very place (one PreToolUse rewriter at every moment), and a keeper goes.
 */
function wantedEntries(opts: PlanInstallOptions): Map<string, Wanted> {
  const wanted = new Map<string, Wanted>();
  for (const spec of HOOK_EVENTS)
    wanted.set(`${spec.event}:main`, { spec, slot: 'main', handler: hookHandler(spec, commandFor(opts, spec)) });
  return wanted;
}

/** The command this install's handler for `h` runs: the launcher, or pgx on PATH (portable). */
function commandFor(opts: Pick<PlanInstallOptions, 'launcher' | 'portable'>, h: HookEntry): string {
  return opts.portable ? portableHookCommand(h.cli) : hookCommand(opts.launcher, h.cli);
}

function matcherOk(group: JsonObject, want: string | undefined): boolean {
  const m = group.matcher;
  if (want !== undefined) return m === want;
  return m === undefined || m === '' || m === '*';
}

/**
 * Remove the given handlers. A matcher group that the removal emptied is dropped; so is an event array that the
 * removal emptied (unless `keepEvents` has it). Returns the events whose arrays changed.
 */
export function removeHandlers(hooks: JsonObject, doomed: Set<unknown>, keepEvents: ReadonlySet<string>): Set<string> {
  const touched = new Set<string>();
  if (doomed.size === 0) return touched;
  for (const event of Object.keys(hooks)) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    let eventChanged = false;
    const keptGroups: unknown[] = [];
    for (const group of groups) {
      if (isPlainObject(group) && Array.isArray(group.hooks) && group.hooks.some((h) => doomed.has(h))) {
        eventChanged = true;
        const rest = group.hooks.filter((h) => !doomed.has(h));
        if (rest.length === 0) continue; // pgx's removal emptied this group
        group.hooks = rest;
      }
      keptGroups.push(group);
    }
    if (!eventChanged) continue;
    touched.add(event);
    if (keptGroups.length === 0 && !keepEvents.has(event)) delete hooks[event];
    else hooks[event] = keptGroups;
  }
  return touched;
}

export function getHooksObject(root: JsonObject, label: string): JsonObject | undefined {
  if (!('hooks' in root) || root.hooks === undefined) return undefined;
  if (!isPlainObject(root.hooks)) throw new SettingsFileError(label, '"hooks" is not a JSON object');
  return root.hooks;
}

function checkEventArrays(hooks: JsonObject, label: string): void {
  for (const { event } of HOOK_EVENTS) {
    if (event in hooks && !Array.isArray(hooks[event])) {
      throw new SettingsFileError(label, `"hooks.${event}" is not an array`);
    }
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function planInstall(existing: string | undefined, opts: PlanInstallOptions): InstallPlan {
  const label = opts.path ?? 'settings file';
  checkLauncher(opts.launcher);
  const root = parseSettingsText(existing, label);
  const hadHooks = getHooksObject(root, label);
  const hooks: JsonObject = hadHooks ?? {};
  checkEventArrays(hooks, label);
  let changed = false;
  const wanted = wantedEntries(opts);

  // 1. Pick a keeper per (event, slot) (the first pgx entry for it in its own event array); everything else
  //    pgx-owned that this file manages (duplicates, entries filed under the wrong event, entries of the other
  //    transport this file no longer holds) is removed.
  const found = findPgxHandlers(hooks);
  const keeper = new Map<string, Located>();
  const doomed = new Set<unknown>();
  for (const loc of found) {
    const spec = EVENT_BY_CLI.get(loc.cli)!;
    const slot: Slot = loc.kind === 'keeper' ? 'keeper' : 'main';
    const key = `${spec.event}:${slot}`;
    if (loc.event === spec.event && wanted.has(key) && !keeper.has(key)) keeper.set(key, loc);
    else doomed.add(loc.handler);
  }

  // 2. A keeper in a group with the wrong matcher: fix the matcher in place if pgx owns the group alone,
  //    otherwise take the entry out of the user's group and give it a group of its own (step 4).
  const updated = new Set<string>();
  for (const [key, loc] of [...keeper]) {
    const spec = wanted.get(key)!.spec;
    if (matcherOk(loc.group, spec.matcher)) continue;
    const others = (loc.group.hooks as unknown[]).filter((h) => h !== loc.handler && !doomed.has(h));
    if (others.length === 0) {
      setMatcher(loc.group, spec.matcher);
      changed = true;
    } else {
      doomed.add(loc.handler);
      keeper.delete(key);
    }
    updated.add(spec.event);
  }

  const ourEvents = new Set<string>([...wanted.values()].map((w) => w.spec.event));
  for (const e of removeHandlers(hooks, doomed, ourEvents)) {
    changed = true;
    updated.add(e); // a duplicate or stray pgx entry was removed from this event (may be a non-pgx event)
  }

  // 3. Keepers: replace with the canonical handler, in place, if anything differs (launcher moved, timeout, an HTTP
  //    entry of the retired transport: the command entry takes its very place, so there is one rewriter at every moment).
  const added: string[] = [];
  for (const [key, loc] of keeper) {
    const want = wanted.get(key)!;
    if (sameJson(loc.handler, want.handler)) continue;
    const arr = loc.group.hooks as unknown[];
    arr[arr.indexOf(loc.handler)] = want.handler;
    updated.add(want.spec.event);
    changed = true;
  }

  // 4. Missing ones get their own matcher group, appended to the event's array.
  for (const [key, want] of wanted) {
    if (keeper.has(key)) continue;
    const group: JsonObject = want.spec.matcher !== undefined ? { matcher: want.spec.matcher } : {};
    group.hooks = [want.handler];
    const arr = (hooks[want.spec.event] as unknown[] | undefined) ?? [];
    arr.push(group);
    hooks[want.spec.event] = arr;
    if (!updated.has(want.spec.event) && !added.includes(want.spec.event)) added.push(want.spec.event);
    changed = true;
  }
  if (!hadHooks && Object.keys(hooks).length > 0) root.hooks = hooks;
  if (hadHooks && Object.keys(hooks).length === 0) delete root.hooks; // pgx's removal emptied it (a shared file)

  // 5. The retired HTTP transport's secret goes where pgx's HTTP entries were (a PGX_HOOK_SECRET beside none is the
  //    user's own), and the install says what it took out.
  const http = found.filter((l) => l.kind !== 'command');
  const httpRemoved = [...new Set(http.map((l) => l.event))];
  if (http.length && dropSecretEnv(root, SECRET_VAR_NAME)) {
    httpRemoved.push('env.' + SECRET_VAR_NAME);
    changed = true;
  }

  // 6. The permission rules: the narrow ones, never the old blanket one (a portable file gets none: planRulesFile).
  const { wanted: wantedRules, rulesSkipped } = wantedRule(opts.portable ? { ...opts, rules: false } : opts);
  const rules = planRules(root, wantedRules, label);
  changed ||= rules.changed;

  const unchanged = HOOK_EVENTS.map((h) => h.event as string).filter((e) => !updated.has(e) && !added.includes(e));
  // The events in HOOK_EVENTS order, then any other event a stray pgx entry was removed from.
  const updatedList = [
    ...HOOK_EVENTS.map((h) => h.event as string).filter((e) => updated.has(e)),
    ...[...updated].filter((e) => !EVENT_BY_NAME.has(e)),
  ];
  return {
    text: changed ? serializeSettings(root) : (existing ?? serializeSettings(root)),
    changed: changed || existing === undefined,
    added,
    updated: updatedList,
    unchanged,
    rules,
    ...(rulesSkipped ? { rulesSkipped } : {}),
    ...(httpRemoved.length ? { httpRemoved } : {}),
  };
}

/** The variable the retired HTTP transport's entries read their secret from (decision 221): taken out with them. */
export const SECRET_VAR_NAME = 'PGX_HOOK_SECRET';

/** pgx's secret out of `env` (and `env` itself, when that emptied it): only called where pgx's HTTP entries were. */
export function dropSecretEnv(root: JsonObject, name: string): boolean {
  if (!isPlainObject(root.env) || !(name in root.env)) return false;
  delete root.env[name];
  if (Object.keys(root.env).length === 0) delete root.env;
  return true;
}

/** Set or remove a group's matcher; a new `matcher` key goes first, as Claude Code's own examples write it. */
function setMatcher(group: JsonObject, matcher: string | undefined): void {
  if (matcher === undefined) {
    delete group.matcher;
    return;
  }
  if ('matcher' in group) {
    group.matcher = matcher;
    return;
  }
  const entries = Object.entries(group);
  for (const k of Object.keys(group)) delete group[k];
  group.matcher = matcher;
  // defineProperty, not assignment: a JSON key named "__proto__" must stay a plain key.
  for (const [k, v] of entries) {
    Object.defineProperty(group, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
}

export function planUninstall(existing: string | undefined, opts: { path?: string } = {}): UninstallPlan {
  const label = opts.path ?? 'settings file';
  if (existing === undefined) return { text: '', changed: false, removed: [], rulesRemoved: [] };
  const root = parseSettingsText(existing, label);
  const hooks = getHooksObject(root, label);
  let changed = false;
  const removed: string[] = [];
  if (hooks) {
    const found = findPgxHandlers(hooks);
    const touched = removeHandlers(hooks, new Set(found.map((l) => l.handler)), new Set());
    removed.push(...new Set(found.map((l) => l.event)));
    if (touched.size > 0) {
      changed = true;
      if (Object.keys(hooks).length === 0) delete root.hooks; // pgx's removal emptied it
    }
    // The secret goes with the HTTP entries pgx wrote it for; a PGX_HOOK_SECRET beside none is the user's own.
    if (found.some((l) => l.kind !== 'command') && dropSecretEnv(root, SECRET_VAR_NAME)) {
      changed = true;
      removed.push('env.' + SECRET_VAR_NAME);
    }
  }
  const rules = planRules(root, undefined, label);
  changed ||= rules.changed;
  return { text: changed ? serializeSettings(root) : existing, changed, removed, rulesRemoved: rules.removed };
}
