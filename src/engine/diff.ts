// `pgx agent diff`: what a branch changed against a baseline (its parent, the template, or another branch), from
// catalog queries on both databases (decision 161: no schema-diff package; definitions are compared as md5s of
// PostgreSQL's own pg_get_*def text, so a diff says what changed, by kind and name, never how).
//
// Data: per table present on both sides, over the columns both have with the same type. A table within the bound
// (both sides at most `exactMaxRows` rows and `exactMaxBytes` on disk) is compared exactly: a one-scan fingerprint
// (count and a sum of row hashes) on each side, and only when they differ, each row's key and hash (rows matched by
// primary key: added, removed, changed; without one, as multisets: added and removed). A bigger table is counted
// only, and its entry says so. A time budget (the SubagentStop summary's) leaves the tables it did not reach
// `skipped`, said too.
//
// A database that refuses connections is read through a copy or an opening: the template through its baseline copy
// (one per template build, made under the template's lock and reused; template.ts's sweep drops it with the build's
// leftovers), a retiring branch by letting the admin in for the diff, under the branch's identity lock (its role stays
// NOLOGIN, so nobody else gets in), and closing it again.
import { randomBytes } from 'node:crypto';
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { buildsOf, forgetBuild, recordBuild } from '../registry/template-builds.js';
import { withIdentityLock, withTemplateLock, withTemplateLockWithin } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import type { SchemaObject, TableShape } from '../server/catalog.js';
import { connect, type Db } from '../server/db.js';
import type { EngineContext } from './context.js';
import { withRoomFor } from './disk-budget.js';
import { templateName } from './template.js';

/** What to compare against: the record's parent (null: the template), the template, or a branch by name. */
export type Against = 'parent' | 'template' | { branch: string };

export interface DiffBounds {
  /** Exact compare of a table only when each side has at most this many rows … */
  exactMaxRows: number;
  /** … and at most this many bytes on disk; otherwise its rows are counted only. */
  exactMaxBytes: number;
  /** Stop comparing tables after this long (the rest are `skipped`); undefined: no limit. */
  budgetMs?: number;
}

export const DIFF_BOUNDS: DiffBounds = { exactMaxRows: 100_000, exactMaxBytes: 64 * 1024 * 1024 };

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

/** A connection as the admin to the record's own database, let in for the diff if it is retiring. */
async function readable<T>(
  e: EngineContext,
  rec: BranchRecord,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const reg = e.registry;
  const info = await catalog.databaseInfo(reg, rec.name);
  if (!info.exists)
    throw new PgxError(
      'NOT_FOUND',
      `Branch "${rec.name}" has a record but no database (dropped meanwhile, or a creation that never finished).`,
      'See `pgx agent ls`.',
    );
  if (!catalog.isOwnBranch(info, rec))
    throw new PgxError(
      'NOT_PGX_DATABASE',
      `Database "${rec.name}" is not the one pgx made for this branch; pgx will not read it.`,
      '`pgx agent doctor` explains; `pgx agent forget --branch <name>` forgets the record.',
    );
  if (rec.state === 'active' && info.allowConn) return withDb(e, rec.name, timeoutMs, fn);
  // Retiring: connections are refused to everyone, the admin too. Under the identity lock (so no retire, revive or
  // drop runs meanwhile) the admin is let in, and shut out again after; the branch role stays NOLOGIN throughout.
  return withIdentityLock(reg, rec.identity_key, async () => {
    const cur = await records.findByName(reg, rec.name);
    const now = await catalog.databaseInfo(reg, rec.name);
    if (!cur || !catalog.isOwnBranch(now, cur))
      throw new PgxError(
        'NOT_FOUND',
        `Branch "${rec.name}" was dropped or replaced while pgx was about to read it.`,
        'See `pgx agent ls`.',
      );
    if (cur.state === 'active' && now.allowConn) return withDb(e, rec.name, timeoutMs, fn); // revived meanwhile
    if (!now.allowConn) await catalog.allowConnections(reg, rec.name, true);
    try {
      return await withDb(e, rec.name, timeoutMs, fn);
    } finally {
      // Refused again, unless it is active (an active record refusing connections is ensure's to repair). A crash
      // before this leaves a retiring branch only the admin can reach: the next diff of it shuts it, gc drops it.
      if (cur.state !== 'active') await catalog.allowConnections(reg, rec.name, false).catch(() => {});
    }
  });
}

