// The installer's view of pgx's six hook entries: which settings file a scope means, the events old releases
// installed, and (re-exported for the installer's callers) the event table and the entries made from it, which are
// the hooks' own (hooks/claude/events.ts, hooks/claude/settings-entries.ts: decisions/311-one-event-table.md).
import * as path from 'node:path';
import { type HookEventName } from '../hooks/claude/events.js';

export type Scope = 'project' | 'user' | 'local';

export {
  EVENT_BY_CLI,
  EVENT_BY_NAME,
  HOOK_EVENTS,
  ON_FAILURE_BLOCK,
  ON_FAILURE_SINCE,
  type HookEntry,
  type HookEvent,
  type HookEventName,
} from '../hooks/claude/events.js';
export {
  checkLauncher,
  findPgxHandlers,
  hookCommand,
  hookGroup,
  hookHandler,
  pgxCliOf,
  pgxHandlerOf,
  PGX_HOOK_URL_RE,
  KEEPER_COMMAND_RE,
  PGX_HOOK_COMMAND_RE,
  PORTABLE_HOOK_COMMAND_RE,
  PORTABLE_LAUNCHER,
  portableHookCommand,
  type HookHandler,
  type Located,
  type PgxHandlerKind,
} from '../hooks/claude/settings-entries.js';

export const OLD_EVENTS: readonly HookEventName[] = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'SessionEnd'];

export function settingsPathFor(scope: Scope, projectDir: string, home: string): string {
  switch (scope) {
    case 'project':
      return path.join(projectDir, '.claude', 'settings.json');
    case 'local':
      return path.join(projectDir, '.claude', 'settings.local.json');
    case 'user':
      return path.join(home, '.claude', 'settings.json');
    default: {
      const never: never = scope;
      throw new TypeError(`unknown scope: ${String(never)}`);
    }
  }
}
