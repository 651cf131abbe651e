// pgx agent freeze: the frozen copy of a branch that its forks clone (engine/freeze.ts, decision 400), made now. A
// user runs it before a fan-out of subagents; a command hook starts it detached (`--after-ticket`) for a large branch,
// so that a copy longer than the hook's deadline is not lost with the hook's process.
import type { Command } from 'commander';
import { withEngine } from '../engine/api.js';
import { finishFreeze } from '../hooks/claude/freeze-elsewhere.js';
import {
  action,
  branchSelector,
  configFor,
  withBranchSelector,
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
        .command('freeze')
        .description(
          "make the frozen copy of a branch that its subagents' branches are cloned from (or find a fresh one)",
        ),
    ),
  )
    .option('--after-ticket <n>', 'a copy begun after this fork ticket serves (what a hook passes)')
    .action(
      action<CommonOpts & TargetOpts & { branch?: string; afterTicket?: string }>(async (opts, out) => {
        const sel = branchSelector(opts, process.env, 'freeze');
        const config = configFor(opts);
        let branch: string | undefined;
        try {
          const r = await withEngine(config, (e) => e.freeze(sel, opts.afterTicket));
          branch = r.branch;
          out.result(
            r,
            () =>
              `${r.branch}: frozen copy ${r.copy} ` +
              `${r.reused ? `(already there: ${r.why === 'newer' ? 'made after the ticket' : 'the branch is unchanged since'})` : `made by ${r.made}`} ` +
              `in ${r.elapsed_ms} ms`,
          );
        } finally {
          // started by a hook (its pid file): the next burst may start another
          if (opts.afterTicket !== undefined) finishFreeze(config, branch ?? opts.branch ?? '');
        }
      }),
    );
}
