// Install / uninstall pgx's Claude Code hooks in a settings file (the entries: hook-events.ts; reading back: inspect.ts).
//
// Settings shape (code.claude.com/docs/en/hooks):
//   "hooks": { <Event>: [ { "matcher"?: string, "hooks": [ { "type": "command", "command": "...", "timeout": N } ] } ] }
// Hook entries from user, project and local settings MERGE (they are not overridden), and an identical handler
// present in several files runs once. So installing into any one scope is enough.
//
// A pgx entry is any command handler whose command ends in ` agent hook <cli>` (whatever the launcher path, quoted
// or not). Everything else in the file is left exactly as it was: other top-level keys, other events, other
// handlers (even in the same matcher group), key order. The planners are pure; fs is touched only by
// installClaude / uninstallClaude / inspectClaudeInstall.

import {
  SettingsFileError,
  isPlainObject,
  parseSettingsText,
  readSettingsFile,
  serializeSettings,
  writeFileAtomic,
  type JsonObject,
} from './settings-file.js';

export { SettingsFileError } from './settings-file.js';

export * from './hook-events.js';
export * from './inspect.js';
import { checkLauncher, EVENT_BY_CLI, EVENT_BY_NAME, findPgxHandlers, hookCommand, HOOK_EVENTS, type HookEventName, type Located } from './hook-events.js';
import { planRules, wrapperRuleFor, type RulesPlan } from './permission-rules.js';

export * from './permission-rules.js';

// ---------------------------------------------------------------------------------------------------------------
// Planning (pure)

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
}

export interface UninstallPlan {
  text: string;
  changed: boolean;
  removed: string[];
  rulesRemoved: string[];
}

export interface PlanInstallOptions {
  launcher: string;
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

interface Handler {
  type: 'command';
  command: string;
  timeout: number;
}

function canonicalHandler(launcher: string, h: (typeof HOOK_EVENTS)[number]): Handler {
  return { type: 'command', command: hookCommand(launcher, h.cli), timeout: h.timeout };
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
function removeHandlers(hooks: JsonObject, doomed: Set<unknown>, keepEvents: ReadonlySet<string>): Set<string> {
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

function getHooksObject(root: JsonObject, label: string): JsonObject | undefined {
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

  // 1. Pick a keeper per event (the first pgx entry for it in its own event array); everything else pgx-owned
  //    (duplicates, entries filed under the wrong event) is removed.
  const keeper = new Map<HookEventName, Located>();
  const doomed = new Set<unknown>();
  for (const loc of findPgxHandlers(hooks)) {
    const spec = EVENT_BY_CLI.get(loc.cli)!;
    if (loc.event === spec.event && !keeper.has(spec.event)) keeper.set(spec.event, loc);
    else doomed.add(loc.handler);
  }

  // 2. A keeper in a group with the wrong matcher: fix the matcher in place if pgx owns the group alone,
  //    otherwise take the entry out of the user's group and give it a group of its own (step 4).
  const updated = new Set<string>();
  for (const [event, loc] of [...keeper]) {
    const spec = EVENT_BY_NAME.get(event)!;
    if (matcherOk(loc.group, spec.matcher)) continue;
    const others = (loc.group.hooks as unknown[]).filter((h) => h !== loc.handler && !doomed.has(h));
    if (others.length === 0) {
      setMatcher(loc.group, spec.matcher);
      changed = true;
    } else {
      doomed.add(loc.handler);
      keeper.delete(event);
    }
    updated.add(event);
  }

  const ourEvents = new Set<string>(HOOK_EVENTS.map((h) => h.event));
  for (const e of removeHandlers(hooks, doomed, ourEvents)) {
    changed = true;
    updated.add(e); // a duplicate or stray pgx entry was removed from this event (may be a non-pgx event)
  }

  // 3. Keepers: replace with the canonical handler, in place, if anything differs (launcher moved, timeout…).
  const added: string[] = [];
  for (const [event, loc] of keeper) {
    const want = canonicalHandler(opts.launcher, EVENT_BY_NAME.get(event)!);
    if (sameJson(loc.handler, want)) continue;
    const arr = loc.group.hooks as unknown[];
    arr[arr.indexOf(loc.handler)] = want;
    updated.add(event);
    changed = true;
  }

  // 4. Missing events get their own matcher group, appended to the event's array.
  for (const spec of HOOK_EVENTS) {
    if (keeper.has(spec.event)) continue;
    const group: JsonObject = spec.matcher !== undefined ? { matcher: spec.matcher } : {};
    group.hooks = [canonicalHandler(opts.launcher, spec)];
    const arr = (hooks[spec.event] as unknown[] | undefined) ?? [];
    arr.push(group);
    hooks[spec.event] = arr;
    if (!updated.has(spec.event)) added.push(spec.event);
    changed = true;
  }
  if (!hadHooks && Object.keys(hooks).length > 0) root.hooks = hooks;

  // 5. The permission rules: the narrow ones, never the old blanket one.
  const wanted = opts.rules === false ? undefined : wrapperRuleFor(opts.launcher, opts.projectDir);
  const rulesSkipped = opts.rules !== false && wanted === undefined ? `the launcher or project path contains "(", ")" or a line break, which a Claude Code permission rule cannot hold; routed commands will ask` : undefined;
  const rules = planRules(root, wanted, label);
  changed ||= rules.changed;

  const six: string[] = HOOK_EVENTS.map((h) => h.event);
  const unchanged = six.filter((e) => !updated.has(e) && !added.includes(e));
  // The six in HOOK_EVENTS order, then any other event a stray pgx entry was removed from.
  const updatedList = [...six.filter((e) => updated.has(e)), ...[...updated].filter((e) => !EVENT_BY_NAME.has(e))];
  return {
    text: changed ? serializeSettings(root) : (existing ?? serializeSettings(root)),
    changed: changed || existing === undefined,
    added,
    updated: updatedList,
    unchanged,
    rules,
    ...(rulesSkipped ? { rulesSkipped } : {}),
  };
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
  }
  const rules = planRules(root, undefined, label);
  changed ||= rules.changed;
  return { text: changed ? serializeSettings(root) : existing, changed, removed, rulesRemoved: rules.removed };
}

// ---------------------------------------------------------------------------------------------------------------
// fs edges

export function installClaude(opts: {
  settingsPath: string;
  launcher: string;
  projectDir?: string;
  rules?: boolean;
  dryRun?: boolean;
}): InstallPlan & { path: string; dryRun: boolean } {
  const existing = readSettingsFile(opts.settingsPath);
  const plan = planInstall(existing, { launcher: opts.launcher, projectDir: opts.projectDir, rules: opts.rules, path: opts.settingsPath });
  const dryRun = opts.dryRun === true;
  if (plan.changed && !dryRun && plan.text !== existing) writeFileAtomic(opts.settingsPath, plan.text);
  return { ...plan, path: opts.settingsPath, dryRun };
}

export function uninstallClaude(opts: { settingsPath: string; dryRun?: boolean }): UninstallPlan & {
  path: string;
  dryRun: boolean;
} {
  const existing = readSettingsFile(opts.settingsPath);
  const plan = planUninstall(existing, { path: opts.settingsPath });
  const dryRun = opts.dryRun === true;
  if (plan.changed && !dryRun) writeFileAtomic(opts.settingsPath, plan.text);
  return { ...plan, path: opts.settingsPath, dryRun };
}

