// One handler per Claude Code hook event, each in the file of its subject; each returns the JSON to print (or nothing)
// and an outcome for the log. Isolation fails closed (a subagent's Bash without a branch is denied); everything else
// fails open and loudly.
import type { HookEvent } from './events.js';
import { preToolUse } from './pre-tool-use.js';
import { sessionEnd, sessionStart } from './session-lifecycle.js';
import { subagentStart, subagentStop } from './subagent-lifecycle.js';
import { userPromptSubmit } from './user-prompt-submit.js';

export const HANDLERS = {
  'session-start': sessionStart,
  'user-prompt-submit': userPromptSubmit,
  'pre-tool-use': preToolUse,
  'subagent-start': subagentStart,
  'subagent-stop': subagentStop,
  'session-end': sessionEnd,
} as const satisfies Record<HookEvent, unknown>;
