import { Argument, type Command } from 'commander';
import { HANDLERS, type HookName } from '../hooks/claude/handlers.js';
import { runHook } from '../hooks/claude/run.js';

export function registerHookCommand(agent: Command): void {
  agent
    .command('hook')
    .description('Claude Code hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(HANDLERS)))
    .action(async (event: HookName) => {
      const r = await runHook(event);
      // Exit as soon as the answer is written: work cut off by the hook's deadline (a clone, a lock wait) must not
      // hold the process past Claude Code's timeout, and a pg client's orderly close is not worth the wait.
      process.stdout.write(r.print ? r.print + '\n' : '', () => process.exit(0));
    });
}
