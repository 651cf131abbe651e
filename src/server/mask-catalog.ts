// The SQL of masking (src/mask/): what the columns of a database are, a sample of their values, and the statements
// that rewrite a table with its masked values. Kept beside catalog.ts, as its own subject, so that the hooks' catalog
// stays small; identifiers are quoted by catalog.ts's one helper.
import type { Db } from './db.js';
import { quoteIdent, quoteLiteral } from './catalog.js';

/**
 * One column of a user table or materialized view (partitions and inheritance children are masked through their
 * parent).
 */
export interface ColumnInfo {
  schema: string;
  table: string;
  column: string;
  attnum: number;
  /** r: a table, p: a partitioned table, m: a materialized view. */
  relkind: 'r' | 'p' | 'm';
  /** False for a materialized view never refreshed (WITH NO DATA): nothing to read. */
  populated: boolean;
  /** format_type: the column's type as it is written in DDL (varchar(40), timestamp with time zone …). */
  type: string;
  /** Its collation when it is not the type's default (kept through a rewrite), else null. */
  collation: string | null;
  /** pg_type.typcategory of the column's type (of its base type for a domain): S string, N numeric, D date/time … */
  category: string;
  /** The base type's name (text, int4, jsonb, uuid …). */
  base: string;
  /** An array's element: its category and base type name (else null). */
  elemCategory: string | null;
  elemBase: string | null;
  notNull: boolean;
  /** varchar(n)/char(n): n. */
  maxLength: number | null;
  /** Part of a unique index (alone or with other columns). */
  unique: boolean;
  /**
   * A view, rule, policy or generated column depends on it: the table is masked by UPDATE, not by a rewrite (ALTER …
   * TYPE refuses).
   */
  dependedOn: boolean;
  generated: boolean;
  /** A generated column's sources: the columns of its table it is computed from. */
  generatedFrom: string[];
  /** Part of a primary or foreign key, an identity column, or fed by a sequence: a key, not a person's data. */
  key: boolean;
  /** Its values come from a sequence (identity, or a nextval default): rewritten keys would meet the next ones. */
  sequenceFed: boolean;
  /** Estimated rows, from the catalog. */
  rows: number;
  /** The relation's size on disk (heap and TOAST): what the check after masking reads, up to its bound. */
  bytes: number;
}

