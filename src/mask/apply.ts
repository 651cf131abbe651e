// Masking pgx's own copy in place: scan it (refuse while a personal column has no rule), then rewrite every masked
// table once, each in its own transaction over two connections (rewrite.ts), with each masked column's value replaced
// by its strategy's expression (SQL in the server: no row goes through node). The copy is pgx's private database,
// stamped as unfinished (an import's `pgx:source-importing:` or a build's `pgx:template-building:`) until its caller
// stamps it after this returns: a process killed midway leaves a copy, masked in part or not at all, unusable and
// recorded for the next run to drop; after the last COMMIT and before the stamp, a masked one. Nothing is made from a
// copy in either state (decision 460).
import { PgxError } from '../lib/errors.js';
import type { RegistryDb } from '../registry/locks.js';
import { maskSalt } from '../registry/mask-salt.js';
import { connect, type Db, type StatementGate } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import * as sql from '../server/mask-catalog.js';
import { quoteIdent, quoteLiteral } from '../server/catalog.js';
import { matviewPlan } from './matviews.js';
import { rewriteTables, type TablePlan } from './rewrite.js';
import { avoiding, type NamePools } from './names.js';
import { PROOF_BOUND, proveMasked, type ProofResult } from './prove.js';
import { masking, matviewKey, rulesDigest, type MaskRule, type Strategy } from './rules.js';
import { scanDatabase, type ScanReport } from './scan.js';
import { maskExpression, type MaskContext } from './strategies.js';

export interface MaskResult {
  /** What the copy was masked with (rules.ts rulesDigest); null: no rules. */
  digest: string | null;
  tables: number;
  columns: number;
  /** Rows rewritten (the catalog's estimate). */
  rows: number;
  /** Foreign keys re-added over masked columns: the server checked that every masked key still matches. */
  foreign_keys_checked: number;
  /** Materialized views refreshed from the masked tables (or emptied by their rule). */
  matviews: number;
  /** Comments removed or replaced by their rule. */
  comments: number;
  /** Large objects emptied by the "large objects" rule. */
  large_objects: number;
  /** Personal-looking columns that have a rule (keep included). */
  personal: number;
  /** The check of the masked copy after masking (decision 466); null when nothing was masked. */
  proof: ProofResult | null;
  /** Where the time went, in ms: each step of the masking in order (what the bench prints). */
  steps: Record<string, number>;
  elapsed_ms: number;
}

/** The refusal of a scan that found personal columns without a rule, or rules that do not fit: each named, and what to paste. */
export function refusalOf(report: ScanReport, file: string): PgxError | undefined {
  if (report.problems.length) {
    return new PgxError(
      'CONFIG_INVALID',
      `${file}: [mask] rule(s) that do not fit "${report.database}":\n${report.problems.map((p) => `  "${p.key}": ${p.problem}`).join('\n')}`,
      `Fix or remove those keys in [mask] (the strategies: docs/pgx/local-dev/masking.md), then run it again. ` +
        `\`pgx source scan\` checks the rules without copying anything.`,
    );
  }
  if (report.unruled.length) {
    const list = report.unruled.map((f) => `  ${f.key} (${f.type}): ${f.why.join('; ')}`).join('\n');
    return new PgxError(
      'REFUSED',
      `"${report.database}" holds ${report.unruled.length} column(s) or object(s) that look like personal data and have ` +
        `no [mask] rule in ${file}; pgx copies no personal data to an agent's branch unmasked:\n${list}`,
      `Review each column, then add a rule for it to ${file} (a strategy, or "keep" when it is not personal). ` +
        `Suggested, ready to paste:\n\n${report.block}\n\nThen run the same command again. \`pgx source scan\` ` +
        `shows this without copying anything; docs/pgx/local-dev/masking.md says what each strategy does.`,
    );
  }
  return undefined;
}

export interface MaskTarget {
  /** The admin's parameters; the copy is reached under `database`. */
  admin: ConnParams;
  registry: RegistryDb;
  gate?: StatementGate;
  project: string;
  file: string;
}

