// `.claude/settings.local.json` beside a project's portable `.claude/settings.json`: this machine's permission rules
// (they name the launcher and the project) go there alone, planned as text; the file's other settings stay as they are.
import { parseSettingsText, serializeSettings } from '../lib/settings-file.js';
import { findPgxHandlers } from './hook-events.js';
import { planRules, wantedRule, type RulesPlan } from './permission-rules.js';
import { dropSecretEnv, getHooksObject, removeHandlers, SECRET_VAR_NAME } from './claude-entries.js';

export interface RulesFilePlan {
  text: string;
  changed: boolean;
  rules: RulesPlan;
  rulesSkipped?: string;
  /** The file runs pgx hooks of its own (a `--scope local` install): its rules are that install's, not touched. */
  ownHooks: boolean;
  /** Events whose HTTP entry or keeper (of the retired `--transport http` install) was taken out. */
  removed?: string[];
}

/**
 * pgx's permission rules, alone, in a file that holds no pgx hooks of the project scope: `.claude/settings.local.json`
 * beside a portable `.claude/settings.json`. `rules: false`, or `remove`, takes pgx's rules out (uninstall). A file
 * that runs pgx's hooks itself is a local-scope install, whose rules these are too: left as it is.
 */
export function planRulesFile(
  existing: string | undefined,
  opts: { launcher: string; projectDir: string; rules?: boolean; remove?: boolean; path?: string },
): RulesFilePlan {
  const label = opts.path ?? 'settings file';
  const none = { changed: false, added: [], removed: [], blanketRemoved: [] };
  const root = parseSettingsText(existing, label);
  const hooks = getHooksObject(root, label);
  // An HTTP install's entries, keepers and secret (--transport http beside the shared file) go: this is the command
  // transport, or uninstall.
  const http = hooks ? findPgxHandlers(hooks).filter((l) => l.kind !== 'command') : [];
  let stripped = false;
  if (hooks && http.length > 0) {
    removeHandlers(hooks, new Set(http.map((l) => l.handler)), new Set());
    if (Object.keys(hooks).length === 0) delete root.hooks;
    dropSecretEnv(root, SECRET_VAR_NAME);
    stripped = true;
  }
  const removed = [...new Set(http.map((l) => l.event))];
  if (hooks && findPgxHandlers(hooks).length > 0) {
    return stripped
      ? { text: serializeSettings(root), changed: true, rules: none, ownHooks: true, removed }
      : { text: existing ?? '', changed: false, rules: none, ownHooks: true };
  }
  const { wanted, rulesSkipped } = opts.remove ? {} : wantedRule(opts);
  const rules = planRules(root, wanted, label);
  const changed = stripped || (rules.changed && !(existing === undefined && wanted === undefined));
  return {
    text: changed ? serializeSettings(root) : (existing ?? ''),
    changed,
    rules,
    ownHooks: false,
    ...(rulesSkipped ? { rulesSkipped } : {}),
    ...(stripped ? { removed } : {}),
  };
}