async function withDb<T>(
  e: EngineContext,
  database: string,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const statementTimeoutMs =
    timeoutMs === undefined ? e.admin.statementTimeoutMs : Math.min(timeoutMs, e.admin.statementTimeoutMs ?? timeoutMs);
  const db = await connect({ ...e.admin, database, statementTimeoutMs }, { gate: e.gate });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/**
 * The template refuses connections (a session on it would make every clone from it fail), so it is read through a
 * copy: one per template build (its stamp names the build's oid), made from it once and kept for the next diff.
 * Recorded as one of the template's builds before it is created, and stamped `building`: the template's next refresh
 * sweeps it with the other build leftovers, and `pgx template drop` drops it. Held under the template's lock while
 * read, so that no refresh sweeps it meanwhile (SubagentStart's clones do not take that lock).
 */
async function withTemplateCopy<T>(
  e: EngineContext,
  template: string,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const reg = e.registry;
  const find = () => templateCopy(e, template);
  // With a budget (SubagentStop), the lock is waited for within it: twenty stops at once must not queue behind one
  // another's copy for longer than their summary may take.
  const copy =
    timeoutMs === undefined
      ? await withTemplateLock(reg, template, find)
      : await withTemplateLockWithin(reg, template, timeoutMs, find);
  if (copy === undefined)
    throw new PgxError(
      'BRANCH_FAILED',
      `The template "${template}" is being built or copied by another pgx process.`,
      'Retry in a moment.',
    );
  // Read outside the lock: many diffs read one copy at once. A refresh that sweeps it meanwhile ends this read
  // (DROP … WITH (FORCE)): the diff fails and says so, and the next one makes a copy of the new build.
  return withDb(e, copy, timeoutMs, fn);
}

/** Under the template's lock: this build's copy, made if there is none; other builds' leftovers swept. */
async function templateCopy(e: EngineContext, template: string): Promise<string> {
  const reg = e.registry;
  const info = await catalog.databaseInfo(reg, template);
  if (!info.exists || info.stamp?.kind !== 'template') {
    throw new PgxError(
      'NOT_FOUND',
      `The template "${template}" ${info.exists ? 'is not a pgx template' : 'does not exist (refreshed away, or dropped)'}, ` +
        `so there is nothing to compare with.`,
      'Run `pgx template refresh`, or compare with a branch: `--against <branch>`.',
    );
  }
  const oid = (await catalog.databaseOid(reg, template))!;
  let copy: string | undefined;
  for (const b of await buildsOf(reg, template)) {
    const bi = await catalog.databaseInfo(reg, b);
    const ours = bi.stamp?.kind === 'building' && bi.stamp.project === e.config.project;
    if (ours && bi.stamp?.kind === 'building' && bi.stamp.baseline_of === oid && copy === undefined) {
      copy = b;
      continue;
    }
    // Under the template's lock no build runs: any other recorded build is a leftover (or an older build's copy).
    if (bi.exists && (ours || bi.comment === null)) await catalog.dropDatabase(reg, b, { isTemplate: bi.isTemplate });
    if (!bi.exists || ours || bi.comment === null) await forgetBuild(reg, b);
  }
  if (copy !== undefined) return copy;
  // Not under the template's name prefix (a build's or an aside's): `pgx_base_<slug>_<hash>_<6 hex>`, ≤ 49 bytes.
  const name = `${template.replace(/^pgx_tpl_/, 'pgx_base_')}_${randomBytes(3).toString('hex')}`;
  // The disk budget (disk-budget.ts) first: a refusal leaves neither a record nor a database.
  await withRoomFor(
    e,
    {
      from: template,
      way: reg.serverVersionNum >= 150000 ? 'wal-log' : 'file-copy',
      what: `the diff's baseline "${name}" (a copy of the template "${template}")`,
    },
    async () => {
      await recordBuild(reg, name, template, e.config.project); // record first: a crash leaves a recorded build
      await catalog.createDatabase(reg, name, { template });
    },
  );
  await catalog.writeStamp(reg, name, {
    kind: 'building',
    project: e.config.project,
    started_at: new Date().toISOString(),
    baseline_of: oid,
  });
  await catalog.revokePublicConnect(reg, name);
  return name;
}

/** Compares `base` with `branch`: schema objects, then the rows of the tables on both sides. */
async function compare(
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
