// The handoff at SubagentStop: what the subagent's branch changed, summarised in a few capped lines of names and
// counts (never row contents, never a credential), recorded on its registry record (`agent ls --json`: `changes`)
// and kept past the grace period when it changed anything ([agent] keep_changed), so the parent can review it with
// `pgx agent diff` before gc drops it. The summary is bounded in time and fails open: a stop is never held up or
// failed by it (decision 163).
import { sqlstateOf } from '../server/catalog.js';
import { isPgxError } from '../lib/errors.js';
import type { BranchRecord } from '../registry/records.js';
import type { EngineContext } from './context.js';
import { diffBranch } from './diff.js';
import type { DiffResult, SchemaChange } from './diff-result.js';
import { plainName, type ChangeSummary } from './handoff-text.js';

export type { ChangeSummary };

/** SubagentStop's bounds: a summary, not a review (`pgx agent diff` gives the whole of it). */
export const SUMMARY_BOUNDS = { exactMaxRows: 10_000, exactMaxBytes: 8 * 1024 * 1024, budgetMs: 3_000 };
const MAX_LINES = 4;
const MAX_LINE = 200;

/** The subagent's changes against its parent, within SUMMARY_BOUNDS; never throws. */
export async function summarizeChanges(
  e: EngineContext,
  rec: BranchRecord,
  bounds = SUMMARY_BOUNDS,
): Promise<ChangeSummary> {
  const at = new Date().toISOString();
  try {
    return summaryOf(await diffBranch(e, rec, 'parent', bounds), at);
  } catch (err) {
    const code = sqlstateOf(err);
    const error = code === '57014' ? 'timeout' : (code ?? (isPgxError(err) ? err.code : 'failed'));
    return {
      changed: null,
      against: null,
      schema: { added: 0, dropped: 0, altered: 0 },
      tables_changed: 0,
      rows: { added: 0, removed: 0, changed: 0 },
      partial: true,
      lines: [],
      error,
      at,
    };
  }
}

export function summaryOf(d: DiffResult, at = new Date().toISOString()): ChangeSummary {
  const changedTables = d.data.filter((t) => t.rows_added || t.rows_removed || t.rows_changed);
  const sum = (k: 'rows_added' | 'rows_removed' | 'rows_changed') => changedTables.reduce((n, t) => n + (t[k] ?? 0), 0);
  const lines = [
    names('added', d.schema.added),
    names('dropped', d.schema.dropped),
    names('altered', d.schema.altered),
    changedTables.length ? cap(`rows: ${rowsLine(changedTables)}`) : '',
  ].filter(Boolean);
  return {
    changed: d.changed,
    against: d.against.database,
    schema: { added: d.schema.added.length, dropped: d.schema.dropped.length, altered: d.schema.altered.length },
    tables_changed: changedTables.length,
    rows: { added: sum('rows_added'), removed: sum('rows_removed'), changed: sum('rows_changed') },
    partial: d.bounds.tables_counts_only + d.bounds.tables_skipped > 0,
    lines: lines.slice(0, MAX_LINES),
    at,
  };
}

function rowsLine(tables: DiffResult['data']): string {
  const plain = tables.flatMap((t) => {
    const name = plainName(t.table);
    return name ? [`${name} ${rowCounts(t)}${t.compared === 'counts' ? ' (counted)' : ''}`] : [];
  });
  return withUnusual(plain, tables.length - plain.length, 'table');
}

/** Names as plain identifiers only; the others counted, never quoted (handoff-text.ts plainName). */
function names(verb: string, list: SchemaChange[]): string {
  if (!list.length) return '';
  const parts = list.flatMap((c) => {
    const name = plainName(c.name);
    return name ? [`${c.kind} ${name}`] : [];
  });
  return cap(`${verb}: ${withUnusual(parts, list.length - parts.length, 'object')}`);
}

function withUnusual(parts: string[], odd: number, what: 'object' | 'table'): string {
  return odd
    ? [...parts, `${parts.length ? 'and ' : ''}${odd} ${what}${odd === 1 ? '' : 's'} with unusual names`].join(', ')
    : parts.join(', ');
}

/** One line at most MAX_LINE characters, cut at an item with the count of what was cut. */
function cap(line: string): string {
  if (line.length <= MAX_LINE) return line;
  const items = line.split(', ');
  let out = items[0]!.slice(0, MAX_LINE - 20);
  let i = 1;
  while (i < items.length && out.length + items[i]!.length + 2 <= MAX_LINE - 20) out += `, ${items[i++]}`;
  return `${out}, … ${items.length - i} more`;
}

/** `+3 -1 ~2`: a table's rows added, removed and changed, the counts that are not 0. */
function rowCounts(t: {
  rows_added?: number | null;
  rows_removed?: number | null;
  rows_changed?: number | null;
}): string {
  const parts = [
    t.rows_added ? `+${t.rows_added}` : '',
    t.rows_removed ? `-${t.rows_removed}` : '',
    t.rows_changed ? `~${t.rows_changed}` : '',
  ];
  return parts.filter(Boolean).join(' ');
}
