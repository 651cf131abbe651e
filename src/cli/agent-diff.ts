// pgx agent diff: what a branch changed against its parent, the template or another branch (engine/diff.ts).
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { withEngine, type Against, type DiffResult, type SqlDiffResult } from '../engine/api.js';
import { PgxError } from '../lib/errors.js';
import { writeFileAtomic } from '../lib/fsutil.js';
import { paint } from '../lib/output.js';
import {
  action,
  branchSelector,
  withBranchSelector,
  configFor,
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
        .command('diff')
        .description(
          'what a branch changed: schema objects added, dropped or altered, and rows per table (no selector inside ' +
            "a routed command: the caller's own branch)",
        ),
    ),
    "a session's own branch (with --agent: that session's subagent)",
  )
    .option(
      '--against <what>',
      'parent (the branch it was forked from; none: the template), template, or a branch name',
      'parent',
    )
    .option(
      '--sql',
      'what the branch changed since its fork point, as one migration (schema by @supabase/pg-delta, then rows by ' +
        'primary key); tables it leaves out are named at the top, risky statements marked',
    )
    .option('--out <file>', 'with --sql: write the migration to this file (the summary to stdout)')
    .action(
      action<CommonOpts & TargetOpts & { branch?: string; against: string; sql?: boolean; out?: string }>(
        async (opts, out) => {
          const config = configFor(opts);
          const sel = branchSelector(opts, process.env, 'diff');
          if (opts.out !== undefined && !opts.sql)
            throw new PgxError(
              'USAGE',
              '--out goes with --sql.',
              'e.g. `pgx agent diff --agent <id> --sql --out change.sql`.',
            );
          if (opts.sql) {
            if (opts.against !== 'parent')
              throw new PgxError(
                'USAGE',
                '--sql compares with the fork point (what the branch was cloned from): --against does not apply.',
                'Leave out --against.',
              );
            const r = await withEngine(config, (e) => e.diffSql(sel));
            if (opts.out !== undefined) writeFileAtomic(resolve(opts.out), r.sql, 0o644);
            out.result(opts.out !== undefined ? { ...r, sql: undefined, out: resolve(opts.out) } : r, () =>
              opts.out !== undefined ? sqlSummary(r, resolve(opts.out)) : r.sql.trimEnd(),
            );
            return;
          }
          const against: Against =
            opts.against === 'parent' || opts.against === 'template' ? opts.against : { branch: opts.against };
          const r = await withEngine(config, (e) => e.diff(sel, against));
          out.result(r, () => render(r));
        },
      ),
    );
}

/** `--sql --out`: the migration went to a file; this says what is in it. */
function sqlSummary(r: SqlDiffResult, file: string): string {
  const rows = r.rows.reduce((n, t) => n + t.inserted + t.updated + t.deleted, 0);
  const left = r.left_out.filter((l) => l.changed !== false);
  return [
    `${r.branch} since its fork point ${r.fork_point.database}: ${r.schema.steps.length} schema statement(s)` +
      `${r.risky ? paint(` (${r.risky} risky)`, 'yellow') : ''}, ${rows} row(s) in ${r.rows.length} table(s) → ${file}`,
    ...left.map((l) => paint(`left out: ${l.table} (${l.why}; its rows differ)`, 'yellow')),
  ].join('\n');
}

/** Exactly one selector; none inside a routed command (`agent exec` sets PGX_BRANCH): the caller's own branch. */
function render(r: DiffResult): string {
  const what =
    r.against.kind === 'branch'
      ? 'branch'
      : r.against.parent_was_template
        ? 'the template: it has no parent branch'
        : r.against.kind === 'parent'
          ? 'its parent'
          : 'the template';
  const lines = [`${r.branch} compared with ${r.against.database} (${what})`];
  const schema = [
    ...r.schema.added.map((c) => `  + ${c.kind} ${c.name}`),
    ...r.schema.dropped.map((c) => `  - ${c.kind} ${c.name}`),
    ...r.schema.altered.map((c) => `  ~ ${c.kind} ${c.name}`),
  ];
  if (schema.length) lines.push('schema:', ...schema);
  const b = r.bounds;
  if (r.data.length) {
    lines.push(
      `rows (exact up to ${b.exact_max_rows} rows and ${Math.round(b.exact_max_bytes / 1048576)} MB per table; bigger tables are counted only):`,
    );
    for (const d of r.data) {
      if (d.compared === 'skipped') {
        lines.push(`  ${d.table}  not compared (time budget)`);
        continue;
      }
      const n = [
        `+${d.rows_added}`,
        `-${d.rows_removed}`,
        d.rows_changed === null
          ? d.compared === 'exact'
            ? '(no primary key: changed rows count as -1 +1)'
            : '(contents not compared)'
          : `~${d.rows_changed}`,
      ];
      lines.push(
        `  ${d.table}  ${n.join(' ')}  ` +
          (d.compared === 'counts'
            ? paint(`counted only: ${d.base_rows} → ${d.branch_rows} rows`, 'yellow')
            : `${d.base_rows} → ${d.branch_rows} rows`),
      );
    }
  }
  if (!r.changed)
    lines.push(
      paint(
        `no changes (${b.tables_compared} table(s) compared${b.tables_counts_only ? `, ${b.tables_counts_only} by counts only` : ''})`,
        'dim',
      ),
    );
  return lines.join('\n');
}
