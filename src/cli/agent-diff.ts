// pgx agent diff: what a branch changed against its parent, the template or another branch (engine/diff.ts).
import type { Command } from 'commander';
import { PgxError } from '../lib/errors.js';
import { withEngine, type Against, type DiffResult, type Selector } from '../engine/api.js';
import { paint } from '../lib/output.js';
import { action, configFor, targetFrom, withCommon, type CommonOpts, type TargetOpts } from './common.js';

export function registerDiffCommand(agent: Command): void {
  withCommon(agent.command('diff').description("what a branch changed: schema objects added, dropped or altered, and rows per table (no selector inside a routed command: the caller's own branch)"))
    .option('--agent <id>', "a subagent's branch")
    .option('--id <id>', 'an exec --id branch')
    .option('--session <id>', "a session's own branch (with --agent: that session's subagent)")
    .option('--branch <name>', 'a branch by database name')
    .option('--against <what>', 'parent (the branch it was forked from; none: the template), template, or a branch name', 'parent')
    .action(
      action<CommonOpts & TargetOpts & { branch?: string; against: string }>(async (opts, out) => {
        const config = configFor(opts);
        const sel = selectorOf(opts, process.env);
        const against: Against = opts.against === 'parent' || opts.against === 'template' ? opts.against : { branch: opts.against };
        const r = await withEngine(config, (e) => e.diff(sel, against));
        out.result(r, () => render(r));
      }),
    );
}

/** Exactly one selector; none inside a routed command (`agent exec` sets PGX_BRANCH): the caller's own branch. */
function selectorOf(opts: TargetOpts & { branch?: string }, env: NodeJS.ProcessEnv): Selector {
  // --session with --agent: that session's subagent (an agent id alone may have branches in several sessions)
  const given = ['agent', 'id', 'session', 'branch'].filter((k) => (opts as Record<string, unknown>)[k] !== undefined && !(k === 'session' && opts.agent !== undefined));
  if (given.length > 1) throw new PgxError('USAGE', `Pass one of --agent, --id, --session, --branch (got ${given.map((g) => `--${g}`).join(', ')}).`, 'e.g. `pgx agent diff --agent <id>`.');
  if (opts.branch !== undefined) return { branch: opts.branch };
  if (!given.length) {
    if (env.PGX_BRANCH) return { branch: env.PGX_BRANCH };
    throw new PgxError('USAGE', 'Say which branch: --agent <id>, --id <id>, --session <id> or --branch <name>.', 'Inside a command pgx routed (a subagent\'s Bash, `pgx agent exec`), no selector means that command\'s own branch.');
  }
  const t = targetFrom({ agent: opts.agent, id: opts.id, session: opts.session }, {});
  if (t.agentId !== undefined && t.sessionId !== undefined) return { target: t };
  return t.agentId !== undefined ? { agent: t.agentId } : t.execId !== undefined ? { id: t.execId } : { session: t.sessionId! };
}

function render(r: DiffResult): string {
  const what = r.against.kind === 'branch' ? 'branch' : r.against.parent_was_template ? 'the template: it has no parent branch' : r.against.kind === 'parent' ? 'its parent' : 'the template';
  const lines = [`${r.branch} compared with ${r.against.database} (${what})`];
  const schema = [...r.schema.added.map((c) => `  + ${c.kind} ${c.name}`), ...r.schema.dropped.map((c) => `  - ${c.kind} ${c.name}`), ...r.schema.altered.map((c) => `  ~ ${c.kind} ${c.name}`)];
  if (schema.length) lines.push('schema:', ...schema);
  const b = r.bounds;
  if (r.data.length) {
    lines.push(`rows (exact up to ${b.exact_max_rows} rows and ${Math.round(b.exact_max_bytes / 1048576)} MB per table; bigger tables are counted only):`);
    for (const d of r.data) {
      if (d.compared === 'skipped') {
        lines.push(`  ${d.table}  not compared (time budget)`);
        continue;
      }
      const n = [`+${d.rows_added}`, `-${d.rows_removed}`, d.rows_changed === null ? (d.compared === 'exact' ? '(no primary key: changed rows count as -1 +1)' : '(contents not compared)') : `~${d.rows_changed}`];
      lines.push(`  ${d.table}  ${n.join(' ')}  ${d.compared === 'counts' ? paint(`counted only: ${d.base_rows} → ${d.branch_rows} rows`, 'yellow') : `${d.base_rows} → ${d.branch_rows} rows`}`);
    }
  }
  if (!r.changed) lines.push(paint(`no changes (${b.tables_compared} table(s) compared${b.tables_counts_only ? `, ${b.tables_counts_only} by counts only` : ''})`, 'dim'));
  return lines.join('\n');
}
