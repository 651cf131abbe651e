import { Argument, type Command } from 'commander';
import { HANDLERS, type HookName } from '../hooks/claude/handlers.js';
import { runHookCommand } from '../hooks/claude/hook-entry.js';

export function registerHookCommand(agent: Command): void {
  agent
    .command('hook')
    .description('Claude Code hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(HANDLERS)))
    .action((event: HookName) => runHookCommand(event));
}
