// pgx agent install | uninstall <client>: the options every client shares, registered once; each client's command
// is its own module (agent-install-claude.ts, agent-install-codex.ts, agent-install-copilot.ts).
import type { Command } from 'commander';
import { PgxError } from '../lib/errors.js';
import { action } from './common.js';
import { installClaudeCommand, uninstallClaudeCommand, type InstallOpts } from './agent-install-claude.js';
import { installCodexCommand, uninstallCodexCommand } from './agent-install-codex.js';
import { installCopilotCommand, uninstallCopilotCommand } from './agent-install-copilot.js';

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  const scopeOpt = (c: Command) =>
    c
      .option(
        '--scope <scope>',
        'project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)',
        'project',
      )
      .option('--cwd <dir>', 'project directory')
      .option('--dry-run', 'show what would change, write nothing')
      .option('--json', 'machine-readable output');

  scopeOpt(
    agent
      .command('install')
      .description(
        'install the Claude Code hooks (six), the Codex CLI hooks (five, trusted) or the GitHub Copilot CLI hooks (six), idempotent',
      )
      .argument('<client>', '"claude", "codex" or "copilot"'),
  )
    .option(
      '--here',
      'make this directory a project even with no project marker (.git, package.json, …), or in $HOME or /',
    )
    .option('--no-rules', 'write no permission rules: every routed subagent command then asks for approval')
    .option(
      '--allow-rule',
      '(kept for older scripts) the narrow permission rules are now always written; see --no-rules',
    )
    .option('--no-verify', "don't run `pgx agent verify claude` when the Claude Code on PATH isn't verified yet")
    .option(
      '--no-mcp',
      "claude: leave the MCP servers that reach the project's database as they are (subagents' calls to them are then refused)",
    )
    .option(
      '--transport <transport>',
      '(kept for older scripts) command, the only transport: the http one is retired, and an install moves ' +
        'an HTTP install back (decision 444)',
      'command',
    )
    .action(
      action<InstallOpts>(async (opts, out, cmd) => {
        const client = checkClient(cmd.args[0]);
        if (client === 'codex') return installCodexCommand(opts, out, cmd.getOptionValueSource('scope') === 'default');
        if (client === 'copilot') return installCopilotCommand(opts, out);
        return installClaudeCommand(opts, out);
      }),
    );

  scopeOpt(
    agent
      .command('uninstall')
      .description("remove exactly pgx's hook entries and permission rules (codex: and their trust entries)")
      .argument('<client>', '"claude", "codex" or "copilot"'),
  ).action(
    action<InstallOpts>(async (opts, out, cmd) => {
      const client = checkClient(cmd.args[0]);
      if (client === 'codex') return uninstallCodexCommand(opts, out, cmd.getOptionValueSource('scope') === 'default');
      if (client === 'copilot') return uninstallCopilotCommand(opts, out);
      return uninstallClaudeCommand(opts, out);
    }),
  );
}

function checkClient(client: string | undefined): 'claude' | 'codex' | 'copilot' {
  if (client !== 'claude' && client !== 'codex' && client !== 'copilot')
    throw new PgxError(
      'USAGE',
      `Unknown client "${client}".`,
      'Use `claude` (Claude Code), `codex` (the Codex CLI) or `copilot` (the GitHub Copilot CLI): `pgx agent install claude`.',
    );
  return client;
}
