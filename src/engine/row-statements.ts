// A branch's row changes (row-diff.ts) as statements, in an order that applies: the rows a foreign key points at go in
// before the rows that point at them, and come out after them. So: INSERTs, parents first; then UPDATEs; then
// DELETEs, children first (a child re-pointed from an old parent row to a new one: the new row exists before the
// child moves, the old one goes after). Deferrable constraints are deferred to the end of the transaction. A table's
// user triggers are turned off around its rows (the branch's triggers already fired when it made them: firing
// again would double their effects) and given back their state after.
import * as mc from '../server/merge-catalog.js';
import type { TableChange } from './row-diff.js';

const BATCH = 500;

export interface RowStatement {
  table: string;
  phase: 'insert' | 'update' | 'delete';
  sql: string;
}

/** Tables in an order where a referenced table comes before the tables that reference it (cycles: as listed). */
export function parentsFirst(tables: string[], fks: { from: string; to: string }[]): string[] {
  const set = new Set(tables);
  const deps = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const fk of fks) if (set.has(fk.from) && set.has(fk.to) && fk.from !== fk.to) deps.get(fk.from)!.add(fk.to);
  const out: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: string) => {
    if (state.get(t)) return; // done, or a cycle: its order is as listed
    state.set(t, 'visiting');
    for (const d of deps.get(t)!) visit(d);
    state.set(t, 'done');
    out.push(t);
  };
  for (const t of tables) visit(t);
  return out;
}

/** The row statements for these tables' changes, ordered (see the top of this file). */
export function rowStatements(changes: TableChange[], fks: { from: string; to: string }[]): RowStatement[] {
  const byName = new Map(changes.map((c) => [c.t.qname, c]));
  const order = parentsFirst([...byName.keys()], fks);
  const selfReferencing = new Set(fks.filter((f) => f.from === f.to).map((f) => f.from));
  const out: RowStatement[] = [];
  for (const name of order) {
    const c = byName.get(name)!;
    // A table whose rows point at each other goes in as one statement: its foreign key is checked at the statement's end.
    const size = selfReferencing.has(name) ? Infinity : BATCH;
    const overriding = c.t.columns.some((col) => col.identityAlways && c.columns.includes(col.name));
    for (let i = 0; i < c.added.length; i += size) {
      const rows = c.added.slice(i, i + size).map((r) => r.v);
      out.push({ table: name, phase: 'insert', sql: mc.insertRows(c.t, c.columns, rows, overriding) });
    }
  }
  for (const name of order) {
    const c = byName.get(name)!;
    for (const r of c.changed)
      if (r.set.length) out.push({ table: name, phase: 'update', sql: mc.updateRow(c.t, c.t.key, r.key, r.set) });
  }
  for (const name of [...order].reverse()) {
    const c = byName.get(name)!;
    for (let i = 0; i < c.removed.length; i += BATCH) {
      const keys = c.removed.slice(i, i + BATCH).map((r) => r.key);
      out.push({ table: name, phase: 'delete', sql: mc.deleteRows(c.t, c.t.key, keys) });
    }
  }
  return out;
}

/** How many rows each table's statements insert, update and delete. */
export function rowCounts(
  changes: TableChange[],
): { table: string; inserted: number; updated: number; deleted: number }[] {
  return changes.map((c) => ({
    table: c.t.qname,
    inserted: c.added.length,
    updated: c.changed.filter((r) => r.set.length).length,
    deleted: c.removed.length,
  }));
}
