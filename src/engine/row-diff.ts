// The rows half of a branch as a migration (decisions 500–509): per table, what the branch changed since its fork
// point, matched by primary key (added, removed, changed, and which columns), read as text (each value's own text
// form, which its column's type reads back). Within the exact bound only (diff.ts DIFF_BOUNDS: both sides at most
// 100,000 rows and 64 MB); a bigger table, one without a primary key, or one whose key changed is compared by a
// one-scan fingerprint only and, when it differs, left out and named: never carried half, never silently dropped.
//
// A column the migration adds (or retypes) is not in the fork point's rows: the branch's value is compared with what
// the migration gives it (its default, or the old value's text), read in a READ ONLY transaction that is rolled back,
// so a volatile default (nextval) fails there instead of changing the branch; then every row gets the branch's value.
import type { Db } from '../server/db.js';
import * as mc from '../server/merge-catalog.js';
import type { RowColumn, RowTable } from '../server/merge-catalog.js';
import type { DiffBounds } from './diff-result.js';

/** Why a table's rows are not in the migration, and whether they differ (null: not known). */
export interface LeftOut {
  table: string;
  why: 'over the exact bound' | 'no primary key' | 'its primary key changed';
  changed: boolean | null;
}

/** One table's rows as the branch changed them since the fork point. */
export interface TableChange {
  t: RowTable;
  /** Rows only the branch has: their values over `columns`. */
  added: { k: string; v: (string | null)[] }[];
  /** Rows only the fork point has: their key values. */
  removed: { k: string; key: (string | null)[] }[];
  /** Rows on both sides that differ: their key values and the columns to set. */
  changed: { k: string; key: (string | null)[]; set: { column: string; value: string | null }[] }[];
  /** The columns an INSERT writes (the branch's, generated ones left out). */
  columns: string[];
  /** A new table (not at the fork point): every row of it is added. */
  isNew: boolean;
}

export interface RowCompare {
  tables: TableChange[];
  leftOut: LeftOut[];
}

const within = (t: RowTable, b: DiffBounds) => t.bytes <= b.exactMaxBytes && t.est_rows <= b.exactMaxRows;
const writable = (t: RowTable) => t.columns.filter((c) => !c.generated);

/** Runs reads that evaluate user expressions (defaults) where they can change nothing: READ ONLY, rolled back. */
async function readOnly<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  await db.query('BEGIN READ ONLY');
  try {
    return await fn();
  } finally {
    await db.query('ROLLBACK').catch(() => {});
  }
}

/** Every table's row changes from `base` (the fork point) to `branch`. `tables`: only these (qnames), if given. */
export async function compareRows(base: Db, branch: Db, bounds: DiffBounds): Promise<RowCompare> {
  const [bt, st] = await Promise.all([mc.rowTables(base), mc.rowTables(branch)]);
  const baseByName = new Map(bt.map((t) => [t.qname, t]));
  const out: RowCompare = { tables: [], leftOut: [] };
  for (const s of st) {
    const b = baseByName.get(s.qname);
    const r = b ? await compareTable(base, branch, b, s, bounds) : await newTable(branch, s, bounds);
    if (r && 'why' in r) out.leftOut.push(r);
    else if (r && (r.added.length || r.removed.length || r.changed.length)) out.tables.push(r);
  }
  return out;
}

async function newTable(branch: Db, s: RowTable, bounds: DiffBounds): Promise<TableChange | LeftOut | undefined> {
  const columns = writable(s).map((c) => c.name);
  if (!within(s, bounds)) return { table: s.qname, why: 'over the exact bound', changed: null };
  const rows = await mc.allRows(branch, s, columns, bounds.exactMaxRows + 1);
  if (rows.length > bounds.exactMaxRows) return { table: s.qname, why: 'over the exact bound', changed: true };
  return {
    t: s,
    added: rows.map((v, i) => ({ k: `new:${i}`, v })),
    removed: [],
    changed: [],
    columns,
    isNew: true,
  };
}

/** The columns of the branch's table that the fork point does not have with the same type: added, or retyped. */
function newColumns(b: RowTable, s: RowTable): { added: RowColumn[]; retyped: RowColumn[]; same: string[] } {
  const types = new Map(b.columns.map((c) => [c.name, c.type]));
  const out = { added: [] as RowColumn[], retyped: [] as RowColumn[], same: [] as string[] };
  for (const c of writable(s)) {
    const had = types.get(c.name);
    if (had === c.type) out.same.push(c.name);
    else if (had === undefined) {
      if (!c.identityAlways) out.added.push(c);
    } else out.retyped.push(c);
  }
  return out;
}