/** Scans the copy `database` and masks it with `rules`, then checks the masked copy; or refuses (nothing kept). */
export async function scanAndMask(
  t: MaskTarget,
  database: string,
  rules: readonly MaskRule[],
  progress: (msg: string) => void,
): Promise<MaskResult> {
  const t0 = performance.now();
  const lap = stopwatch();
  const db = await connect({ ...t.admin, database }, { gate: t.gate });
  let second: Db | undefined;
  try {
    // Compiling the check's and the rewrites' expressions to machine code costs more than it saves here (measured:
    // ~0.6 s a query at 64 MB, decision 540).
    await sql.withoutJit(db);
    const report = await scanDatabase(db, database, rules, progress);
    const refused = refusalOf(report, t.file);
    if (refused) throw refused;
    lap('scan');
    const salt = await maskSalt(t.registry, t.project);
    // A second connection when something is masked: the tables are rewritten, and the copy checked, over two
    // (decision 540).
    if (masking(rules).length) {
      second = await connect({ ...t.admin, database }, { gate: t.gate });
      await sql.withoutJit(second);
    }
    const { result: r, analyze } = await maskInPlace([db, ...(second ? [second] : [])], rules, salt, progress, lap);
    let proof: ProofResult | null = null;
    if (second && (r.columns || r.matviews || r.comments || r.large_objects)) {
      // The copy, not the rules: read again, and refused (the caller drops it) if anything personal is left. The
      // first connection joins the check once the masked tables are analyzed again (statistics: an ANALYZE taken
      // before masking may hold original values).
      const columns = await sql.columnsOf(db);
      const analyzed = (async () => {
        progress(`masking: analyzing the ${analyze.length} masked table(s) and view(s) again`);
        for (const a of analyze) await sql.analyze(db, a.schema, a.table, a.columns);
        lap('analyze');
      })();
      analyzed.catch(() => {}); // awaited by the check, which throws its failure; never left unhandled
      proof = await proveMasked(second, {
        database,
        columns,
        rules,
        file: t.file,
        progress,
        also: { db, after: analyzed },
      });
      lap('analyze and check');
    }
    return {
      ...r,
      proof,
      personal: report.personal.length,
      steps: lap.steps,
      elapsed_ms: Math.round(performance.now() - t0),
    };
  } finally {
    await second?.close();
    await db.close();
  }
}

/** Time since the last lap, added under a step's name (a step met twice adds up). */
function stopwatch(): ((step: string) => void) & { steps: Record<string, number> } {
  let last = performance.now();
  const steps: Record<string, number> = {};
  return Object.assign(
    (step: string) => {
      const now = performance.now();
      steps[step] = Math.round((steps[step] ?? 0) + now - last);
      last = now;
    },
    { steps },
  );
}

/** The name pools for this copy: none of its masked names' words (decision 467), read up to the check's bound. */
async function poolsFor(db: Db, columns: sql.ColumnInfo[], rules: readonly MaskRule[]): Promise<NamePools> {
  const words = new Set<string>();
  const naming = (s: Strategy) => ['name', 'first_name', 'last_name', 'username'].includes(s.kind);
  for (const r of rules) {
    const c = columns.find(
      (x) => x.schema === r.schema && x.table === r.table && x.column === r.column && x.relkind !== 'm',
    );
    if (!c || r.on !== 'column') continue;
    const from = sql.boundedFrom(c.schema, c.table, c.bytes, PROOF_BOUND);
    const col = quoteIdent(c.column);
    const exprs =
      r.strategy.kind === 'jsonb'
        ? r.strategy.paths
            .filter((p) => naming(p.strategy))
            .map(
              (p) =>
                `${col} #>> ${quoteLiteral(`{${p.path.map((k) => `"${k.replace(/["\\]/g, '\\$&')}"`).join(',')}}`)}`,
            )
        : naming(r.strategy)
          ? [c.category === 'A' ? `array_to_string(${col}, ' ')` : `${col}::text`]
          : [];
    for (const e of exprs) for (const w of await sql.wordsOf(db, from, e)) words.add(w);
  }
  return avoiding(words);
}

