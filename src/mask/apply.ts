// Masking pgx's own copy in place: scan it (refuse while a personal column has no rule), then rewrite every masked
// table once, in one transaction, with each masked column's value replaced by its strategy's expression (SQL in the
// server: no row goes through node). The copy is pgx's private database, stamped as unfinished (an import's
// `pgx:source-importing:` or a build's `pgx:template-building:`) until its caller stamps it after this returns: a
// process killed before COMMIT leaves the unmasked copy unusable and recorded for the next run to drop; after COMMIT
// and before the stamp, a masked one. Nothing is made from a copy in either state (decision 460).
import { PgxError } from '../lib/errors.js';
import type { RegistryDb } from '../registry/locks.js';
import { maskSalt } from '../registry/mask-salt.js';
import { connect, type Db, type StatementGate } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import * as sql from '../server/mask-catalog.js';
import { masking, rulesDigest, type MaskRule } from './rules.js';
import { scanDatabase, type ScanReport } from './scan.js';
import { maskExpression } from './strategies.js';

export interface MaskResult {
  /** What the copy was masked with (rules.ts rulesDigest); null: no rules. */
  digest: string | null;
  tables: number;
  columns: number;
  /** Rows rewritten (the catalog's estimate). */
  rows: number;
  /** Foreign keys re-added over masked columns: the server checked that every masked key still matches. */
  foreign_keys_checked: number;
  /** Personal-looking columns that have a rule (keep included). */
  personal: number;
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
      `"${report.database}" holds ${report.unruled.length} column(s) that look like personal data and have ` +
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

/** Scans the copy `database` and masks it with `rules`, or refuses (nothing changed). */
export async function scanAndMask(
  t: MaskTarget,
  database: string,
  rules: readonly MaskRule[],
  progress: (msg: string) => void,
): Promise<MaskResult> {
  const t0 = performance.now();
  const db = await connect({ ...t.admin, database }, { gate: t.gate });
  try {
    const report = await scanDatabase(db, database, rules, progress);
    const refused = refusalOf(report, t.file);
    if (refused) throw refused;
    const salt = await maskSalt(t.registry, t.project);
    const r = await maskInPlace(db, rules, salt, progress);
    return { ...r, personal: report.personal.length, elapsed_ms: Math.round(performance.now() - t0) };
  } finally {
    await db.close();
  }
}

/** The rewrite itself, in one transaction (see the top of this file). */
async function maskInPlace(
  db: Db,
  rules: readonly MaskRule[],
  salt: string,
  progress: (msg: string) => void,
): Promise<Omit<MaskResult, 'personal' | 'elapsed_ms'>> {
  const active = masking(rules);
  const digest = rulesDigest(rules);
  if (!active.length) return { digest, tables: 0, columns: 0, rows: 0, foreign_keys_checked: 0 };
  const columns = await sql.columnsOf(db);
  const at = (schema: string, table: string, column: string) =>
    columns.find((c) => c.schema === schema && c.table === table && c.column === column);
  const defs: string[] = [];
  const tables = new Map<
    string,
    {
      schema: string;
      table: string;
      rows: number;
      update: boolean;
      sets: { column: string; type: string; collation: string | null; expr: string }[];
    }
  >();
  for (const r of active) {
    const c = at(r.schema, r.table, r.column)!; // the scan proved every rule names a column it fits
    const k = `${c.schema}\0${c.table}`;
    const t = tables.get(k) ?? { schema: c.schema, table: c.table, rows: c.rows, update: false, sets: [] };
    t.sets.push({ column: c.column, type: c.type, collation: c.collation, expr: maskExpression(r.strategy, c, defs) });
    t.update ||= c.dependedOn;
    tables.set(k, t);
  }
  const masked = (schema: string, table: string, cols: string[]) =>
    cols.some((col) => active.some((r) => r.schema === schema && r.table === table && r.column === col));
  const fks = (await sql.foreignKeysOf(db)).filter(
    (fk) => masked(fk.schema, fk.table, fk.columns) || masked(fk.refSchema, fk.refTable, fk.refColumns),
  );
  const vacuum: { schema: string; table: string }[] = [];
  await db.query('BEGIN');
  try {
    await sql.setMaskSalt(db, salt);
    for (const d of defs) await db.query(d);
    // Foreign keys over masked columns off for the rewrite (both ends mask alike: the scan checked), back on after,
    // when the server checks every row again.
    for (const fk of fks) await sql.dropConstraint(db, fk);
    let i = 0;
    for (const t of tables.values()) {
      progress(
        `masking: ${++i}/${tables.size} table(s), now ${t.schema}.${t.table} (~${Math.round(t.rows)} rows, ${t.sets.length} column(s))`,
      );
      if (!t.update) {
        await sql.rewriteColumns(db, t.schema, t.table, t.sets);
        continue;
      }
      // A view, rule or policy uses a masked column, so ALTER … TYPE is refused: UPDATE, with the table's triggers
      // off (an audit trigger would copy the old values), and VACUUM FULL after COMMIT removes the old row versions.
      const triggers = await sql.enabledTriggers(db, t.schema, t.table);
      for (const tg of triggers) await sql.setTrigger(db, t.schema, t.table, tg, false);
      await sql.updateColumns(db, t.schema, t.table, t.sets);
      for (const tg of triggers) await sql.setTrigger(db, t.schema, t.table, tg, true);
      vacuum.push(t);
    }
    if (fks.length) progress(`masking: checking ${fks.length} foreign key(s) over masked columns`);
    for (const fk of fks) await sql.addConstraint(db, fk);
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw maskFailure(err);
  }
  for (const t of vacuum) {
    progress(`masking: removing the old row versions of ${t.schema}.${t.table}`);
    await sql.vacuumFull(db, t.schema, t.table);
  }
  const rows = [...tables.values()].reduce((n, t) => n + t.rows, 0);
  return {
    digest,
    tables: tables.size,
    columns: active.length,
    rows: Math.round(rows),
    foreign_keys_checked: fks.length,
  };
}

function maskFailure(err: unknown): unknown {
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
