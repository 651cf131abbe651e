// The compare behind `pgx agent diff` (diff.ts), on two open connections: schema objects by kind, name and the md5 of
// their definition, then the rows.
//
// Data: per table present on both sides, over the columns both have with the same type. A table within the bound
// (both sides at most `exactMaxRows` rows and `exactMaxBytes` on disk) is compared exactly: a one-scan fingerprint
// (count and a sum of row hashes) on each side, and only when they differ, each row's key and hash (rows matched by
// primary key: added, removed, changed; without one, as multisets: added and removed). A bigger table is counted
// only, and its entry says so. A time budget (the SubagentStop summary's) leaves the tables it did not reach
// `skipped`, said too.
import * as catalog from '../server/catalog.js';
import type { SchemaObject, TableShape } from '../server/catalog.js';
import type { Db } from '../server/db.js';
import type { DiffBounds, DiffResult, SchemaChange, TableDiff } from './diff-result.js';

/** Compares `base` with `branch`: schema objects, then the rows of the tables on both sides. */
export async function compare(
  base: Db,
  branch: Db,
  bounds: DiffBounds,
  t0: number,
): Promise<Omit<DiffResult, 'branch' | 'against' | 'elapsed_ms'>> {
  const [bs, cs, bt, ct] = await Promise.all([
    catalog.schemaObjects(base),
    catalog.schemaObjects(branch),
    catalog.tableShapes(base),
    catalog.tableShapes(branch),
  ]);
  const schema = schemaChanges(bs, cs);
  const baseTables = new Map(bt.map((t) => [`${t.schema}.${t.table}`, t]));
  const out: TableDiff[] = [];
  const counts = { compared: 0, exact: 0, counts: 0, skipped: 0 };
  for (const t of ct) {
    const b = baseTables.get(`${t.schema}.${t.table}`);
    if (!b) continue; // an added table: in schema.added
    counts.compared++;
    const name = t.qname;
    if (bounds.budgetMs !== undefined && performance.now() - t0 > bounds.budgetMs) {
      counts.skipped++;
      out.push({
        table: name,
        compared: 'skipped',
        base_rows: null,
        branch_rows: null,
        rows_added: null,
        rows_removed: null,
        rows_changed: null,
      });
      continue;
    }
    const d = await compareTable(base, branch, b, t, bounds);
    counts[d.compared === 'exact' ? 'exact' : 'counts']++;
    const differs = d.compared !== 'exact' || d.rows_added || d.rows_removed || d.rows_changed;
    if (differs) out.push({ table: name, ...d });
  }
  const changed =
    schema.added.length + schema.dropped.length + schema.altered.length > 0 ||
    out.some((d) => d.rows_added || d.rows_removed || d.rows_changed);
  return {
    schema,
    data: out,
    bounds: {
      exact_max_rows: bounds.exactMaxRows,
      exact_max_bytes: bounds.exactMaxBytes,
      budget_ms: bounds.budgetMs ?? null,
      tables_compared: counts.compared,
      tables_exact: counts.exact,
      tables_counts_only: counts.counts,
      tables_skipped: counts.skipped,
    },
    changed,
  };
}

function schemaChanges(base: SchemaObject[], branch: SchemaObject[]): DiffResult['schema'] {
  const key = (o: SchemaObject) => `${o.kind} ${o.name}`;
  const b = new Map(base.map((o) => [key(o), o]));
  const c = new Map(branch.map((o) => [key(o), o]));
  const pick = ({ kind, name }: SchemaObject): SchemaChange => ({ kind, name });
  return {
    added: branch.filter((o) => !b.has(key(o))).map(pick),
    dropped: base.filter((o) => !c.has(key(o))).map(pick),
    altered: branch.filter((o) => b.has(key(o)) && b.get(key(o))!.def !== o.def).map(pick),
  };
}

async function compareTable(
  base: Db,
  branch: Db,
  b: TableShape,
  c: TableShape,
  bounds: DiffBounds,
): Promise<Omit<TableDiff, 'table'>> {
  const types = new Map(b.columns.map((x) => [x.name, x.type]));
  const columns = c.columns.filter((x) => types.get(x.name) === x.type).map((x) => x.name);
  const sameKey = b.key.length > 0 && b.key.join('\0') === c.key.join('\0') && c.key.every((k) => columns.includes(k));
  const key = sameKey ? c.key : [];
  const narrower = columns.length < c.columns.length ? { columns_compared: columns.length } : {};
  const within = (t: TableShape) => t.bytes <= bounds.exactMaxBytes && t.est_rows <= bounds.exactMaxRows;
  if (within(b) && within(c)) {
    const [fb, fc] = await Promise.all([
      catalog.tableFingerprint(base, b, columns),
      catalog.tableFingerprint(branch, c, columns),
    ]);
    if (fb.rows <= bounds.exactMaxRows && fc.rows <= bounds.exactMaxRows) {
      const same = { compared: 'exact' as const, base_rows: fb.rows, branch_rows: fc.rows, ...narrower };
      if (fb.rows === fc.rows && fb.hash === fc.hash)
        return { ...same, rows_added: 0, rows_removed: 0, rows_changed: 0 };
      const [rb, rc] = await Promise.all([
        catalog.rowHashes(base, b, columns, key, bounds.exactMaxRows),
        catalog.rowHashes(branch, c, columns, key, bounds.exactMaxRows),
      ]);
      return { ...same, ...(key.length ? byKey(rb, rc) : byMultiset(rb, rc)) };
    }
  }
  const [nb, nc] = await Promise.all([catalog.rowCount(base, b), catalog.rowCount(branch, c)]);
  return {
    compared: 'counts',
    base_rows: nb,
    branch_rows: nc,
    rows_added: Math.max(0, nc - nb),
    rows_removed: Math.max(0, nb - nc),
    rows_changed: null,
    ...narrower,
  };
}

function byKey(base: { k: string | null; h: string }[], branch: { k: string | null; h: string }[]) {
  const b = new Map(base.map((r) => [r.k, r.h]));
  let added = 0;
  let changed = 0;
  for (const r of branch) {
    const h = b.get(r.k);
    if (h === undefined) added++;
    else if (h !== r.h) changed++;
    b.delete(r.k);
  }
  return { rows_added: added, rows_removed: b.size, rows_changed: changed };
}

function byMultiset(base: { h: string }[], branch: { h: string }[]) {
  const left = new Map<string, number>();
  for (const r of base) left.set(r.h, (left.get(r.h) ?? 0) + 1);
  let added = 0;
  for (const r of branch) {
    const n = left.get(r.h) ?? 0;
    if (n > 0) left.set(r.h, n - 1);
    else added++;
  }
  let removed = 0;
  for (const n of left.values()) removed += n;
  return { rows_added: added, rows_removed: removed, rows_changed: null };
}
