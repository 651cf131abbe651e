// pgx agent reset | adopt: a branch's contents replaced in place (engine/reset.ts), its name, role and DSN kept.
import type { Command } from 'commander';
import { PgxError } from '../lib/errors.js';
import { withEngine, type ResetResult } from '../engine/api.js';
import { table } from '../lib/output.js';
import {
  action,
  branchSelector,
  withBranchSelector,
  configFor,
  projectConfigFor,
  targetFrom,
  withCommon,
  type CommonOpts,
  type TargetOpts,
} from './common.js';

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  withBranchSelector(
    withCommon(
      agent
        .command('reset')
        .description(
          "put a branch back to its parent's current state (its session's branch, or the template), keeping its name, role and DSN",
        ),
    ),
  )
    .option('--to <what>', "parent (default: its session's branch, or the template) or template", 'parent')
    .action(
      action<CommonOpts & TargetOpts & { branch?: string; to: string }>(async (opts, out) => {
        if (opts.to !== 'parent' && opts.to !== 'template')
          throw new PgxError(
            'USAGE',
            `--to must be parent or template (got "${opts.to}").`,
            'e.g. `pgx agent reset --to template`.',
          );
        const sel = branchSelector(opts, process.env, 'reset');
        const config = configFor(opts);
        const r = await withEngine(config, (e) => e.reset(sel, opts.to as 'parent' | 'template'));
        out.result(r, () => resetText(r, `reset to ${r.from ? `"${r.from}"` : 'the template'}`));
      }),
    );

  withCommon(
    agent
      .command('adopt')
      .description(
        "make the session's branch a copy of a subagent's branch (same session DSN; the session branch's backends " +
          'are terminated first)',
      ),
  )
    .requiredOption('--agent <id>', 'the subagent whose branch the session takes')
    .action(
      action<CommonOpts & { agent: string }>(async (opts, out) => {
        const t = targetFrom({ agent: opts.agent }, {});
        const config = projectConfigFor(opts);
        const r = await withEngine(config, (e) => e.adopt(t.agentId!));
        out.result(r, () => resetText(r, `now a copy of ${r.agent_branch}`));
      }),
    );
}

/**
 * Exactly one selector; none inside a routed command (`agent exec` sets PGX_BRANCH for its command) means the
 * caller's own branch.
 */
function resetText(r: ResetResult, what: string): string {
  return (
    `${r.name}: ${what} by ${r.method} in ${r.elapsed_ms} ms; name, role and DSN kept\n` +
    table(['TERMINATED', 'REMAINING'], [[String(r.backends_terminated), String(r.backends_remaining)]])
  );
}