const COLUMNS_SQL = `
SELECT n.nspname AS schema, c.relname AS "table", a.attname AS "column", a.attnum, c.relkind, c.relispopulated AS populated,
       format_type(a.atttypid, a.atttypmod) AS type,
       CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
         THEN (SELECT quote_ident(collname) FROM pg_collation WHERE oid = a.attcollation) END AS collation,
       bt.typcategory AS category, bt.typname AS base, et.typcategory AS "elemCategory", et.typname AS "elemBase",
       a.attnotnull AS "notNull",
       CASE WHEN coalesce(et.typname, bt.typname) IN ('varchar','bpchar') AND coalesce(nullif(a.atttypmod, -1), nullif(t.typtypmod, -1)) IS NOT NULL
            THEN coalesce(nullif(a.atttypmod, -1), t.typtypmod) - 4 END AS "maxLength",
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND a.attnum = ANY (i.indkey)) AS "unique",
       EXISTS (SELECT 1 FROM pg_depend d WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid AND d.refobjsubid = a.attnum
                 AND (d.classid IN ('pg_rewrite'::regclass, 'pg_policy'::regclass)
                      OR (d.classid = 'pg_attrdef'::regclass AND d.objid IN (SELECT ad.oid FROM pg_attrdef ad JOIN pg_attribute g
                            ON g.attrelid = ad.adrelid AND g.attnum = ad.adnum WHERE ad.adrelid = c.oid AND ad.adnum <> a.attnum
                            AND g.attgenerated <> ''))))
         AS "dependedOn",
       a.attgenerated <> '' AS generated,
       ARRAY(SELECT s.attname FROM pg_attrdef ad JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
               AND d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid AND d.refobjsubid > 0 AND d.refobjsubid <> a.attnum
             JOIN pg_attribute s ON s.attrelid = c.oid AND s.attnum = d.refobjsubid
             WHERE a.attgenerated <> '' AND ad.adrelid = c.oid AND ad.adnum = a.attnum ORDER BY s.attnum)::text[] AS "generatedFrom",
       (a.attidentity <> '' OR EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype IN ('p', 'f')
          AND a.attnum = ANY (k.conkey))
        OR EXISTS (SELECT 1 FROM pg_attrdef ad WHERE ad.adrelid = c.oid AND ad.adnum = a.attnum
                     AND pg_get_expr(ad.adbin, ad.adrelid) LIKE 'nextval(%')) AS key,
       (a.attidentity <> '' OR EXISTS (SELECT 1 FROM pg_attrdef ad WHERE ad.adrelid = c.oid AND ad.adnum = a.attnum
          AND pg_get_expr(ad.adbin, ad.adrelid) LIKE 'nextval(%')) AS "sequenceFed",
       tree.rows, tree.bytes
FROM pg_class c
CROSS JOIN LATERAL (WITH RECURSIVE tree(oid) AS (SELECT c.oid UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.oid)
  SELECT sum(greatest(x.reltuples, 0))::float8 AS rows, sum(pg_table_size(x.oid))::float8 AS bytes
  FROM tree JOIN pg_class x ON x.oid = tree.oid) tree
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attinhcount = 0
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_type et ON et.oid = bt.typelem AND bt.typcategory = 'A'
WHERE c.relkind IN ('r', 'p', 'm') AND NOT c.relispartition
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
 * Up to `limit` non-null values of each of `columns` (as text; an array column as its JSON text, `arrays`), read from
 * a TABLESAMPLE of big tables (a plain scan's first rows are only the oldest ones) and the first rows of small ones.
 */
export async function sampleValues(
  db: Db,
  schema: string,
  name: string,
  columns: string[],
  rows: number,
  limit: number,
  arrays: ReadonlySet<string> = new Set(),
): Promise<Record<string, string | null>[]> {
  const list = columns
    .map((c) => `${arrays.has(c) ? `to_jsonb(${quoteIdent(c)})::text` : `${quoteIdent(c)}::text`} AS ${quoteIdent(c)}`)
    .join(', ');
  const sample =
    rows > limit * 20 ? ` TABLESAMPLE SYSTEM (${Math.min(100, Math.max(0.01, (limit * 400) / rows)).toFixed(4)})` : '';
  return db.query(`SELECT ${list} FROM ${table(schema, name)}${sample} LIMIT ${limit * 4}`);
}

/**
 * A relation read whole when it is at most `bound` bytes, else through TABLESAMPLE SYSTEM for about `bound` bytes of
 * its pages, picked at random (the bound of the check after masking: decision 466).
 */
export function boundedFrom(schema: string, name: string, bytes: number, bound: number): string {
  if (bytes <= bound) return table(schema, name);
  return `${table(schema, name)} TABLESAMPLE SYSTEM (${Math.max(0.01, (100 * bound) / bytes).toFixed(4)})`;
}

/** The distinct words (lower case, letters only) of a text expression over a relation: what a name must not be. */
export async function wordsOf(db: Db, from: string, expr: string): Promise<string[]> {
  const rows = await db.query<{ w: string }>(
    `SELECT DISTINCT lower(w) AS w FROM ${from}, regexp_split_to_table(${expr}, '[^[:alpha:]]+') w WHERE w <> ''`,
  );
  return rows.map((r) => r.w);
}

/** A relation (table, view, materialized view) of the user's schemas, and what its rule reads (views: their query). */
export interface Relation {
  oid: number;
  schema: string;
  name: string;
  relkind: string;
  populated: boolean;
}

/** What a view or materialized view reads: relations, and whether it calls a function of the user's (whose reads are unknown). */
export interface RelationEdge {
  from: number;
  to: number | null;
  userFunction: boolean;
}

const USER_SCHEMA = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'`;
const NOT_EXTENSION = (cls: string, oid: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '${cls}'::regclass AND e.objid = ${oid} AND e.deptype = 'e')`;

export async function relationsOf(db: Db): Promise<{ relations: Relation[]; edges: RelationEdge[] }> {
  const relations = await db.query<Relation>(`
SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS relkind, c.relispopulated AS populated
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${USER_SCHEMA} AND ${NOT_EXTENSION('pg_class', 'c.oid')}`);
  const edges = await db.query<RelationEdge>(`
