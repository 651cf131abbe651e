// `pgx agent hook <event>` in the CLI: the same hook runner bin/pgx.js reaches without the CLI bundle (hooks/claude/answer.ts).
import { Argument, type Command } from 'commander';
import { HOOK_EVENTS, type HookEvent } from '../hooks/claude/events.js';
import { runHookCommand } from '../hooks/claude/answer.js';
import { CODEX_HANDLERS, type CodexHookName } from '../hooks/codex/handlers.js';
import { runCodexHookCommand } from '../hooks/codex/answer.js';
import { COPILOT_HANDLERS, type CopilotHookName } from '../hooks/copilot/handlers.js';
import { runCopilotHookCommand } from '../hooks/copilot/answer.js';

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  agent
    .command('hook')
    .description('Claude Code hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(HOOK_EVENTS.map((e) => e.cli)))
    .action((event: HookEvent) => runHookCommand(event));
  agent
    .command('codex-hook')
    .description('Codex CLI hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(CODEX_HANDLERS)))
    .action((event: CodexHookName) => runCodexHookCommand(event));
  agent
    .command('copilot-hook')
    .description('GitHub Copilot CLI hook entry point (JSON on stdin; prints one JSON object or nothing; exits 0)')
    .addArgument(new Argument('<event>', 'the hook event').choices(Object.keys(COPILOT_HANDLERS)))
    .action((event: CopilotHookName) => runCopilotHookCommand(event));
}
