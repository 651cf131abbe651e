// The SQL of a branch's rows as a migration (engine/row-diff.ts, engine/merge.ts): what each table's columns are, its
// rows by key as text, the row statements that carry them, a table's triggers and sequences. Beside catalog.ts as its
// own subject (the hooks' catalog stays small); identifiers and values are quoted by catalog.ts's helpers only.
import type { Db } from './db.js';
import { quoteIdent, quoteLiteral } from './catalog.js';

/** One column as a row statement needs it. */
export interface RowColumn {
  name: string;
  /** format_type, read with search_path = pg_catalog: user types come schema-qualified. */
  type: string;
  /** A generated column: never written (its value follows from the others). */
  generated: boolean;
  /** An identity column GENERATED ALWAYS: an INSERT that gives it a value says OVERRIDING SYSTEM VALUE. */
  identityAlways: boolean;
  /** Its default expression (pg_get_expr, schema-qualified), or null. */
  default: string | null;
}

/** An ordinary table (a partition is one) with what its rows' migration needs. */
export interface RowTable {
  schema: string;
  table: string;
  qname: string;
  bytes: number;
  est_rows: number;
  columns: RowColumn[];
  /** The primary key's columns, in key order (empty: none). */
  key: string[];
}

/** The settings values' text forms depend on: the same when a migration's rows are read and when they are applied. */
export const TEXT_FORMS: [string, string][] = [
  ['DateStyle', 'ISO, MDY'],
  ['IntervalStyle', 'postgres'],
  ['extra_float_digits', '3'],
  ['bytea_output', 'hex'],
];

