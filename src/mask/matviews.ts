// Materialized views hold rows computed from tables: masking the tables leaves the old rows in the view until it is
// refreshed (issue 41: a view over masked columns kept 300 of 300 real emails). So after masking, pgx refreshes each
// one that reads, directly or through views, a table with a masked column or a function of the user's (whose reads the
// catalog does not show), in dependency order, in the masking's transaction; a rule on the view can say `empty` (left
// unpopulated) or `keep` instead (decision 469).
import type { Db } from '../server/db.js';
import { relationsOf } from '../server/mask-catalog.js';

export interface MatviewStep {
  oid: number;
  schema: string;
  name: string;
  populated: boolean;
  /** It reads a table with personal columns (or a function of the user's): refreshed unless a rule says otherwise. */
  readsPersonal: boolean;
}

/** Every materialized view of the user's, those read by others first, with whether it reads `personalTables`. */
export async function matviewPlan(db: Db, personalTables: ReadonlySet<number>): Promise<MatviewStep[]> {
  const { relations, edges } = await relationsOf(db);
  const reads = new Map<number, { to: Set<number>; fn: boolean }>();
  for (const e of edges) {
    const r = reads.get(e.from) ?? { to: new Set<number>(), fn: false };
    if (e.to !== null) r.to.add(e.to);
    r.fn ||= e.userFunction;
    reads.set(e.from, r);
  }
  const touches = (oid: number, seen = new Set<number>()): boolean => {
    if (personalTables.has(oid)) return true;
    if (seen.has(oid)) return false;
    seen.add(oid);
    const r = reads.get(oid);
    return !!r && (r.fn || [...r.to].some((t) => touches(t, seen)));
  };
  const matviews = relations.filter((r) => r.relkind === 'm');
  // Depth-first: a view's inputs (through plain views) come before it.
  const ordered: MatviewStep[] = [];
  const placed = new Set<number>();
  const byOid = new Map(matviews.map((m) => [m.oid, m]));
  const place = (oid: number, path: Set<number>) => {
    if (placed.has(oid) || path.has(oid)) return;
    path.add(oid);
    for (const t of reads.get(oid)?.to ?? []) place(t, path);
    const m = byOid.get(oid);
    if (m) {
      placed.add(oid);
      ordered.push({ oid, schema: m.schema, name: m.name, populated: m.populated, readsPersonal: touches(oid) });
    }
  };
  for (const m of matviews) place(m.oid, new Set());
  return ordered;
}
