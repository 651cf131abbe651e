// `pgx agent merge --agent <id>`: a subagent's database work brought back to its session's branch through one
// controlled point (decisions 500–509). Three-way from the subagent's fork point (fork-point.ts): the migration holds
// the subagent's changes only, planned against the session's branch as it is now (schema-plan.ts mergedSchema), so
// the parent's own changes since the fork are never undone; it is checked against what the parent changed since the
// same point (conflicts: schema-plan.ts, row-merge.ts) and applied in ONE transaction on the session's branch, or
// refused with every conflict listed (exit 9) and nothing applied. `dryRun`: the migration and the check, no apply.
//
// Nothing applied unless all of it is: the apply is one transaction (a failed statement, a killed pgx, a lost
// connection roll it back: the server does, for a connection that ends mid-transaction). It first locks the tables
// whose rows it writes (SHARE ROW EXCLUSIVE: the parent's writes to them wait), then proves that nothing it relied on
// moved since the check: the schema's signature (the catalog's objects and their definitions) and every row it writes.
// The session's identity lock is held throughout (no reset, adopt or second merge of it meanwhile).
import { PgxError } from '../lib/errors.js';
import { markMerged } from '../registry/fork-points.js';
import { withIdentityLock } from '../registry/locks.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import type { Db } from '../server/db.js';
import * as mc from '../server/merge-catalog.js';
import type { EngineContext } from './context.js';
import { readable } from './diff-access.js';
import { DIFF_BOUNDS } from './diff.js';
import { rowParts } from './diff-sql.js';
import { withForkPoint, type ForkPoint } from './fork-point.js';
import { renderMigration } from './migration-text.js';
import { mergeTargets } from './merge-targets.js';
import { compareRows, type LeftOut } from './row-diff.js';
import { firstMoved, mergeRows, type RowConflict, type RowGuard } from './row-merge.js';
import { rowCounts, type RowStatement } from './row-statements.js';
import { mergedSchema, readSchema, schemaMigration, type SchemaConflict, type SchemaMigration } from './schema-plan.js';

export interface MergeOptions {
  /** Print the migration and the check; apply nothing. */
  dryRun?: boolean;
  /** Apply although some tables' row changes can't be carried (over the exact bound, no key): named in the result. */
  partial?: boolean;
  /** How long the apply waits for a lock on the session's branch (ms); default 15 s. */
  lockTimeoutMs?: number;
}

export interface MergeResult {
  agent: string;
  branch: string;
  into: string;
  fork_point: ForkPoint;
  /** applied; dry-run: checked, not applied; nothing: the parent already has every change. */
  outcome: 'applied' | 'dry-run' | 'nothing';
  schema: SchemaMigration;
  rows: { table: string; inserted: number; updated: number; deleted: number }[];
  left_out: LeftOut[];
  unmodeled: string[];
  risky: number;
  conflicts: { schema: SchemaConflict[]; rows: RowConflict[] };
  sql: string;
  elapsed_ms: number;
}

/** The refusal: every conflict, with both sides' versions; nothing was applied. */
export class MergeConflictError extends PgxError {
  constructor(r: MergeResult) {
    const n = r.conflicts.schema.length + r.conflicts.rows.length;
    const first = [
      ...r.conflicts.schema.map((c) => c.object),
      ...r.conflicts.rows.map((c) => `${c.table} ${c.key ?? ''}`),
    ];
    super(
      'MERGE_CONFLICT',
      `Not merged: ${n} change(s) of "${r.branch}" touch what "${r.into}" also changed since the fork point ` +
        `(${first.slice(0, 3).join('; ')}${n > 3 ? '; …' : ''}). Nothing was applied.`,
      `See each with both sides' versions: \`pgx agent merge --agent ${r.agent} --dry-run\`. Settle it in one of ` +
        "the branches (or by hand in the session's), then merge again; or take the branch whole: `pgx agent adopt`.",
      { data: { conflicts: r.conflicts } },
    );
  }
}

export async function mergeAgent(e: EngineContext, agentId: string, o: MergeOptions = {}): Promise<MergeResult> {
  const t0 = performance.now();
  const { agent, session } = await mergeTargets(e, agentId);
  return withIdentityLock(e.registry, session.identity_key, async () => {
    const into = await records.findByName(e.registry, session.name);
    if (!into || into.identity_key !== session.identity_key || into.state !== 'active')
      throw new PgxError(
        'NOT_FOUND',
        `The session's branch "${session.name}" is gone or stopped.`,
        'See `pgx agent ls`.',
      );
    const r = await withForkPoint(e, agent, (base, fp) =>
      readable(e, agent, undefined, (branch) =>
        readable(e, into, undefined, (parent) => merge(e, o, agent, into, fp, base, branch, parent)),
      ),
    );
    return { ...r, elapsed_ms: Math.round(performance.now() - t0) };
  });
}