const USER_NS = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname !~ '^pg_(toast_)?temp_'`;

/** Every user table (not an extension's) with its columns and key. Types and defaults come schema-qualified. */
export async function rowTables(db: Db): Promise<RowTable[]> {
  // Values are read as text and written back as literals: in one form, whatever the database's own settings say.
  await db.query(TEXT_FORMS.map(([k, v]) => `SELECT pg_catalog.set_config('${k}', '${v}', false)`).join('; '));
  await db.query(`SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)`);
  const rows = await db.query<Omit<RowTable, 'bytes' | 'est_rows'> & { bytes: string; est_rows: string }>(
    `SELECT n.nspname AS schema, c.relname AS table, format('%I.%I', n.nspname, c.relname) AS qname,
            pg_table_size(c.oid)::text AS bytes, c.reltuples::bigint::text AS est_rows,
            (SELECT coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                      'generated', a.attgenerated <> '', 'identityAlways', a.attidentity = 'a',
                      'default', CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END) ORDER BY a.attnum), '[]')
               FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT coalesce(json_agg(a.attname ORDER BY k.ord), '[]')
               FROM pg_constraint pk CROSS JOIN LATERAL unnest(pk.conkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = pk.conrelid AND a.attnum = k.attnum
              WHERE pk.conrelid = c.oid AND pk.contype = 'p') AS key
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND ${USER_NS}
        AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')
      ORDER BY 1, 2`,
  );
  await db.query(`SELECT pg_catalog.set_config('search_path', '"$user", public', false)`);
  return rows.map((r) => ({ ...r, bytes: Number(r.bytes), est_rows: Number(r.est_rows) }));
}

const qualified = (t: { schema: string; table: string }) => `${quoteIdent(t.schema)}.${quoteIdent(t.table)}`;
const rowText = (cols: string[]) => `row(${cols.map(quoteIdent).join(', ')})::text`;
/** A row's hash over `cols` (null when there are none to compare: every row the same). */
const rowHash = (cols: string[]) => (cols.length ? `md5(${rowText(cols)})` : `''`);

/**
 * One scan: each row's key (as text), its hash over `hashed`, and `extra` expressions (text) per row; at most `limit`
 * rows (a caller asks one more than its bound). `keys`: only those rows (their key texts).
 */
export async function keyedRows(
  db: Db,
  t: { schema: string; table: string },
  o: { key: string[]; hashed: string[]; extra?: string[]; limit: number; keys?: string[] },
): Promise<{ k: string; h: string; x: (string | null)[] }[]> {
  const extra = o.extra?.length ? `ARRAY[${o.extra.join(', ')}]::text[]` : `'{}'::text[]`;
  const where = o.keys ? ` WHERE ${rowText(o.key)} = ANY($1::text[])` : '';
  return db.query(
    `SELECT ${rowText(o.key)} AS k, ${rowHash(o.hashed)} AS h, ${extra} AS x FROM ${qualified(t)}${where} LIMIT ` +
      `${Math.max(0, Math.floor(o.limit))}`,
    o.keys ? [o.keys] : [],
  );
}

/** The rows with these keys (key texts), every listed column as text (null stays null), with the key text first. */
export async function rowsByKey(
  db: Db,
  t: { schema: string; table: string },
  key: string[],
  columns: string[],
  keys: string[],
): Promise<{ k: string; v: (string | null)[] }[]> {
  if (!keys.length) return [];
  const values = columns.length ? `ARRAY[${columns.map((c) => `${quoteIdent(c)}::text`).join(', ')}]` : `'{}'::text[]`;
  return db.query(
    `SELECT ${rowText(key)} AS k, ${values} AS v FROM ${qualified(t)} WHERE ${rowText(key)} = ANY($1::text[])`,
    [keys],
  );
}

/** Every row of a table (a new one: all its rows go in), every listed column as text; at most `limit`. */
export async function allRows(
  db: Db,
  t: { schema: string; table: string },
  columns: string[],
  limit: number,
): Promise<(string | null)[][]> {
  const values = `ARRAY[${columns.map((c) => `${quoteIdent(c)}::text`).join(', ')}]`;
  const rows = await db.query<{ v: (string | null)[] }>(
    `SELECT ${values} AS v FROM ${qualified(t)} LIMIT ${Math.max(0, Math.floor(limit))}`,
  );
  return rows.map((r) => r.v);
}

/** The expression "this column holds what its default gives" (for a column the migration adds with it). */
export const isDefaultValue = (column: string, defaultExpr: string | null) =>
  `(${quoteIdent(column)} IS NOT DISTINCT FROM (${defaultExpr ?? 'NULL'}))::text`;

/** A column as text (a column whose type the migration changes: compared by its text). */
export const asText = (column: string) => `${quoteIdent(column)}::text`;

/** A value as SQL: NULL, or a literal the column's type reads (its text form). */
export const sqlValue = (v: string | null) => (v === null ? 'NULL' : quoteLiteral(v));

/** `INSERT INTO t (cols) [OVERRIDING SYSTEM VALUE] VALUES (…), (…)`: one statement for a batch of rows. */
export function insertRows(
  t: { schema: string; table: string },
  columns: string[],
  rows: (string | null)[][],
  overriding: boolean,
): string {
  return (
    `INSERT INTO ${qualified(t)} (${columns.map(quoteIdent).join(', ')})${overriding ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES\n  ` +
    rows.map((r) => `(${r.map(sqlValue).join(', ')})`).join(',\n  ')
  );
}

/** `("k1", "k2") = ('1', 'a')`: the row with this key (each value read by its column's type). */
export function keyMatch(key: string[], values: (string | null)[]): string {
  return `(${key.map(quoteIdent).join(', ')}) = (${values.map(sqlValue).join(', ')})`;
}

/** `UPDATE t SET c = v, … WHERE <key>`: one row's changed columns. */
export function updateRow(
  t: { schema: string; table: string },
  key: string[],
  keyValues: (string | null)[],
  set: { column: string; value: string | null }[],
): string {
  const assignments = set.map((s) => `${quoteIdent(s.column)} = ${sqlValue(s.value)}`).join(', ');
  return `UPDATE ${qualified(t)} SET ${assignments} WHERE ${keyMatch(key, keyValues)}`;
}

/** `DELETE FROM t WHERE (key) IN ((…), (…))`: a batch of rows by key. */
export function deleteRows(t: { schema: string; table: string }, key: string[], keys: (string | null)[][]): string {
  return (
    `DELETE FROM ${qualified(t)} WHERE (${key.map(quoteIdent).join(', ')}) IN (` +
    keys.map((k) => `(${k.map(sqlValue).join(', ')})`).join(', ') +
    ')'
  );
}

/** A table's triggers that fire on its rows (user triggers, enabled): a migration of rows turns them off meanwhile. */
export async function enabledTriggers(
  db: Db,
  t: { schema: string; table: string },
): Promise<{ name: string; enabled: 'O' | 'A' | 'R' }[]> {
  return db.query(
    `SELECT t.tgname AS name, t.tgenabled AS enabled FROM pg_trigger t
      WHERE t.tgrelid = $1::regclass AND NOT t.tgisinternal AND t.tgenabled <> 'D' ORDER BY t.tgname`,
    [qualified(t)],
  );
}

/** `ALTER TABLE t DISABLE TRIGGER x` now, and the statement that gives it back its state after. */
export function triggerToggle(
  t: { schema: string; table: string },
  trigger: { name: string; enabled: 'O' | 'A' | 'R' },
): { off: string; on: string } {
  const how = trigger.enabled === 'A' ? 'ENABLE ALWAYS' : trigger.enabled === 'R' ? 'ENABLE REPLICA' : 'ENABLE';
  return {
    off: `ALTER TABLE ${qualified(t)} DISABLE TRIGGER ${quoteIdent(trigger.name)}`,
    on: `ALTER TABLE ${qualified(t)} ${how} TRIGGER ${quoteIdent(trigger.name)}`,
  };
}

/** Every user sequence's state (schema-qualified name, last value, whether it was called). */
export async function sequenceStates(db: Db): Promise<{ name: string; last: string | null; called: boolean }[]> {
  return db.query(
    `SELECT format('%I.%I', s.schemaname, s.sequencename) AS name, s.last_value::text AS last, s.last_value IS NOT NULL AS called
       FROM pg_sequences s JOIN pg_namespace n ON n.nspname = s.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.sequencename
      WHERE ${USER_NS} AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')`,
  );
}

