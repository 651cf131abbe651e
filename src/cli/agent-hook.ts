import { Argument, type Command } from 'commander';
import { HANDLERS, type HookName } from '../hooks/claude/handlers.js';
import { runHookCommand } from '../hooks/claude/hook-entry.js';
import { CODEX_HANDLERS, type CodexHookName } from '../hooks/codex/handlers.js';
import { runCodexHookCommand } from '../hooks/codex/hook-entry.js';

export function registerHookCommand(agent: Command): void {
  agent
    .command('hook')
    .description('Claude Code hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(HANDLERS)))
    .action((event: HookName) => runHookCommand(event));
  agent
    .command('codex-hook')
    .description('Codex CLI hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(CODEX_HANDLERS)))
    .action((event: CodexHookName) => runCodexHookCommand(event));
}
