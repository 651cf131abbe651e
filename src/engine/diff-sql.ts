// `pgx agent diff --sql`: what a branch changed since its fork point, as one migration (decisions 500–509). The
// schema from @supabase/pg-delta (schema-plan.ts), then the rows of the tables compared exactly (row-diff.ts), in an
// order that applies (row-statements.ts), as one transaction (migration-text.ts). Applied to the fork point, it gives
// the branch. Loaded on demand by the CLI only (api.ts; the hot-path bundles carry a stub).
import type { BranchRecord } from '../registry/records.js';
import type { Db } from '../server/db.js';
import * as mc from '../server/merge-catalog.js';
import type { EngineContext } from './context.js';
import { readable } from './diff-access.js';
import { DIFF_BOUNDS } from './diff.js';
import type { DiffBounds } from './diff-result.js';
import { withForkPoint, type ForkPoint } from './fork-point.js';
import { renderMigration } from './migration-text.js';
import { compareRows, type LeftOut, type TableChange } from './row-diff.js';
import { rowCounts, rowStatements } from './row-statements.js';
import { readSchema, schemaMigration, type SchemaMigration } from './schema-plan.js';

export interface SqlDiffResult {
  branch: string;
  fork_point: ForkPoint;
  schema: SchemaMigration;
  rows: { table: string; inserted: number; updated: number; deleted: number }[];
  left_out: LeftOut[];
  unmodeled: string[];
  /** Statements marked risky (a rewrite, a drop, data loss). */
  risky: number;
  changed: boolean;
  /** The migration as one SQL file. */
  sql: string;
  elapsed_ms: number;
}

/** `pgx agent diff --sql`: the branch since its fork point, as a migration. */
export async function branchAsSql(
  e: EngineContext,
  rec: BranchRecord,
  bounds: DiffBounds = DIFF_BOUNDS,
): Promise<SqlDiffResult> {
  const t0 = performance.now();
  return withForkPoint(e, rec, (base, fp) =>
    readable(e, rec, undefined, async (branch) => {
      const [bs, ss] = await Promise.all([readSchema(base), readSchema(branch)]);
      const schema = await schemaMigration(bs.facts, ss.facts);
      const cmp = await compareRows(base, branch, bounds);
      const parts = await rowParts(branch, base, cmp.tables, false);
      const sql = renderMigration({
        title: `pgx agent diff --sql: what branch "${rec.name}" changed since its fork point ("${fp.database}", a ${fp.kind}).`,
        schema,
        ...parts,
        leftOut: cmp.leftOut,
        unmodeled: [...new Set([...bs.unmodeled, ...ss.unmodeled])],
      });
      return {
        branch: rec.name,
        fork_point: fp,
        schema,
        rows: rowCounts(cmp.tables),
        left_out: cmp.leftOut,
        unmodeled: [...new Set([...bs.unmodeled, ...ss.unmodeled])],
        risky: schema.steps.filter((s) => s.risks.length).length,
        changed: schema.steps.length + parts.rows.length + parts.after.length > 0,
        sql,
        elapsed_ms: Math.round(performance.now() - t0),
      };
    }),
  );
}

/**
 * The row statements and what goes around them: deferrable constraints deferred, the tables' user triggers (as
 * `final` has them: the state after the schema statements) off and back on, sequences moved to the branch's values
 * (`atLeast`: never back from where the target has them, for a merge).
 */
export async function rowParts(
  final: Db,
  base: Db,
  changes: TableChange[],
  atLeast: boolean,
  branch: Db = final,
): Promise<{ before: string[]; rows: ReturnType<typeof rowStatements>; after: string[] }> {
  const rows = rowStatements(changes, await mc.foreignKeys(branch));
  const before: string[] = rows.length ? ['SET CONSTRAINTS ALL DEFERRED'] : [];
  const after: string[] = [];
  for (const c of changes) {
    for (const trigger of await mc.enabledTriggers(final, c.t).catch(() => [])) {
      const t = mc.triggerToggle(c.t, trigger);
      before.push(t.off);
      after.push(t.on);
    }
  }
  const [bSeq, sSeq] = await Promise.all([mc.sequenceStates(base), mc.sequenceStates(branch)]);
  const had = new Map(bSeq.map((s) => [s.name, s.last]));
  for (const s of sSeq)
    if (s.last !== null && had.get(s.name) !== s.last) after.push(mc.setSequence(s.name, s.last, atLeast));
  return { before, rows, after };
}