SELECT DISTINCT r.ev_class::int8 AS "from", CASE WHEN d.refclassid = 'pg_class'::regclass THEN d.refobjid::int8 END AS "to",
       (d.refclassid = 'pg_proc'::regclass AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
        AND ${NOT_EXTENSION('pg_proc', 'p.oid')}) AS "userFunction"
FROM pg_rewrite r
JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refobjid <> r.ev_class
LEFT JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
WHERE d.refclassid IN ('pg_class'::regclass, 'pg_proc'::regclass)`);
  return { relations, edges };
}

/** Refreshes a materialized view from what it reads now, or leaves it unpopulated (`empty`): its old rows are gone. */
export async function refreshMatview(db: Db, schema: string, name: string, empty: boolean): Promise<void> {
  await db.query(`REFRESH MATERIALIZED VIEW ${table(schema, name)}${empty ? ' WITH NO DATA' : ''}`);
}

/** A comment of the user's objects: its object as PostgreSQL names it, and the words COMMENT ON needs for it. */
export interface CommentInfo {
  /** "<type> <identity>" ("column public.users.email"): the key a rule names it by, after "comment on ". */
  object: string;
  /** What follows COMMENT ON to name the object (the identity is PostgreSQL's own, quoted by it). */
  target: string;
  description: string;
}

export async function commentsOf(db: Db): Promise<CommentInfo[]> {
  const rows = await db.query<{ type: string; schema: string | null; identity: string; description: string }>(`
SELECT o.type, o.schema, o.identity, d.description
FROM pg_description d CROSS JOIN LATERAL pg_identify_object(d.classoid, d.objoid, d.objsubid) o
WHERE d.classoid <> 'pg_extension'::regclass
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = d.classoid AND e.objid = d.objoid AND e.deptype = 'e')
ORDER BY 1, 3`);
  const system = (s: string | null) => s !== null && /^(pg_catalog|information_schema|pg_toast|pg_temp.*)$/.test(s);
  return rows
    .filter((r) => !system(r.schema) && !(r.type === 'schema' && system(r.identity)))
    .map((r) => {
      const type = / column$/.test(r.type) ? 'column' : / constraint$/.test(r.type) ? 'constraint' : r.type;
      const target =
        r.type === 'domain constraint'
          ? `CONSTRAINT ${r.identity.replace(/ on /, ' ON DOMAIN ')}`
          : `${type === 'composite type' ? 'TYPE' : type.toUpperCase()} ${r.identity}`;
      return { object: `${type} ${r.identity}`, target, description: r.description };
    });
}

/** Sets (or, with null, removes) a comment; `target` comes from commentsOf (the server's own naming). */
export async function setComment(db: Db, target: string, text: string | null): Promise<void> {
  await db.query(`COMMENT ON ${target} IS ${text === null ? 'NULL' : quoteLiteral(text)}`);
}

/** How many large objects the database holds. */
export async function largeObjectCount(db: Db): Promise<number> {
  return (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_largeobject_metadata`))[0]!.n;
}

/** Empties every large object (its references stay valid); VACUUM FULL pg_largeobject then drops the old pages. */
export async function emptyLargeObjects(db: Db): Promise<void> {
  await db.query(`SELECT count(lo_truncate(lo_open(oid, 131072), 0)) FROM pg_largeobject_metadata`);
}

/** Large objects that still hold a byte (after `emptyLargeObjects`: must be none). */
export async function nonEmptyLargeObjects(db: Db): Promise<number> {
  return (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_largeobject_metadata WHERE length(lo_get(oid, 0, 1)) > 0`,
    )
  )[0]!.n;
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

/**
 * After emptying the large objects or changing comments: the old row versions leave the catalog's files (the owner
 * of a database may vacuum its catalogs but the shared ones).
 */
export async function vacuumCatalog(db: Db, name: 'pg_largeobject' | 'pg_description'): Promise<void> {
  await db.query(`VACUUM FULL pg_catalog.${name}`);
}

/** Statistics of the masked values, in place of any an earlier ANALYZE took of the original ones (null: every column). */
export async function analyze(db: Db, schema: string, name: string, columns: string[] | null = null): Promise<void> {
  await db.query(`ANALYZE ${table(schema, name)}${columns ? ` (${columns.map(quoteIdent).join(', ')})` : ''}`);
}

/** No JIT compilation on this session: the masking's statements run once each, where compiling costs more than it saves. */
export async function withoutJit(db: Db): Promise<void> {
  await db.query(`SET jit = off`);
}
