// The SQL of masking (src/mask/): what the columns of a database are, a sample of their values, and the statements
// that rewrite a table with its masked values. Kept beside catalog.ts, as its own subject, so that the hooks' catalog
// stays small; identifiers are quoted by catalog.ts's one helper.
import type { Db } from './db.js';
import { quoteIdent } from './catalog.js';

/** One column of a user table (partitions and inheritance children are masked through their parent). */
export interface ColumnInfo {
  schema: string;
  table: string;
  column: string;
  attnum: number;
  /** format_type: the column's type as it is written in DDL (varchar(40), timestamp with time zone …). */
  type: string;
  /** Its collation when it is not the type's default (kept through a rewrite), else null. */
  collation: string | null;
  /** pg_type.typcategory of the column's type (of its base type for a domain): S string, N numeric, D date/time … */
  category: string;
  /** The base type's name (text, int4, jsonb, uuid …). */
  base: string;
  notNull: boolean;
  /** varchar(n)/char(n): n. */
  maxLength: number | null;
  /** Part of a unique index (alone or with other columns). */
  unique: boolean;
  /** A view, rule or policy depends on it: the table is masked by UPDATE, not by a rewrite (ALTER … TYPE refuses). */
  dependedOn: boolean;
  generated: boolean;
  /** Estimated rows, from the catalog. */
  rows: number;
}

const COLUMNS_SQL = `
SELECT n.nspname AS schema, c.relname AS "table", a.attname AS "column", a.attnum,
       format_type(a.atttypid, a.atttypmod) AS type,
       CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
         THEN (SELECT quote_ident(collname) FROM pg_collation WHERE oid = a.attcollation) END AS collation,
       bt.typcategory AS category, bt.typname AS base, a.attnotnull AS "notNull",
       CASE WHEN bt.typname IN ('varchar','bpchar') AND coalesce(nullif(a.atttypmod, -1), nullif(t.typtypmod, -1)) IS NOT NULL
            THEN coalesce(nullif(a.atttypmod, -1), t.typtypmod) - 4 END AS "maxLength",
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND a.attnum = ANY (i.indkey)) AS "unique",
       EXISTS (SELECT 1 FROM pg_depend d WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid AND d.refobjsubid = a.attnum
                 AND d.classid IN ('pg_rewrite'::regclass, 'pg_policy'::regclass)) AS "dependedOn",
       a.attgenerated <> '' AS generated,
       greatest(c.reltuples, 0)::float8 AS rows
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attinhcount = 0
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')
ORDER BY 1, 2, a.attnum`;

export async function columnsOf(db: Db): Promise<ColumnInfo[]> {
  return db.query<ColumnInfo>(COLUMNS_SQL);
}

/** A foreign key, with its columns on both sides (by name) and its definition to add it again. */
export interface ForeignKey {
  schema: string;
  table: string;
  name: string;
  columns: string[];
  refSchema: string;
  refTable: string;
  refColumns: string[];
  definition: string;
}

export async function foreignKeysOf(db: Db): Promise<ForeignKey[]> {
  return db.query<ForeignKey>(`
SELECT n.nspname AS schema, c.relname AS "table", k.conname AS name,
       ARRAY(SELECT attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
               JOIN pg_attribute ON attrelid = k.conrelid AND attnum = u.n ORDER BY u.i)::text[] AS columns,
       rn.nspname AS "refSchema", rc.relname AS "refTable",
       ARRAY(SELECT attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
               JOIN pg_attribute ON attrelid = k.confrelid AND attnum = u.n ORDER BY u.i)::text[] AS "refColumns",
       pg_get_constraintdef(k.oid) AS definition
FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class rc ON rc.oid = k.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace
WHERE k.contype = 'f' AND k.conparentid = 0`);
}

const table = (schema: string, name: string) => `${quoteIdent(schema)}.${quoteIdent(name)}`;

/**
 * Up to `limit` non-null values of each of `columns` (as text), read from a TABLESAMPLE of big tables (a plain scan's
 * first rows are only the oldest ones) and the first rows of small ones.
 */
export async function sampleValues(
  db: Db,
  schema: string,
  name: string,
  columns: string[],
  rows: number,
  limit: number,
): Promise<Record<string, string | null>[]> {
  const list = columns.map((c) => `${quoteIdent(c)}::text AS ${quoteIdent(c)}`).join(', ');
  const sample =
    rows > limit * 20 ? ` TABLESAMPLE SYSTEM (${Math.min(100, Math.max(0.01, (limit * 400) / rows)).toFixed(4)})` : '';
  return db.query(`SELECT ${list} FROM ${table(schema, name)}${sample} LIMIT ${limit * 4}`);
}

/** The salt for this transaction's masking expressions (a parameter: it never appears in a statement's text). */
export async function setMaskSalt(db: Db, salt: string): Promise<void> {
  await db.query(`SELECT set_config('pgx.mask_salt', $1, true)`, [salt]);
}

export async function dropConstraint(db: Db, fk: ForeignKey): Promise<void> {
  await db.query(`ALTER TABLE ${table(fk.schema, fk.table)} DROP CONSTRAINT ${quoteIdent(fk.name)}`);
}

/** Adds a dropped foreign key back; the server checks every row (so masked keys are proven to still match). */
export async function addConstraint(db: Db, fk: ForeignKey): Promise<void> {
  await db.query(`ALTER TABLE ${table(fk.schema, fk.table)} ADD CONSTRAINT ${quoteIdent(fk.name)} ${fk.definition}`);
}

/** One rewrite of the table with every masked column's new value: no trigger fires, no old row version is kept. */
export async function rewriteColumns(
  db: Db,
  schema: string,
  name: string,
  sets: { column: string; type: string; collation: string | null; expr: string }[],
): Promise<void> {
  const alters = sets.map(
    (s) =>
      `ALTER COLUMN ${quoteIdent(s.column)} TYPE ${s.type}${s.collation ? ` COLLATE ${s.collation}` : ''} USING ${s.expr}`,
  );
  await db.query(`ALTER TABLE ${table(schema, name)} ${alters.join(', ')}`);
}

/** The user triggers enabled on a table (an UPDATE would fire them: an audit trigger could copy the old values). */
export async function enabledTriggers(db: Db, schema: string, name: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal AND tgenabled <> 'D'`,
    [table(schema, name)],
  );
  return rows.map((r) => r.name);
}

export async function setTrigger(
  db: Db,
  schema: string,
  name: string,
  trigger: string,
  enabled: boolean,
): Promise<void> {
  await db.query(`ALTER TABLE ${table(schema, name)} ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${quoteIdent(trigger)}`);
}

/** For a table a view depends on (no rewrite possible): the masked values by UPDATE; VACUUM FULL then drops the old rows. */
export async function updateColumns(
  db: Db,
  schema: string,
  name: string,
  sets: { column: string; expr: string }[],
): Promise<void> {
  await db.query(
    `UPDATE ${table(schema, name)} SET ${sets.map((s) => `${quoteIdent(s.column)} = ${s.expr}`).join(', ')}`,
  );
}

export async function vacuumFull(db: Db, schema: string, name: string): Promise<void> {
  await db.query(`VACUUM FULL ${table(schema, name)}`);
}
