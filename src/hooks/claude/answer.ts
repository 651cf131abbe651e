// A Claude Code hook's answer, never a throw: what every way in runs for `agent hook <event>` (the in-process hook
// src/entries/claude-hook.ts, the broker's work src/entries/broker-work.ts, and the CLI's `agent hook`).
import { describeError } from '../../lib/errors.js';
import type { HookEvent } from './events.js';
import { runHook, type HookContext } from './run.js';

/** The hook's answer, the text to print (undefined: nothing). Never throws. */
export async function answerHook(
  event: HookEvent,
  ctx?: HookContext | { stdin?: string },
): Promise<string | undefined> {
  try {
    return (await runHook(event, ctx)).print;
  } catch (e) {
    // A bug must not become exit 1: Claude Code would then run a subagent's command unrouted. Fail closed.
    return event === 'pre-tool-use' ? JSON.stringify(unexpectedDeny(e)) : undefined;
  }
}

/** Runs the hook (on `stdin`, the payload the light entry read, else its own stdin), writes its answer and exits 0 once written. */
export async function runHookCommand(event: HookEvent, stdin?: string): Promise<void> {
  const print = await answerHook(event, { stdin });
  // Exit as soon as the answer is written: work cut off by the hook's deadline (a clone, a lock wait) must not
  // hold the process past Claude Code's timeout, and a pg client's orderly close is not worth the wait.
  process.stdout.write(print ? print + '\n' : '', () => process.exit(0));
}

function unexpectedDeny(e: unknown) {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason:
        `pgx failed unexpectedly (${describeError(e).message}), so the command was not routed to a database branch ` +
        `and did not run. Run \`pgx agent doctor\`.`,
    },
  };
}