async function merge(
  e: EngineContext,
  o: MergeOptions,
  agent: BranchRecord,
  into: BranchRecord,
  fp: ForkPoint,
  base: Db,
  branch: Db,
  parent: Db,
): Promise<MergeResult> {
  const [bs, ss, ps] = await Promise.all([readSchema(base), readSchema(branch), readSchema(parent)]);
  const merged = await mergedSchema(bs.facts, ss.facts, ps.facts);
  const schema = await schemaMigration(ps.facts, merged.desired);
  const cmp = await compareRows(base, branch, DIFF_BOUNDS);
  const rows = await mergeRows(base, branch, parent, cmp.tables);
  rows.conflicts.push(...(await droppedButWritten(base, branch, parent)));
  const parts = await rowParts(parent, base, rows.changes, true, branch);
  const unmodeled = [...new Set([...bs.unmodeled, ...ss.unmodeled, ...ps.unmodeled])];
  const result: MergeResult = {
    agent: agent.agent_id ?? '',
    branch: agent.name,
    into: into.name,
    fork_point: fp,
    outcome: o.dryRun ? 'dry-run' : 'applied',
    schema,
    rows: rowCounts(rows.changes),
    left_out: cmp.leftOut,
    unmodeled,
    risky: schema.steps.filter((s) => s.risks.length).length,
    conflicts: { schema: merged.conflicts, rows: rows.conflicts },
    sql: renderMigration({
      title: `pgx agent merge: what branch "${agent.name}" changed since its fork point ("${fp.database}"), onto "${into.name}" as it is now.`,
      schema,
      ...parts,
      leftOut: cmp.leftOut,
      unmodeled,
    }),
    elapsed_ms: 0,
  };
  if (o.dryRun) return result;
  if (merged.conflicts.length || rows.conflicts.length) throw new MergeConflictError(result);
  refuseWhatCantBeCarried(result, o);
  if (!schema.steps.length && !parts.rows.length && !parts.after.length) {
    await markMerged(e.registry, agent.name, into.name);
    return { ...result, outcome: 'nothing' };
  }
  await applyInOneTransaction(parent, {
    signature: await schemaSignature(parent),
    schema,
    rows: parts.rows,
    after: parts.after,
    changes: rows.changes.map((c) => c.t),
    guards: rows.guards,
    lockTimeoutMs: o.lockTimeoutMs ?? 15_000,
    role: into.role,
  });
  await markMerged(e.registry, agent.name, into.name); // after the commit: a crash between leaves a merge not recorded
  return result;
}

/** Rows left out that differ (`--partial` takes them as named), and statements no transaction can hold. */
function refuseWhatCantBeCarried(r: MergeResult, o: MergeOptions): void {
  const outside = r.schema.steps.filter((s) => s.outsideTransaction);
  if (outside.length)
    throw new PgxError(
      'MERGE_FAILED',
      `Not merged: ${outside.length} statement(s) of the migration can't run inside a transaction (${outside[0]!.sql.slice(0, 80)}…), ` +
        'and a merge is one transaction. Nothing was applied.',
      `Apply it by hand from \`pgx agent diff --sql --agent ${r.agent}\`, or adopt the branch whole.`,
    );
  const differ = r.left_out.filter((l) => l.changed !== false);
  if (differ.length && !o.partial)
    throw new PgxError(
      'MERGE_FAILED',
      `Not merged: the row changes of ${differ.length} table(s) can't be carried (${differ.map((l) => `${l.table}: ${l.why}`).join('; ')}). ` +
        'Nothing was applied.',
      `\`--partial\` merges the rest and leaves those tables' rows as the session's branch has them; ` +
        '`pgx agent adopt` takes the branch whole.',
    );
}