/** The rewrite itself (see the top of this file and rewrite.ts), over the connections `dbs`. */
async function maskInPlace(
  dbs: Db[],
  rules: readonly MaskRule[],
  salt: string,
  progress: (msg: string) => void,
  lap: ReturnType<typeof stopwatch>,
): Promise<{ result: Omit<MaskResult, 'personal' | 'elapsed_ms' | 'proof' | 'steps'>; analyze: Analyzed[] }> {
  const active = masking(rules);
  const digest = rulesDigest(rules);
  const none = {
    digest,
    tables: 0,
    columns: 0,
    rows: 0,
    foreign_keys_checked: 0,
    matviews: 0,
    comments: 0,
    large_objects: 0,
  };
  if (!active.length) return { result: none, analyze: [] };
  const db = dbs[0]!;
  const columns = await sql.columnsOf(db);
  const at = (schema: string, table: string, column: string) =>
    columns.find((c) => c.schema === schema && c.table === table && c.column === column && c.relkind !== 'm');
  const ctx: MaskContext = { defs: [], pools: await poolsFor(db, columns, active) };
  const tables = new Map<string, TablePlan>();
  const activeColumns = active.filter((r) => r.on === 'column');
  for (const r of activeColumns) {
    const c = at(r.schema, r.table, r.column)!; // the scan proved every rule names a column it fits
    const k = `${c.schema}\0${c.table}`;
    const t = tables.get(k) ?? { schema: c.schema, table: c.table, rows: c.rows, update: false, sets: [] };
    t.sets.push({ column: c.column, type: c.type, collation: c.collation, expr: maskExpression(r.strategy, c, ctx) });
    t.update ||= c.dependedOn;
    tables.set(k, t);
  }
  const masked = (schema: string, table: string, cols: string[]) =>
    cols.some((col) => activeColumns.some((r) => r.schema === schema && r.table === table && r.column === col));
  const fks = (await sql.foreignKeysOf(db)).filter(
    (fk) => masked(fk.schema, fk.table, fk.columns) || masked(fk.refSchema, fk.refTable, fk.refColumns),
  );
  const personalTables = new Set(
    (await sql.relationsOf(db)).relations.filter((x) => tables.has(`${x.schema}\0${x.name}`)).map((x) => x.oid),
  );
  const matviewRule = (schema: string, name: string) =>
    rules.find((r) => r.on === 'matview' && r.schema === schema && r.table === name)?.strategy.kind;
  const matviews = (await matviewPlan(db, personalTables))
    .map((m) => ({
      ...m,
      rule: matviewRule(m.schema, m.name) ?? (m.readsPersonal && m.populated ? 'refresh' : 'keep'),
    }))
    .filter((m) => m.rule !== 'keep');
  const comments = (await sql.commentsOf(db)).flatMap((c) => {
    const r = active.find((x) => x.on === 'comment' && x.object === c.object);
    return r ? [{ target: c.target, text: r.strategy.kind === 'fixed' ? r.strategy.value : null }] : [];
  });
  const emptyBlobs = active.some((r) => r.on === 'large_objects') && (await sql.largeObjectCount(db)) > 0;
  lap('plan');
  // Three steps, each its own transactions: the foreign keys over masked columns off (both ends mask alike: the scan
  // checked); the tables over both connections (rewrite.ts); the foreign keys back on, when the server checks every
  // row again, and the views, comments and large objects. A failure anywhere drops the copy (the caller).
  let vacuum: TablePlan[] = [];
  try {
    if (fks.length) {
      await db.query('BEGIN');
      for (const fk of fks) await sql.dropConstraint(db, fk);
      await db.query('COMMIT');
    }
    lap('setup');
    const rewritten = await rewriteTables(dbs, [...tables.values()], { salt, defs: ctx.defs, progress });
    vacuum = rewritten.updated;
    lap('rewrites');
    Object.assign(lap.steps, rewritten.ms);
    await db.query('BEGIN');
    await sql.setMaskSalt(db, salt);
    if (fks.length) progress(`masking: checking ${fks.length} foreign key(s) over masked columns`);
    for (const fk of fks) await sql.addConstraint(db, fk);
    lap('foreign keys');
    for (const m of matviews) {
      progress(`masking: ${m.rule === 'empty' ? 'emptying' : 'refreshing'} materialized view ${m.schema}.${m.name}`);
      await sql.refreshMatview(db, m.schema, m.name, m.rule === 'empty').catch((err: unknown) => {
        throw refreshRefusal(m.schema, m.name, err);
      });
    }
    for (const c of comments) await sql.setComment(db, c.target, c.text);
    if (emptyBlobs) await sql.emptyLargeObjects(db);
    lap('matviews, comments, large objects');
    await db.query('COMMIT');
    lap('commit');
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw maskFailure(err);
  }
  for (const t of vacuum) {
    progress(`masking: removing the old row versions of ${t.schema}.${t.table}`);
    await sql.vacuumFull(db, t.schema, t.table);
  }
  if (emptyBlobs) await sql.vacuumCatalog(db, 'pg_largeobject');
  if (comments.length) await sql.vacuumCatalog(db, 'pg_description');
  lap('vacuum full');
  // Statistics: an ANALYZE (autovacuum's, between the restore and now) may have kept original values as a column's
  // most common values, which pg_stats shows to anyone who may read the table. Analyzed again, they are the masked
  // ones (the caller runs these beside the check). A rewritten table's other columns were not changed, and ALTER …
  // TYPE removed the masked columns' statistics: only those are analyzed; an UPDATEd table (its generated columns
  // changed too) and a refreshed view whole.
  const analyze: Analyzed[] = [
    ...[...tables.values()].map((t) => ({
      schema: t.schema,
      table: t.table,
      columns: t.update ? null : t.sets.map((s) => s.column),
    })),
    ...matviews.filter((x) => x.rule !== 'empty').map((m) => ({ schema: m.schema, table: m.name, columns: null })),
  ];
  const rows = [...tables.values()].reduce((n, t) => n + t.rows, 0);
  const result = {
    digest,
    tables: tables.size,
    columns: activeColumns.length,
    rows: Math.round(rows),
    foreign_keys_checked: fks.length,
    matviews: matviews.length,
    comments: comments.length,
    large_objects: emptyBlobs ? 1 : 0,
  };
  return { result, analyze };
}

