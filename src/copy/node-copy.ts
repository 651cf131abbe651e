// A copy of a database made with Node and the server alone (no pg_dump, psql or pg_restore): the schema by
// @supabase/pg-delta (schema.ts), the rows by COPY streams (rows.ts), then what the library never carries
// (after-rows.ts), every reader of the source in ONE exported snapshot, so the copy is the source at one instant.
// The target must be an empty database pgx just made; the caller stamps it once this returns, so a copy that fails
// or is killed midway is never taken for a finished one (decisions 480, 481). Loaded on demand: the hot-path
// bundles require it from its own file, dist/copy.cjs (scripts/build.mjs, decision 482).
import { availableParallelism } from 'node:os';
import { PgxError } from '../lib/errors.js';
import * as copySql from '../server/copy-catalog.js';
import { openConnection, type StatementGate } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import { copyAfterRows, type AfterRows } from './after-rows.js';
import { copyRows, type Connection } from './rows.js';
import { applyPart, planCopy, poolOf, readSchema, type Unmodeled } from './schema.js';

export interface NodeCopyOptions {
  /** Tables copied at once (default: PGX_COPY_JOBS, else the machine's cores, at most 4). */
  jobs?: number;
  gate?: StatementGate;
  progress?: (msg: string) => void;
  /**
   * Told the roles the source's schema names before anything is created (an import creates the missing ones on pgx's
   * own server). The copy then keeps the owners and grants of the roles the target's server has.
   */
  prepareRoles?: (named: string[]) => Promise<void>;
}

export interface NodeCopyResult {
  method: 'node-copy';
  /** Owners and GRANTs as the source has them ('kept'), or every object the copying role's with none ('dropped'). */
  privileges: 'kept' | 'dropped';
  /** Roles the source names that the target's server lacks: what they owned is the copying role's, their grants left out. */
  roles_missing: string[];
  /** DDL statements run (the plan's, both parts). */
  statements: number;
  tables: number;
  rows: number;
  bytes: number;
  /** COPY's format: binary between servers of the same major where every column type has binary I/O, else text. */
  format: 'binary' | 'text' | 'mixed';
  after_rows: AfterRows;
  /** Where the copy is less faithful than pg_dump's would be (said, never silent). */
  warnings: string[];
  /** Sessions it opened on the source: the snapshot's holder and the readers. */
  source_sessions: number;
  elapsed_ms: { schema: number; rows: number; after_rows: number };
}

/** Object kinds the library does not model and the copier does not carry itself: a copy without them is refused. */
const CARRIED_HERE = new Set(['statistics object']);

export function defaultJobs(): number {
  const env = Number(process.env.PGX_COPY_JOBS);
  return Number.isInteger(env) && env > 0 ? env : Math.max(1, Math.min(4, availableParallelism()));
}