/** The sequence goes to `last` (its next value follows it); `atLeast`: never back from where it is. */
export function setSequence(name: string, last: string, atLeast: boolean): string {
  const value = atLeast ? `greatest(${last}, (SELECT last_value FROM ${name}))` : last;
  return `SELECT pg_catalog.setval(${quoteLiteral(name)}, ${value}, true)`;
}

/** The foreign keys of a database: which table references which (a migration of rows lists parents first). */
export async function foreignKeys(db: Db): Promise<{ from: string; to: string; name: string; deferrable: boolean }[]> {
  return db.query(
    `SELECT format('%I.%I', fn.nspname, f.relname) AS from, format('%I.%I', tn.nspname, t.relname) AS to, k.conname AS name,
            k.condeferrable AS deferrable
       FROM pg_constraint k JOIN pg_class f ON f.oid = k.conrelid JOIN pg_namespace fn ON fn.oid = f.relnamespace
       JOIN pg_class t ON t.oid = k.confrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
      WHERE k.contype = 'f'`,
  );
}

/** Rows by key as JSON (a conflict's versions, shown to the user who owns both databases), each capped. */
export async function rowsAsJson(
  db: Db,
  t: { schema: string; table: string },
  key: string[],
  keys: string[],
): Promise<Map<string, string>> {
  if (!keys.length) return new Map();
  const rows = await db.query<{ k: string; j: string }>(
    `SELECT ${rowText(key)} AS k, left(row_to_json(x)::text, 400) AS j FROM ${qualified(t)} x WHERE ${rowText(key)} = ANY($1::text[])`,
    [keys],
  );
  return new Map(rows.map((r) => [r.k, r.j]));
}

/** A table's row count and an order-independent sum of its rows' hashes over `columns`; `allDefault`: and whether
 * each of these columns holds its default in every row (a column a migration adds with it). One scan. */
export async function tableSum(
  db: Db,
  t: { schema: string; table: string },
  columns: string[],
  defaults: { name: string; default: string | null }[] = [],
): Promise<{ rows: number; hash: string; allDefault: boolean }> {
  const allDefault = defaults.length
    ? `bool_and(${defaults.map((d) => `(${quoteIdent(d.name)} IS NOT DISTINCT FROM (${d.default ?? 'NULL'}))`).join(' AND ')})`
    : 'true';
  const hashed = columns.length ? rowHash(columns) : `md5('')`;
  const [r] = await db.query<{ rows: string; hash: string; all_default: boolean | null }>(
    `SELECT count(*)::text AS rows, coalesce(sum(('x' || left(${hashed}, 15))::bit(60)::bigint), 0)::text AS hash,
            ${allDefault} AS all_default FROM ${qualified(t)}`,
  );
  return { rows: Number(r!.rows), hash: r!.hash, allDefault: r!.all_default !== false };
}

/** `LOCK TABLE t IN SHARE ROW EXCLUSIVE MODE`: nobody else writes its rows until the merge's transaction ends. */
export const lockForMerge = (t: { schema: string; table: string }) =>
  `LOCK TABLE ${qualified(t)} IN SHARE ROW EXCLUSIVE MODE`;