/** A relation to analyze again after masking: the columns whose statistics changed, or null for all of them. */
interface Analyzed {
  schema: string;
  table: string;
  columns: string[] | null;
}

/** A materialized view that cannot be refreshed from the masked tables would keep what it was made from: refused. */
function refreshRefusal(schema: string, name: string, err: unknown): PgxError {
  const key = matviewKey(schema, name);
  return new PgxError(
    'REFUSED',
    `The materialized view ${schema}.${name} could not be refreshed from the masked tables ` +
      `(${(err as Error).message}); it would keep the rows it was made from, so nothing was kept.`,
    `Add a rule for it to the [mask] of your .pgx.toml: "${key}" = "empty" leaves it unpopulated in pgx's copy ` +
      '(REFRESH it in a branch when you need it), "keep" keeps its rows when you have reviewed them. Then run the ' +
      'same command again.',
    { cause: err },
  );
}

function maskFailure(err: unknown): unknown {
  if (err instanceof PgxError) return err;
  const e = err as { code?: string; message?: string; table?: string; column?: string; constraint?: string };
  if (!e?.code || !/^(23|22)/.test(e.code)) return err;
  // A constraint or a type the masked values break: a unique index (two values masked alike), a CHECK, a length.
  const where = [
    e.table && `table ${e.table}`,
    e.column && `column ${e.column}`,
    e.constraint && `constraint ${e.constraint}`,
  ]
    .filter(Boolean)
    .join(', ');
  return new PgxError(
    'IMPORT_FAILED',
    `Masking failed${where ? ` (${where})` : ''}: ${e.message}. Nothing was kept unmasked.`,
    'A masked value breaks a constraint of the column: give it a strategy that keeps it (hash keeps values ' +
      'distinct; fixed:<value> can satisfy a CHECK), then run it again.',
    { cause: err },
  );
}

/** Scans a database pgx is about to copy (an import's origin) and refuses before anything is dumped. Reads only. */
export async function scanOrigin(
  conn: ConnParams,
  rules: readonly MaskRule[],
  file: string,
  progress: (msg: string) => void,
  gate?: StatementGate,
): Promise<void> {
  const db = await connect(conn, { gate });
  try {
    const refused = refusalOf(await scanDatabase(db, conn.database, rules, progress), file);
    if (refused) throw refused;
  } finally {
    await db.close();
  }
}

/** `pgx source scan`: the report for one database, nothing copied or changed. */
export async function scanOnly(
  conn: ConnParams,
  rules: readonly MaskRule[],
  progress: (msg: string) => void,
  gate?: StatementGate,
): Promise<ScanReport> {
  const db = await connect(conn, { gate });
  try {
    return await scanDatabase(db, conn.database, rules, progress);
  } finally {
    await db.close();
  }
}
