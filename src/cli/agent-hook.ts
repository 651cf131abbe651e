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
      if (r.print) process.stdout.write(r.print + '\n');
      process.exitCode = 0;
    });
}
