// What `pgx agent diff` answers (its `--json`, printed as it is) and the bounds it is asked within: shared by diff.ts,
// which assembles the answer, diff-compare.ts, which fills it in, and the handoff, which summarises it.
import type { SchemaObject } from '../server/catalog.js';

export interface DiffBounds {
  /** Exact compare of a table only when each side has at most this many rows … */
  exactMaxRows: number;
  /** … and at most this many bytes on disk; otherwise its rows are counted only. */
  exactMaxBytes: number;
  /** Stop comparing tables after this long (the rest are `skipped`); undefined: no limit. */
  budgetMs?: number;
}

export interface SchemaChange {
  kind: SchemaObject['kind'];
  name: string;
}

export interface TableDiff {
  table: string;
  /** exact: every row compared; counts: rows counted only (over the bound); skipped: the time budget ran out. */
  compared: 'exact' | 'counts' | 'skipped';
  base_rows: number | null;
  branch_rows: number | null;
  rows_added: number | null;
  rows_removed: number | null;
  /** Rows whose key is on both sides with other contents (null: no primary key, or not compared exactly). */
  rows_changed: number | null;
  /** The columns compared (those both sides have, with the same type), when fewer than the branch's. */
  columns_compared?: number;
}

export interface DiffResult {
  branch: string;
  against: {
    kind: 'parent' | 'template' | 'branch';
    /** The database whose CURRENT contents were compared (for a template: the template, read through its copy). */
    database: string;
    /** parent asked, and the record has none: the template it was cloned from. */
    parent_was_template: boolean;
  };
  schema: { added: SchemaChange[]; dropped: SchemaChange[]; altered: SchemaChange[] };
  /** Tables whose rows differ, or could not be compared exactly (counts, skipped). */
  data: TableDiff[];
  bounds: {
    exact_max_rows: number;
    exact_max_bytes: number;
    budget_ms: number | null;
    tables_compared: number;
    tables_exact: number;
    tables_counts_only: number;
    tables_skipped: number;
  };
  /** Anything added, dropped, altered or different in rows (a table compared by counts with equal counts is not). */
  changed: boolean;
  elapsed_ms: number;
}
