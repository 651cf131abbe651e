// The rows of a merge, three-way (decision 501, the conflict rule): the branch's row changes since the fork point
// (row-diff.ts), checked against what the parent did to the same rows since the same point. Rows are matched by key
// and compared over the columns all three have with one type. A row the parent left as it was takes the branch's
// change; one the parent changed the same way is already there (left out); one both changed otherwise (updated, or
// one deleted and the other updated, or both inserted the key with other contents) is a conflict, shown with its
// three versions. A table the parent dropped that the branch wrote is a conflict; so is one the branch dropped that
// the parent wrote. The rows the merge writes are guarded: at the apply, under a lock, each must still be as it was
// read here (else the parent changed it meanwhile, and nothing is applied).
import type { Db } from '../server/db.js';
import * as mc from '../server/merge-catalog.js';
import type { RowTable } from '../server/merge-catalog.js';
import type { TableChange } from './row-diff.js';

export interface RowConflict {
  table: string;
  /** The row's key as the server writes it (`(1)`, `(7,abc)`); null: the whole table. */
  key: string | null;
  why: string;
  /** Each side's version of the row as JSON (null: absent there), or of the table: a sentence. */
  fork_point: string | null;
  branch: string | null;
  parent: string | null;
}

/** What a row of the parent must still be at the apply: its hash over `columns` (null: absent). */
export interface RowGuard {
  t: RowTable;
  columns: string[];
  expect: Map<string, string | null>;
}

const sameTypes = (a: RowTable, name: string, type: string) =>
  a.columns.some((c) => c.name === name && c.type === type);

/** The branch's row changes less what the parent already has, the conflicts, and the guards for the apply. */
export async function mergeRows(
  base: Db,
  branch: Db,
  parent: Db,
  changes: TableChange[],
): Promise<{ changes: TableChange[]; conflicts: RowConflict[]; guards: RowGuard[] }> {
  const [bt, pt] = await Promise.all([mc.rowTables(base), mc.rowTables(parent)]);
  const baseT = new Map(bt.map((t) => [t.qname, t]));
  const parentT = new Map(pt.map((t) => [t.qname, t]));
  const out = { changes: [] as TableChange[], conflicts: [] as RowConflict[], guards: [] as RowGuard[] };
  for (const c of changes) {
    const p = parentT.get(c.t.qname);
    if (!p) {
      // a new table the parent does not have is made by the schema part; one the parent dropped was written here
      if (c.isNew) out.changes.push(c);
      else
        out.conflicts.push({
          table: c.t.qname,
          key: null,
          why: 'the parent dropped this table; the branch wrote its rows',
          fork_point: 'the table',
          branch: `${c.added.length} inserted, ${c.changed.length} updated, ${c.removed.length} deleted`,
          parent: 'dropped',
        });
      continue;
    }
    if (p.key.join('\0') !== c.t.key.join('\0') || !c.t.key.length) {
      out.conflicts.push({
        table: c.t.qname,
        key: null,
        why: "the parent's table has another primary key (or none): its rows can't be matched",
        fork_point: null,
        branch: `key (${c.t.key.join(', ')})`,
        parent: `key (${p.key.join(', ')})`,
      });
      continue;
    }
    const b = baseT.get(c.t.qname);
    const cols = c.t.columns
      .filter((col) => !col.generated && sameTypes(p, col.name, col.type) && (!b || sameTypes(b, col.name, col.type)))
      .map((col) => col.name);
    await mergeTable(base, branch, parent, c, p, cols, !!b && !c.isNew, out);
  }
  return out;
}