/** Tables the branch dropped whose rows the parent wrote since the fork point (the schema merge would drop them). */
async function droppedButWritten(base: Db, branch: Db, parent: Db): Promise<RowConflict[]> {
  const [bt, st, pt] = await Promise.all([mc.rowTables(base), mc.rowTables(branch), mc.rowTables(parent)]);
  const inBranch = new Set(st.map((t) => t.qname));
  const inParent = new Map(pt.map((t) => [t.qname, t]));
  const out: RowConflict[] = [];
  for (const b of bt) {
    const p = inParent.get(b.qname);
    if (inBranch.has(b.qname) || !p) continue;
    const cols = b.columns
      .filter((c) => p.columns.some((x) => x.name === c.name && x.type === c.type))
      .map((c) => c.name);
    const [sb, sp] = await Promise.all([mc.tableSum(base, b, cols), mc.tableSum(parent, p, cols)]);
    if (sb.rows !== sp.rows || sb.hash !== sp.hash)
      out.push({
        table: b.qname,
        key: null,
        why: 'the branch dropped this table; the parent wrote its rows',
        fork_point: `${sb.rows} row(s)`,
        branch: 'dropped',
        parent: `${sp.rows} row(s), changed`,
      });
  }
  return out;
}

/** The parent's schema as pgx's catalog reads it (every object and the md5 of its definition), as one digest. */
async function schemaSignature(db: Db): Promise<string> {
  return (await catalog.schemaObjects(db)).map((o) => `${o.kind} ${o.name} ${o.def}`).join('\n');
}

interface Apply {
  signature: string;
  schema: SchemaMigration;
  rows: RowStatement[];
  after: string[];
  changes: mc.RowTable[];
  guards: RowGuard[];
  lockTimeoutMs: number;
  /** The session branch's own role (null: its commands use the admin role). */
  role: string | null;
}

/** One transaction: lock, prove nothing moved, the schema, the rows (triggers off), sequences; COMMIT or nothing. */
async function applyInOneTransaction(parent: Db, a: Apply): Promise<void> {
  let step = 'BEGIN';
  try {
    await parent.query('BEGIN');
    await parent.query(`SELECT pg_catalog.set_config('lock_timeout', $1, true)`, [`${Math.max(1, a.lockTimeoutMs)}ms`]);
    for (const t of a.guards.map((g) => g.t)) await parent.query(mc.lockForMerge(t));
    if ((await schemaSignature(parent)) !== a.signature)
      throw new PgxError(
        'MERGE_FAILED',
        "The session's branch's schema changed while the merge was being prepared; nothing was applied.",
        'Run the merge again (it reads the branch anew).',
      );
    const moved = await firstMoved(parent, a.guards);
    if (moved)
      throw new PgxError(
        'MERGE_FAILED',
        `A row the merge writes (${moved.table} ${moved.key}) changed on the session's branch while the merge was being prepared; nothing was applied.`,
        'Run the merge again (it reads the branch anew).',
      );
    for (const s of [...a.schema.settings, ...mc.TEXT_FORMS.map(([name, value]) => ({ name, value }))])
      await parent.query('SELECT pg_catalog.set_config($1, $2, true)', [s.name, s.value]);
    for (const s of a.schema.steps) await parent.query((step = s.sql));
    if (a.rows.length) await parent.query((step = 'SET CONSTRAINTS ALL DEFERRED'));
    const toggles = [];
    for (const t of a.changes)
      for (const tr of await mc.enabledTriggers(parent, t)) toggles.push(mc.triggerToggle(t, tr));
    for (const t of toggles) await parent.query((step = t.off));
    for (const s of a.rows) await parent.query((step = s.sql));
    for (const t of toggles) await parent.query((step = t.on));
    for (const s of a.after) await parent.query((step = s));
    // What the merge created is the session's role's, as everything else on its branch (roles.ts).
    if (a.role) await catalog.transferOwnershipInBranch(parent, a.role);
    await parent.query((step = 'COMMIT'));
  } catch (err) {
    await parent.query('ROLLBACK').catch(() => {}); // a lost connection rolled back with it
    if (err instanceof PgxError) throw err;
    const code = catalog.sqlstateOf(err);
    throw new PgxError(
      'MERGE_FAILED',
      `The merge failed at a statement and was rolled back; the session's branch is as it was` +
        `${code ? ` (SQLSTATE ${code})` : ''}: ${(err as Error).message}. The statement: ${step.slice(0, 200)}`,
      code === catalog.SQLSTATE.LOCK_NOT_AVAILABLE
        ? "Something on the session's branch holds a lock the merge needs (an open transaction?): end it, then merge again."
        : 'See the whole migration with `--dry-run`; settle the cause in one of the branches, then merge again.',
      { cause: err },
    );
  }
}
