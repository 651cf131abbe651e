import { Argument, type Command } from 'commander';
import { HANDLERS, type HookName } from '../hooks/claude/handlers.js';
import { runHook } from '../hooks/claude/run.js';
import { describeError } from '../errors.js';

export function registerHookCommand(agent: Command): void {
  agent
    .command('hook')
    .description('Claude Code hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(HANDLERS)))
    .action(async (event: HookName) => {
      let print: string | undefined;
      try {
        print = (await runHook(event)).print;
      } catch (e) {
        // A bug must not become exit 1: Claude Code would then run a subagent's command unrouted. Fail closed.
        if (event === 'pre-tool-use') print = JSON.stringify(unexpectedDeny(e));
      }
      // Exit as soon as the answer is written: work cut off by the hook's deadline (a clone, a lock wait) must not
      // hold the process past Claude Code's timeout, and a pg client's orderly close is not worth the wait.
      process.stdout.write(print ? print + '\n' : '', () => process.exit(0));
    });
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