async function mergeTable(
  base: Db,
  branch: Db,
  parent: Db,
  c: TableChange,
  p: RowTable,
  cols: string[],
  hasBase: boolean,
  out: { changes: TableChange[]; conflicts: RowConflict[]; guards: RowGuard[] },
): Promise<void> {
  const key = c.t.key;
  const limit = Number.MAX_SAFE_INTEGER;
  // A new table's rows carry no key text yet (row-diff.ts numbers them): read the branch's keys for them.
  const added = c.isNew ? await keyedAdded(branch, c) : c.added;
  const touched = [...added.map((r) => r.k), ...c.changed.map((r) => r.k), ...c.removed.map((r) => r.k)];
  const hashes = async (db: Db, t: RowTable, keys: string[]) =>
    new Map((await mc.keyedRows(db, t, { key, hashed: cols, limit, keys })).map((r) => [r.k, r.h]));
  const [hb, hs, hp] = await Promise.all([
    hasBase
      ? hashes(base, c.t, [...c.changed.map((r) => r.k), ...c.removed.map((r) => r.k)])
      : new Map<string, string>(),
    hashes(branch, c.t, [...added.map((r) => r.k), ...c.changed.map((r) => r.k)]),
    hashes(parent, p, touched),
  ]);
  const conflicts: { k: string; why: string }[] = [];
  const expect = new Map<string, string | null>();
  const keep = { added: [] as typeof added, changed: [] as typeof c.changed, removed: [] as typeof c.removed };
  for (const r of added) {
    const now = hp.get(r.k);
    if (now === undefined) (keep.added.push(r), expect.set(r.k, null));
    else if (now !== hs.get(r.k)) conflicts.push({ k: r.k, why: 'both inserted this key, with other contents' });
  }
  for (const r of c.changed) {
    const now = hp.get(r.k);
    if (now === undefined) conflicts.push({ k: r.k, why: 'the parent deleted this row; the branch updated it' });
    else if (now === hb.get(r.k) || now === hs.get(r.k)) (keep.changed.push(r), expect.set(r.k, now));
    else conflicts.push({ k: r.k, why: 'both updated this row' });
  }
  for (const r of c.removed) {
    const now = hp.get(r.k);
    if (now === undefined) continue; // the parent deleted it too
    if (now === hb.get(r.k)) (keep.removed.push(r), expect.set(r.k, now));
    else conflicts.push({ k: r.k, why: 'the parent updated this row; the branch deleted it' });
  }
  if (conflicts.length) {
    const keys = conflicts.map((x) => x.k);
    const [jb, js, jp] = await Promise.all([
      hasBase ? mc.rowsAsJson(base, c.t, key, keys) : new Map<string, string>(),
      mc.rowsAsJson(branch, c.t, key, keys),
      mc.rowsAsJson(parent, p, key, keys),
    ]);
    for (const x of conflicts)
      out.conflicts.push({
        table: c.t.qname,
        key: x.k,
        why: x.why,
        fork_point: jb.get(x.k) ?? null,
        branch: js.get(x.k) ?? null,
        parent: jp.get(x.k) ?? null,
      });
  }
  if (keep.added.length + keep.changed.length + keep.removed.length) {
    out.changes.push({ ...c, ...keep });
    out.guards.push({ t: p, columns: cols, expect });
  }
}

/** A new table's added rows with their key texts (as keyedRows writes them), values as the branch has them. */
async function keyedAdded(branch: Db, c: TableChange): Promise<TableChange['added']> {
  if (!c.t.key.length) return c.added;
  const all = await mc.keyedRows(branch, c.t, { key: c.t.key, hashed: [], limit: Number.MAX_SAFE_INTEGER });
  const vals = await mc.rowsByKey(
    branch,
    c.t,
    c.t.key,
    c.columns,
    all.map((r) => r.k),
  );
  return vals.map((r) => ({ k: r.k, v: r.v }));
}

/** At the apply, under the tables' locks: every guarded row as it was read (the first that is not, if any). */
export async function firstMoved(parent: Db, guards: RowGuard[]): Promise<{ table: string; key: string } | undefined> {
  for (const g of guards) {
    const keys = [...g.expect.keys()];
    const now = new Map(
      (await mc.keyedRows(parent, g.t, { key: g.t.key, hashed: g.columns, limit: keys.length + 1, keys })).map((r) => [
        r.k,
        r.h,
      ]),
    );
    for (const [k, h] of g.expect) if ((now.get(k) ?? null) !== h) return { table: g.t.qname, key: k };
  }
  return undefined;
}
