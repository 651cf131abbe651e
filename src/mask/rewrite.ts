// The masked tables rewritten over two connections (decision 540): on a copy whose rows sit in a few big tables, one
// connection rewriting them one after the other leaves the server's other core idle. Each table is rewritten in its
// own transaction (a rewrite, or an UPDATE with its triggers off), the largest first, from one queue both connections
// take from. The copy stays stamped unfinished through all of it (decision 460): a process killed between two tables
// leaves a copy that nothing is made from and that the next import or sync drops, as one killed before a single COMMIT
// did.
import type { Db } from '../server/db.js';
import { drainSharedQueue } from '../lib/shared-queue.js';
import * as sql from '../server/mask-catalog.js';

export interface TablePlan {
  schema: string;
  table: string;
  rows: number;
  /** A view, rule, policy or generated column uses a masked column: UPDATE, not ALTER … TYPE. */
  update: boolean;
  sets: { column: string; type: string; collation: string | null; expr: string }[];
}

/**
 * Masks every table of `tables` over the connections `dbs` (the session functions `defs` made on each first); returns
 * the tables masked by UPDATE (their old row versions are left for VACUUM FULL) and each table's time in ms. Both
 * connections run to their end before the first error is thrown, each table that failed rolled back.
 */
export async function rewriteTables(
  dbs: Db[],
  tables: TablePlan[],
  o: { salt: string; defs: string[]; progress: (msg: string) => void },
): Promise<{ updated: TablePlan[]; ms: Record<string, number> }> {
  const queue = [...tables].sort((a, b) => b.rows - a.rows);
  const updated: TablePlan[] = [];
  const ms: Record<string, number> = {};
  let done = 0;
  const one = async (db: Db, t: TablePlan) => {
    o.progress(
      `masking: ${++done}/${queue.length} table(s), now ${t.schema}.${t.table} (~${Math.round(t.rows)} rows, ${t.sets.length} column(s))`,
    );
    const t0 = performance.now();
    await db.query('BEGIN');
    try {
      await sql.setMaskSalt(db, o.salt);
      if (t.update) {
        // ALTER … TYPE is refused: UPDATE (it recomputes generated columns), with the table's triggers off (an audit
        // trigger would copy the old values); VACUUM FULL after removes the old row versions.
        const triggers = await sql.enabledTriggers(db, t.schema, t.table);
        for (const tg of triggers) await sql.setTrigger(db, t.schema, t.table, tg, false);
        await sql.updateColumns(db, t.schema, t.table, t.sets);
        for (const tg of triggers) await sql.setTrigger(db, t.schema, t.table, tg, true);
        updated.push(t);
      } else {
        await sql.rewriteColumns(db, t.schema, t.table, t.sets);
      }
      await db.query('COMMIT');
    } catch (err) {
      await db.query('ROLLBACK').catch(() => {});
      throw err;
    }
    ms[`${t.update ? 'update' : 'rewrite'} ${t.schema}.${t.table}`] = Math.round(performance.now() - t0);
  };
  const ready = (db: Db) => async () => {
    for (const d of o.defs) await db.query(d);
  };
  await drainSharedQueue(
    dbs.map((db) => ({ worker: db, ready: ready(db) })),
    queue,
    one,
  );
  return { updated, ms };
}
