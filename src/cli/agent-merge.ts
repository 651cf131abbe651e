// pgx agent merge: a subagent's changes since its fork point applied to its session's branch in one transaction, or
// refused with each conflict (engine/merge.ts). Refused inside any routed command (cli/routed-guard.ts): only the
// session itself merges into its branch.
import type { Command } from 'commander';
import { withEngine, type MergeResult } from '../engine/api.js';
import { isPgxError, PgxError } from '../lib/errors.js';
import { paint } from '../lib/output.js';
import { action, projectConfigFor, targetFrom, withCommon, type CommonOpts } from './common.js';

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  withCommon(
    agent
      .command('merge')
      .description(
        "apply what a subagent's branch changed since its fork point to the session's branch, in one transaction; " +
          'refused (exit 9, nothing applied) when both changed the same object or row',
      ),
  )
    .requiredOption('--agent <id>', 'the subagent whose changes the session takes')
    .option('--dry-run', 'print the migration and the check; apply nothing')
    .option('--partial', "merge although some tables' row changes can't be carried (named in the output)")
    .action(
      action<CommonOpts & { agent: string; dryRun?: boolean; partial?: boolean }>(async (opts, out) => {
        const t = targetFrom({ agent: opts.agent }, {});
        const config = projectConfigFor(opts);
        try {
          const r = await withEngine(config, (e) =>
            e.merge(t.agentId!, { dryRun: !!opts.dryRun, partial: !!opts.partial }),
          );
          out.result(r, () => mergeText(r));
          return opts.dryRun && conflictCount(r) ? 9 : 0;
        } catch (err) {
          if (isPgxError(err) && err.code === 'MERGE_CONFLICT' && !opts.json) {
            process.stdout.write(`${conflictText(err)}\n`);
          }
          throw err;
        }
      }),
    );
}

const conflictCount = (r: MergeResult) => r.conflicts.schema.length + r.conflicts.rows.length;

function mergeText(r: MergeResult): string {
  const rows = r.rows.reduce((n, t) => n + t.inserted + t.updated + t.deleted, 0);
  const head =
    r.outcome === 'dry-run'
      ? `dry run: ${r.branch} onto ${r.into}, from the fork point ${r.fork_point.database} (nothing applied)`
      : r.outcome === 'nothing'
        ? `${r.branch}: nothing to merge (${r.into} already has every change); recorded as merged`
        : `merged ${r.branch} into ${r.into}: ${r.schema.steps.length} schema statement(s), ${rows} row(s), one transaction`;
  const lines = [head];
  if (r.outcome === 'dry-run') {
    lines.push(r.sql.trimEnd());
    const n = conflictCount(r);
    lines.push(
      n
        ? paint(`check: ${n} conflict(s); a merge would be refused (exit 9):`, 'red')
        : paint('check: no conflict; `pgx agent merge --agent ' + r.agent + '` applies it', 'green'),
    );
    if (n) lines.push(...conflictLines(r.conflicts));
  }
  for (const l of r.left_out.filter((x) => x.changed !== false))
    lines.push(paint(`left out: ${l.table} (${l.why}; its rows differ)`, 'yellow'));
  return lines.join('\n');
}

function conflictLines(c: MergeResult['conflicts']): string[] {
  const show = (v: string | null) => v ?? '(absent)';
  const sides = (x: { fork_point: string | null; branch: string | null; parent: string | null }) =>
    `\n    fork point: ${show(x.fork_point)}\n    branch:     ${show(x.branch)}\n    parent:     ${show(x.parent)}`;
  return [
    ...c.schema.map((x) => `  ${x.object}${sides(x)}`),
    ...c.rows.map((x) => `  ${x.table} ${x.key ?? '(the table)'}: ${x.why}${sides(x)}`),
  ];
}

function conflictText(err: PgxError): string {
  const c = err.data?.conflicts as MergeResult['conflicts'] | undefined;
  return c ? ['conflicts:', ...conflictLines(c)].join('\n') : '';
}