async function compareTable(
  base: Db,
  branch: Db,
  b: RowTable,
  s: RowTable,
  bounds: DiffBounds,
): Promise<TableChange | LeftOut | undefined> {
  const { added, retyped, same } = newColumns(b, s);
  const sameKey = s.key.length > 0 && s.key.join('\0') === b.key.join('\0') && s.key.every((k) => same.includes(k));
  // First one scan a side: unchanged (same rows over the common columns, every added column at its default) is done.
  const [fb, fs] = await Promise.all([
    mc.tableSum(base, b, same),
    readOnly(branch, () => mc.tableSum(branch, s, same, added)).catch(async () => ({
      ...(await mc.tableSum(branch, s, same)),
      allDefault: added.length === 0, // a default that can't be evaluated read-only (nextval): not proven
    })),
  ]);
  const unchanged = fb.rows === fs.rows && fb.hash === fs.hash && fs.allDefault && !retyped.length;
  if (unchanged) return undefined;
  if (!within(b, bounds) || !within(s, bounds) || fb.rows > bounds.exactMaxRows || fs.rows > bounds.exactMaxRows)
    return { table: s.qname, why: 'over the exact bound', changed: true };
  if (!sameKey)
    return { table: s.qname, why: s.key.length ? 'its primary key changed' : 'no primary key', changed: true };
  const limit = bounds.exactMaxRows + 1;
  const extraS = [...added.map((c) => mc.isDefaultValue(c.name, c.default)), ...retyped.map((c) => mc.asText(c.name))];
  const sRows = await readOnly(branch, () =>
    mc.keyedRows(branch, s, { key: s.key, hashed: same, extra: extraS, limit }),
  ).catch(() =>
    // a default that can't be evaluated read-only (nextval): every row takes the branch's value of that column
    mc.keyedRows(branch, s, {
      key: s.key,
      hashed: same,
      extra: [...added.map(() => `'false'`), ...retyped.map((c) => mc.asText(c.name))],
      limit,
    }),
  );
  const bRows = await mc.keyedRows(base, b, {
    key: b.key,
    hashed: same,
    extra: retyped.map((c) => mc.asText(c.name)),
    limit,
  });
  const baseRows = new Map(bRows.map((r) => [r.k, r]));
  const addedKeys: string[] = [];
  const changedKeys = new Map<string, string[]>(); // key → the added/retyped columns to set
  for (const r of sRows) {
    const old = baseRows.get(r.k);
    baseRows.delete(r.k);
    if (!old) {
      addedKeys.push(r.k);
      continue;
    }
    const newCols = [
      ...added.filter((_, i) => r.x[i] !== 'true').map((c) => c.name),
      ...retyped.filter((_, i) => r.x[added.length + i] !== old.x[i]).map((c) => c.name),
    ];
    if (old.h !== r.h || newCols.length) changedKeys.set(r.k, newCols);
  }
  const removedKeys = [...baseRows.keys()];
  const columns = writable(s).map((c) => c.name);
  const [sVals, bVals, rVals] = await Promise.all([
    mc.rowsByKey(branch, s, s.key, columns, [...addedKeys, ...changedKeys.keys()]),
    mc.rowsByKey(base, b, b.key, same, [...changedKeys.keys()]),
    mc.rowsByKey(base, b, b.key, b.key, removedKeys),
  ]);
  const bByKey = new Map(bVals.map((r) => [r.k, r.v]));
  const sByKey = new Map(sVals.map((r) => [r.k, r.v]));
  const at = (name: string) => columns.indexOf(name);
  const keyOf = (v: (string | null)[]) => s.key.map((k) => v[at(k)]!);
  return {
    t: s,
    added: addedKeys.map((k) => ({ k, v: sByKey.get(k)! })),
    removed: rVals.map((r) => ({ k: r.k, key: r.v })),
    changed: [...changedKeys].map(([k, newCols]) => {
      const v = sByKey.get(k)!;
      const old = bByKey.get(k)!;
      const set = [...same.filter((c, i) => !s.key.includes(c) && old[i] !== v[at(c)]), ...newCols].map((column) => ({
        column,
        value: v[at(column)]!,
      }));
      return { k, key: keyOf(v), set };
    }),
    columns,
    isNew: false,
  };
}
