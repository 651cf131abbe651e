// `pgx agent hook <event>` without the CLI bundle: Claude Code runs a hook per tool call and per subagent, so the
// hook starts without commander or any other command's module (bin/pgx.js routes here on the exact argv form;
// anything else goes to the CLI, which calls the same function).
import { describeError } from '../../lib/errors.js';
import { isHookEvent, type HookEvent } from './events.js';
import { runHook, type HookContext } from './run.js';

export { isHookEvent };

/** The hook's answer, the text to print (undefined: nothing). Never throws. */
export async function answerHook(event: HookEvent, ctx?: HookContext | { stdin?: string }): Promise<string | undefined> {
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
      permissionDecisionReason: `pgx failed unexpectedly (${describeError(e).message}), so the command was not routed to a database branch and did not run. Run \`pgx agent doctor\`.`,
    },
  };
}

/** bin/pgx.js: runs the hook on the payload the light entry read when argv is exactly `agent hook <event>`, else returns false. */
export async function runHookArgv(argv: string[], stdin: string): Promise<boolean> {
  const [a, b, event, extra] = argv;
  if (a !== 'agent' || b !== 'hook' || extra !== undefined || !isHookEvent(event)) return false;
  await runHookCommand(event, stdin);
  return true;
}
