// `pgx agent diff`: what a branch changed against a baseline (its parent, the template, or another branch), from
// catalog queries on both databases (decision 161: no schema-diff package; definitions are compared as md5s of
// PostgreSQL's own pg_get_*def text, so a diff says what changed, by kind and name, never how).
// Here: what is compared against what; the compare is diff-compare.ts, the connections (a retiring branch let in, the
// template read through a copy) diff-access.ts, the answer's shape diff-result.ts.
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import type { Db } from '../server/db.js';
import type { EngineContext } from './context.js';
import { readable, withTemplateCopy } from './diff-access.js';
import { compare } from './diff-compare.js';
import type { DiffBounds, DiffResult } from './diff-result.js';
import { templateName } from './template.js';

/** What to compare against: the record's parent (null: the template), the template, or a branch by name. */
export type Against = 'parent' | 'template' | { branch: string };

export const DIFF_BOUNDS: DiffBounds = { exactMaxRows: 100_000, exactMaxBytes: 64 * 1024 * 1024 };

/** Diffs `rec`'s database against `against`. */
export async function diffBranch(
  e: EngineContext,
  rec: BranchRecord,
  against: Against,
  bounds: DiffBounds = DIFF_BOUNDS,
): Promise<DiffResult> {
  const t0 = performance.now();
  const target = await baselineOf(e, rec, against);
  const timeoutMs = bounds.budgetMs;
  return readable(e, rec, timeoutMs, (branchDb) =>
    withBaseline(e, target, timeoutMs, async (baseDb) => {
      const r = await compare(baseDb, branchDb, bounds, t0);
      return {
        branch: rec.name,
        against: { kind: target.kind, database: target.database, parent_was_template: target.parentWasTemplate },
        ...r,
        elapsed_ms: Math.round(performance.now() - t0),
      };
    }),
  );
}

interface Baseline {
  kind: 'parent' | 'template' | 'branch';
  database: string;
  parentWasTemplate: boolean;
  /** A branch record (read like the diffed branch), or the template (read through its baseline copy). */
  record?: BranchRecord;
}

async function baselineOf(e: EngineContext, rec: BranchRecord, against: Against): Promise<Baseline> {
  const template = (): Baseline => ({
    kind: against === 'parent' ? 'parent' : 'template',
    database: rec.template ?? templateName(e.config.project, e.config.source),
    parentWasTemplate: against === 'parent',
  });
  if (against === 'template') return template();
  const name = against === 'parent' ? rec.parent : against.branch;
  if (!name) return template();
  const base = await records.findByName(e.registry, name);
  if (!base) {
    throw new PgxError(
      'NOT_FOUND',
      against === 'parent'
        ? `The parent of "${rec.name}", "${name}", is no longer a pgx branch (dropped, or gc'd).`
        : `No pgx branch named "${name}".`,
      against === 'parent'
        ? 'Compare with the template instead: `--against template`.'
        : 'See `pgx agent ls`; --against takes parent, template or a branch name.',
    );
  }
  return { kind: against === 'parent' ? 'parent' : 'branch', database: name, parentWasTemplate: false, record: base };
}

async function withBaseline<T>(
  e: EngineContext,
  b: Baseline,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  if (b.record) return readable(e, b.record, timeoutMs, fn);
  return withTemplateCopy(e, b.database, timeoutMs, fn);
}