/** Copies the database `source` names into the EMPTY database `target` names (same role, or another server). */
export async function nodeCopy(
  source: ConnParams,
  target: ConnParams,
  o: NodeCopyOptions = {},
): Promise<NodeCopyResult> {
  const opened: Connection[] = [];
  // No statement timeout: a copy takes as long as its data (pg_dump has none either).
  const open = async (p: ConnParams) => {
    const c = await openConnection({ ...p, statementTimeoutMs: undefined }, { gate: o.gate }).catch((err: unknown) => {
      throw p === target ? targetSideFailure(err, p) : err;
    });
    opened.push(c);
    return c;
  };
  const say = o.progress ?? (() => {});
  try {
    const t0 = performance.now();
    // 1. The snapshot: held by `holder` until the end; every reader joins it. Tables locked as pg_dump locks them.
    const holder = await open(source);
    await holder.db.query(copySql.BEGIN_SNAPSHOT);
    await holder.db.query(copySql.ROW_SECURITY_OFF);
    const snapshot = await copySql.exportSnapshot(holder.db);
    const tables = await copySql.rowTables(holder.db);
    if (tables.length) await holder.db.query(copySql.lockTables(tables));

    // 2. The schema, read in that snapshot, and the empty target's.
    say('reading the schema …');
    const [reader, writer] = await Promise.all([open(source), open(target)]);
    const targetPool = poolOf(writer.client, writer.db, o.gate);
    const [src, empty] = await Promise.all([
      readSchema(poolOf(reader.client, reader.db, o.gate, copySql.setSnapshot(snapshot))),
      readSchema(targetPool),
    ]);
    refuseUnmodeled(src.unmodeled.filter((u) => !CARRIED_HERE.has(u.kind)));
    await o.prepareRoles?.(src.roles);
    const self = target.user;
    const present = await copySql.existingRoleNames(writer.db, [...src.roles, self]);
    const outOfReach = await copySql.ownersOutOfReach(
      writer.db,
      src.owners.filter((r) => present.has(r) && r !== self),
    );
    const privileges = outOfReach.length ? 'dropped' : 'kept';
    const planned = planCopy(src, empty.facts, { self, present: [...present], privileges });
    const warnings: string[] = [];
    const missing = src.roles.filter((r) => !present.has(r));
    if (missing.length)
      warnings.push(
        `role(s) ${missing.join(', ')} do not exist on this server: their objects are owned by "${self}" instead, ` +
          'and their grants are left out',
      );
    if (privileges === 'dropped')
      warnings.push(
        `"${self}" may not make role(s) ${outOfReach.join(', ')} an owner: every object is owned by "${self}", ` +
          'with no GRANT (as pg_dump --no-owner --no-privileges)',
      );
    say(`creating the schema (${planned.beforeRows.length} statements) …`);
    await applyPart(planned.plan, planned.beforeRows, targetPool);
    warnings.push(...(await columnOrderChanges(holder, writer)));
    const secretive = src.facts.facts().filter((f) => f.id.kind === 'userMapping' || f.id.kind === 'subscription');
    if (secretive.length)
      warnings.push(
        `${secretive.length} user mapping(s) or subscription(s) are copied with their secret options redacted ` +
          '(passwords, connection strings): set them again in the copy where it needs them',
      );
    for (const t of await copySql.extensionConfigTables(holder.db))
      warnings.push(
        `the rows of extension configuration table ${t} are not copied (its extension's own rows are there)`,
      );
    const t1 = performance.now();

    // 3. The rows, `jobs` tables at once, each pair a reader in the snapshot and a writer on the copy.
    const jobs = Math.max(1, Math.min(o.jobs ?? defaultJobs(), tables.length));
    const pairs = [{ reader, writer }];
    await joinSnapshot(reader, snapshot);
    while (pairs.length < jobs) {
      const r = await open(source);
      await joinSnapshot(r, snapshot);
      pairs.push({ reader: r, writer: await open(target) });
    }
    const sameMajor = Math.floor(holder.db.serverVersionNum / 10000) === Math.floor(writer.db.serverVersionNum / 10000);
    const total = tables.reduce((n, t) => n + t.bytes, 0);
    const rows = await copyRows(tables, pairs, {
      binary: sameMajor,
      gate: o.gate,
      progress: (c) => say(`copying rows: ${c.tables}/${tables.length} tables, ${mb(c.bytes)} of ~${mb(total)} MB`),
    });
    const binaries = tables.filter((t) => sameMajor && t.binary).length;
    const t2 = performance.now();

    // 4. Indexes, keys and what depends on them, then what the library does not carry.
    say(`building indexes and keys (${planned.afterRows.length} statements) …`);
    await applyPart(planned.plan, planned.afterRows, targetPool, [{ name: 'maintenance_work_mem', value: "'256MB'" }]);
    const after = await copyAfterRows(holder.db, writer.db, {
      self,
      keepOwners: privileges === 'kept',
      matviews: planned.matviews,
      present,
    });
    await applyPart(planned.plan, planned.last, targetPool);
    await holder.db.query('COMMIT');
    return {
      method: 'node-copy',
      privileges,
      roles_missing: missing,
      statements: planned.beforeRows.length + planned.afterRows.length + planned.last.length,
      ...rows,
      format: binaries === tables.length ? 'binary' : binaries === 0 ? 'text' : 'mixed',
      after_rows: after,
      warnings,
      source_sessions: 1 + pairs.length,
      elapsed_ms: { schema: ms(t1 - t0), rows: ms(t2 - t1), after_rows: ms(performance.now() - t2) },
    };
  } finally {
    await Promise.all(opened.map((c) => c.db.close()));
  }
}

async function joinSnapshot(c: Connection, snapshot: string): Promise<void> {
  await c.db.query(copySql.BEGIN_SNAPSHOT);
  await c.db.query(copySql.setSnapshot(snapshot));
  await c.db.query(copySql.ROW_SECURITY_OFF);
}

/** Kinds the copy would silently lack: refused, saying what, and the way that carries them (pg_dump). */
function refuseUnmodeled(kinds: Unmodeled[]): void {
  if (!kinds.length) return;
  const what = kinds.map(
    (k) => `${k.count} ${k.kind}${k.samples.length ? ` (${k.samples.slice(0, 3).join(', ')})` : ''}`,
  );
  throw new PgxError(
    'TEMPLATE_FAILED',
    `The database holds objects the Node copy does not carry: ${what.join('; ')}.`,
    'Install pg_dump and psql of at least the server major version (e.g. apt-get install postgresql-client-<major>, or ' +
      'set PGX_PG_BINDIR to their directory): pgx then copies with them. Nothing was kept.',
  );
}

/** Tables whose columns are in another order in the copy than in the source (a generated column the library adds last). */
async function columnOrderChanges(source: Connection, target: Connection): Promise<string[]> {
  const [s, t] = await Promise.all([copySql.columnOrders(source.db), copySql.columnOrders(target.db)]);
  const moved = [...s].filter(([q, cols]) => t.has(q) && t.get(q) !== cols).map(([q]) => q);
  return moved.length
    ? [`the columns of ${moved.join(', ')} are in another order than in the source (SELECT * lists them so)`]
    : [];
}

const mb = (n: number) => (n / 1048576).toFixed(0);
const ms = (n: number) => Math.round(n);

/**
 * A login refused by, or no answer from, the copy's TARGET (pgx's own server): said as that side's, and marked
 * (`data.side`) so that a caller that words connection failures as the origin's (an import's) leaves it alone.
 */
function targetSideFailure(err: unknown, target: ConnParams): unknown {
  if (!(err instanceof PgxError) || (err.code !== 'SERVER_AUTH' && err.code !== 'SERVER_UNREACHABLE')) return err;
  return new PgxError(
    err.code,
    `Could not open the copy's target, database "${target.database}" on pgx's own server: ${err.message}`,
    err.hint,
    { cause: err, data: { side: 'target' } },
  );
}

/** True for a failure targetSideFailure marked as the copy's target's. */
export function isTargetSideFailure(err: unknown): boolean {
  return err instanceof PgxError && err.data?.side === 'target';
}
