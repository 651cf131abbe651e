// The Claude Code permission rules pgx installs next to its hooks, and the ones it removes.
//
// With the rewrite of hooks/claude/rewrite.ts, a routed command is judged subcommand by subcommand:
//   '<pgx>' agent exec --agent ID --cwd P -- <shell> -c '…'   ← the wrapper rule
//   exit                                                       ← Bash(exit)
//   <the original, verbatim>                                   ← the user's own rules, as if unrouted
// Neither rule approves anything the user's rules would judge: the wrapper rule matches only the launcher, which
// the hook refuses unless it wrote that exact command itself, and a bare `exit` in a user's command is refused by
// the hook too. Rules match the command text with `*` as ".*" (spanning spaces and line breaks; `\*` is a literal
// star), a bare path also matches its quoted form, and a trailing `# comment` is ignored.
import { isPlainObject, SettingsFileError, type JsonObject } from '../lib/settings-file.js';

export const EXIT_RULE = 'Bash(exit)';

/** Older installs' blanket rule `Bash(<launcher> agent exec:*)`: it approves whatever runs under the launcher. */
export const BLANKET_RULE_RE = /^Bash\((?:'(?:[^']|'\\'')*'|[^\s'"()]+) agent exec:\*\)$/;

/** pgx's narrow wrapper rule, any launcher and project. */
export const WRAPPER_RULE_RE = /^Bash\((.+?) agent exec --agent \* --cwd (.+) -- \*\)$/;

/** Characters a path cannot carry inside a rule: `(`/`)` end it early; `*` is escaped instead. */
export function ruleSafePath(p: string): boolean {
  return !/[()\n\r]/.test(p);
}

const escapeStar = (s: string) => s.replace(/\\/g, '\\\\').replace(/\*/g, '\\*');

/**
 * The wrapper rule for a launcher and a project (project and local scope), or for any project (user scope: the
 * same file serves every project). Undefined when a path cannot be written into a rule.
 */
export function wrapperRuleFor(launcher: string, projectDir: string | undefined): string | undefined {
  if (!ruleSafePath(launcher) || (projectDir !== undefined && !ruleSafePath(projectDir))) return undefined;
  return `Bash(${escapeStar(launcher)} agent exec --agent * --cwd ${projectDir === undefined ? '*' : escapeStar(projectDir)} -- *)`;
}

export interface RulesPlan {
  changed: boolean;
  added: string[];
  removed: string[];
  /** Blanket rules of an older install that were removed (each voided the user's deny rules). */
  blanketRemoved: string[];
}

/**
 * Bring permissions.allow to: every blanket pgx rule gone, exactly `wanted` as pgx's wrapper rule (none when
 * `wanted` is undefined), and `Bash(exit)` right after it unless the user already allows it. pgx's own
 * `Bash(exit)` is recognised by that position, so an uninstall never removes a user's.
 */
export function planRules(root: JsonObject, wanted: string | undefined, label: string): RulesPlan {
  const none: RulesPlan = { changed: false, added: [], removed: [], blanketRemoved: [] };
  const perms = root.permissions;
  if (perms !== undefined && !isPlainObject(perms)) {
    if (wanted === undefined) return none;
    throw new SettingsFileError(label, '"permissions" is not a JSON object');
  }
  const allow = perms?.allow;
  if (allow !== undefined && !Array.isArray(allow)) {
    if (wanted === undefined) return none;
    throw new SettingsFileError(label, '"permissions.allow" is not an array');
  }
  const list = (allow as unknown[] | undefined) ?? [];
  const isOurs = (r: unknown, i: number, arr: unknown[]) =>
    typeof r === 'string' &&
    (BLANKET_RULE_RE.test(r) ||
      WRAPPER_RULE_RE.test(r) ||
      (r === EXIT_RULE && i > 0 && typeof arr[i - 1] === 'string' && WRAPPER_RULE_RE.test(arr[i - 1] as string)));
  const kept = list.filter((r, i) => !isOurs(r, i, list));
  const next = [...kept];
  if (wanted !== undefined) {
    next.push(wanted);
    if (!kept.includes(EXIT_RULE)) next.push(EXIT_RULE);
  }
  if (JSON.stringify(next) === JSON.stringify(list)) return none;
  const before = list.filter((r): r is string => typeof r === 'string');
  const after = next.filter((r): r is string => typeof r === 'string');
  const result: RulesPlan = {
    changed: true,
    added: after.filter((r) => !before.includes(r)),
    removed: before.filter((r) => !after.includes(r)),
    blanketRemoved: before.filter((r) => BLANKET_RULE_RE.test(r)),
  };
  if (next.length === 0) {
    if (isPlainObject(perms)) {
      delete perms.allow;
      if (Object.keys(perms).length === 0) delete root.permissions;
    }
  } else if (perms === undefined) {
    root.permissions = { allow: next };
  } else {
    perms.allow = next;
  }
  return result;
}

export function wantedRule(opts: { launcher: string; projectDir?: string; rules?: boolean }): {
  wanted?: string;
  rulesSkipped?: string;
} {
  if (opts.rules === false) return {};
  const wanted = wrapperRuleFor(opts.launcher, opts.projectDir);
  if (wanted !== undefined) return { wanted };
  return {
    rulesSkipped:
      `the launcher or project path contains "(", ")" or a line break, which a Claude Code permission rule ` +
      `cannot hold; routed commands will ask`,
  };
}

export function mergeRules(a: RulesPlan, b: RulesPlan): RulesPlan {
  return {
    changed: a.changed || b.changed,
    added: [...a.added, ...b.added],
    removed: [...a.removed, ...b.removed],
    blanketRemoved: [...a.blanketRemoved, ...b.blanketRemoved],
  };
}

/** pgx's rules as found in one settings file (doctor). */
export interface RulesFound {
  blanket: string[];
  wrapper: string[];
  /** `Bash(exit)` is allowed in this file (pgx's or the user's own). */
  exit: boolean;
}

export function findRules(root: JsonObject): RulesFound {
  const perms = root.permissions;
  const allow =
    isPlainObject(perms) && Array.isArray(perms.allow)
      ? perms.allow.filter((r): r is string => typeof r === 'string')
      : [];
  return {
    blanket: allow.filter((r) => BLANKET_RULE_RE.test(r)),
    wrapper: allow.filter((r) => WRAPPER_RULE_RE.test(r)),
    exit: allow.includes(EXIT_RULE),
  };
}

/** Does a wrapper rule (as written by wrapperRuleFor) cover commands of this launcher in this project? */
export function wrapperRuleCovers(rule: string, launcher: string, projectDir: string): boolean {
  const m = WRAPPER_RULE_RE.exec(rule);
  if (!m) return false;
  const unescape = (s: string) => s.replace(/\\([\\*])/g, '$1');
  return unescape(m[1]!) === launcher && (m[2] === '*' || unescape(m[2]!) === projectDir);
}
