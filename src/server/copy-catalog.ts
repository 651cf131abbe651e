// The SQL of the Node copier (src/copy/): what a database holds that its rows, sequences, large objects, materialized
// views and statistics settings need copied, read on the source under one exported snapshot, and the statements that
// put them into the copy. Kept beside catalog.ts as its own subject (the hooks' catalog stays small); identifiers are
// quoted by catalog.ts's one helper.
import type { Db } from './db.js';
import { quoteIdent, quoteLiteral } from './catalog.js';

const USER_NS = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname !~ '^pg_(toast_)?temp_'`;
const notExtMember = (cat: string, x: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '${cat}'::regclass AND e.objid = ${x} AND e.deptype = 'e')`;

/** Opens the transaction every reader of the copy shares (REPEATABLE READ, read only), row security off as pg_dump. */
export const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
/** pg_dump's setting: a policy that would hide rows makes the read fail rather than copy part of a table. */
export const ROW_SECURITY_OFF = 'SET LOCAL row_security = off';

export async function exportSnapshot(db: Db): Promise<string> {
  return (await db.query<{ s: string }>('SELECT pg_export_snapshot() AS s'))[0]!.s;
}

export const setSnapshot = (id: string) => `SET TRANSACTION SNAPSHOT ${quoteLiteral(id)}`;

/** One table whose rows are copied: an ordinary table or a partition (a partitioned parent holds none). */
export interface RowTable {
  /** schema.table, quoted. */
  qname: string;
  /** The columns COPY names, quoted, in the source's order: every column but dropped and generated ones ('': none). */
  columns: string;
  /** Every column's type has a binary send and receive (built-in, enum, or a domain or array of one). */
  binary: boolean;
  bytes: number;
}

/** The tables whose rows a copy carries: not an extension's (its script makes them), not a foreign table. */
export async function rowTables(db: Db): Promise<RowTable[]> {
  const rows = await db.query<Omit<RowTable, 'bytes'> & { bytes: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS qname,
            (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '') AS columns,
            NOT EXISTS (
              SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                LEFT JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
                LEFT JOIN pg_type x ON x.oid = CASE WHEN b.typcategory = 'A' THEN b.typelem ELSE b.oid END
               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
                 AND NOT (x.typtype IN ('b', 'e', 'r', 'm') AND x.typsend <> 0 AND x.typreceive <> 0
                          AND b.typsend <> 0 AND b.typreceive <> 0)) AS binary,
            pg_table_size(c.oid)::text AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND ${USER_NS} AND ${notExtMember('pg_class', 'c.oid')}
      ORDER BY pg_table_size(c.oid) DESC, 1`,
  );
  return rows.map((r) => ({ ...r, columns: r.columns ?? '', bytes: Number(r.bytes) }));
}

/** ACCESS SHARE on every table read, as pg_dump takes: the source's DDL on them waits for the copy, never breaks it. */
export function lockTables(tables: { qname: string }[]): string {
  return `LOCK TABLE ${tables.map((t) => t.qname).join(', ')} IN ACCESS SHARE MODE`;
}

const columnList = (t: RowTable) => (t.columns ? ` (${t.columns})` : '');

export function copyOut(t: RowTable, binary: boolean): string {
  return `COPY ${t.qname}${columnList(t)} TO STDOUT${binary ? ' (FORMAT binary)' : ''}`;
}

/** FREEZE: the rows are written frozen (no hint-bit rewrite at the first read, or the foreign keys' validation). */
export function copyIn(t: RowTable, binary: boolean): string {
  return `COPY ${t.qname}${columnList(t)} FROM STDIN (${binary ? 'FORMAT binary, ' : ''}FREEZE)`;
}

/** COPY … FREEZE needs the table created or truncated in the same transaction. */
export const truncateForFreeze = (t: RowTable) => `TRUNCATE ONLY ${t.qname}`;

/** Extension configuration tables with rows of their own (pg_dump copies those rows; the Node copy does not). */
export async function extensionConfigTables(db: Db): Promise<string[]> {
  const rows = await db.query<{ qname: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS qname
       FROM pg_extension x CROSS JOIN LATERAL unnest(x.extconfig) AS cfg(oid)
       JOIN pg_class c ON c.oid = cfg.oid AND c.relkind = 'r' JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.reltuples > 0 OR pg_relation_size(c.oid) > 0 ORDER BY 1`,
  );
  return rows.map((r) => r.qname);
}

/** A sequence's state; `owner`: the column whose serial or identity sequence it is (its name may differ in the copy). */
export interface SequenceValue {
  qname: string;
  owned_by: string | null;
  owned_column: string | null;
  last_value: string;
  is_called: boolean;
}

export async function sequencesOf(db: Db): Promise<Omit<SequenceValue, 'last_value' | 'is_called'>[]> {
  return db.query(
    `SELECT format('%I.%I', n.nspname, c.relname) AS qname,
            (SELECT format('%I.%I', tn.nspname, t.relname) FROM pg_depend d JOIN pg_class t ON t.oid = d.refobjid
               JOIN pg_namespace tn ON tn.oid = t.relnamespace
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass
                AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0 LIMIT 1) AS owned_by,
            (SELECT a.attname FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass
                AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0 LIMIT 1) AS owned_column
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'S' AND ${USER_NS} AND ${notExtMember('pg_class', 'c.oid')} ORDER BY 1`,
  );
}

/** The sequences' values, read from each (as pg_dump does), 200 to a statement. */
export async function sequenceValues(db: Db, seqs: Awaited<ReturnType<typeof sequencesOf>>): Promise<SequenceValue[]> {
  const out: SequenceValue[] = [];
  for (let i = 0; i < seqs.length; i += 200) {
    const part = seqs.slice(i, i + 200);
    const rows = await db.query<{ i: number; last_value: string; is_called: boolean }>(
      part.map((s, k) => `SELECT ${k} AS i, last_value::text, is_called FROM ${s.qname}`).join(' UNION ALL '),
    );
    for (const r of rows) out.push({ ...part[r.i]!, last_value: r.last_value, is_called: r.is_called });
  }
  return out;
}

/** Sets every sequence in one statement; an owned sequence is found through its column (pg_get_serial_sequence). */
export async function setSequences(db: Db, values: SequenceValue[]): Promise<void> {
  if (!values.length) return;
  await db.query(
    `SELECT setval(coalesce(CASE WHEN x.owned_by IS NOT NULL THEN pg_get_serial_sequence(x.owned_by, x.owned_column) END, x.qname)::regclass,
                   x.last_value::bigint, x.is_called)
       FROM json_to_recordset($1::json) AS x(qname text, owned_by text, owned_column text, last_value text, is_called boolean)`,
    [JSON.stringify(values)],
  );
}

/** A large object's metadata: its owner, its ACL (grantee '' is PUBLIC), its comment. */
export interface LargeObject {
  oid: string;
  owner: string;
  acl: { grantee: string; privilege: string; grantable: boolean }[] | null;
  comment: string | null;
  bytes: string;
}

export async function largeObjects(db: Db): Promise<LargeObject[]> {
  return db.query(
    `SELECT l.oid::text AS oid, pg_get_userbyid(l.lomowner) AS owner,
            CASE WHEN l.lomacl IS NOT NULL THEN (SELECT coalesce(json_agg(json_build_object('grantee',
              CASE WHEN a.grantee = 0 THEN '' ELSE pg_get_userbyid(a.grantee) END, 'privilege', a.privilege_type,
              'grantable', a.is_grantable)), '[]') FROM aclexplode(l.lomacl) a) END AS acl,
            obj_description(l.oid, 'pg_largeobject') AS comment,
            (SELECT coalesce(sum(length(p.data)), 0) FROM pg_largeobject p WHERE p.loid = l.oid)::text AS bytes
       FROM pg_largeobject_metadata l ORDER BY l.oid`,
  );
}

/** A large object's content is read and written in pieces of this size. */
export const LARGE_OBJECT_PIECE = 4 * 1024 * 1024;

export async function readLargeObject(db: Db, oid: string, offset: number): Promise<Buffer> {
  return (
    await db.query<{ d: Buffer }>('SELECT lo_get($1::oid, $2::bigint, $3) AS d', [oid, offset, LARGE_OBJECT_PIECE])
  )[0]!.d;
}

export async function createLargeObject(db: Db, oid: string): Promise<void> {
  await db.query('SELECT lo_create($1::oid)', [oid]);
}

export async function writeLargeObject(db: Db, oid: string, offset: number, data: Buffer): Promise<void> {
  await db.query('SELECT lo_put($1::oid, $2::bigint, $3)', [oid, offset, data]);
}

/** Owner (when it is not the copying role), ACL and comment of a large object, as statements. */
export function largeObjectMeta(lo: LargeObject, self: string, keepOwners: boolean): string[] {
  const out: string[] = [];
  const on = `LARGE OBJECT ${Number(lo.oid)}`;
  if (keepOwners && lo.owner !== self) out.push(`ALTER ${on} OWNER TO ${quoteIdent(lo.owner)}`);
  if (keepOwners && lo.acl) {
    out.push(`REVOKE ALL ON ${on} FROM PUBLIC, ${quoteIdent(lo.owner)}`);
    for (const a of lo.acl)
      out.push(
        `GRANT ${a.privilege} ON ${on} TO ${a.grantee === '' ? 'PUBLIC' : quoteIdent(a.grantee)}${a.grantable ? ' WITH GRANT OPTION' : ''}`,
      );
  }
  if (lo.comment !== null) out.push(`COMMENT ON ${on} IS ${quoteLiteral(lo.comment)}`);
  return out;
}

/** Materialized views and whether the source's holds rows (an unpopulated one stays WITH NO DATA). */
export async function materializedViews(db: Db): Promise<{ schema: string; name: string; populated: boolean }[]> {
  return db.query(
    `SELECT n.nspname AS schema, c.relname AS name, c.relispopulated AS populated
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'm' AND ${USER_NS} AND ${notExtMember('pg_class', 'c.oid')}`,
  );
}

export const refreshMaterializedView = (m: { schema: string; name: string }, populated: boolean) =>
  `REFRESH MATERIALIZED VIEW ${quoteIdent(m.schema)}.${quoteIdent(m.name)}${populated ? '' : ' WITH NO DATA'}`;

/** Columns with a statistics target of their own (ALTER … SET STATISTICS), which the schema library does not carry. */
export async function statisticsTargets(db: Db): Promise<string[]> {
  const rows = await db.query<{ s: string }>(
    `SELECT format('ALTER %s %I.%I ALTER COLUMN %I SET STATISTICS %s',
                   CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                   n.nspname, c.relname, a.attname, a.attstattarget) AS s
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'm', 'f') AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0
        AND ${USER_NS} AND ${notExtMember('pg_class', 'c.oid')} ORDER BY 1`,
  );
  return rows.map((r) => r.s);
}

/** Extended statistics objects (CREATE STATISTICS), which the schema library does not model: definition, owner, comment. */
export async function extendedStatistics(
  db: Db,
): Promise<{ def: string; qname: string; owner: string; comment: string | null }[]> {
  return db.query(
    `SELECT pg_get_statisticsobjdef(s.oid) AS def, format('%I.%I', n.nspname, s.stxname) AS qname,
            pg_get_userbyid(s.stxowner) AS owner, obj_description(s.oid, 'pg_statistic_ext') AS comment
       FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace
      WHERE ${USER_NS} AND ${notExtMember('pg_statistic_ext', 's.oid')} ORDER BY 2`,
  );
}

/** Roles that exist on this server, among `names`. */
export async function existingRoleNames(db: Db, names: string[]): Promise<Set<string>> {
  const rows = await db.query<{ r: string }>('SELECT rolname AS r FROM pg_roles WHERE rolname = ANY($1)', [names]);
  return new Set(rows.map((r) => r.r));
}

/** Among `owners`, those the connected role may not make an object's owner (not superuser, not able to SET ROLE to it). */
export async function ownersOutOfReach(db: Db, owners: string[]): Promise<string[]> {
  const how = db.serverVersionNum >= 160000 ? 'SET' : 'MEMBER';
  const rows = await db.query<{ r: string }>(
    `SELECT r FROM unnest($1::text[]) AS r
      WHERE NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
        AND NOT pg_has_role(current_user, (SELECT oid FROM pg_roles WHERE rolname = r), '${how}')`,
    [owners],
  );
  return rows.map((r) => r.r);
}

/** Each table's columns in their order (a column added after its table was made comes last). */
export async function columnOrders(db: Db): Promise<Map<string, string>> {
  const rows = await db.query<{ qname: string; cols: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS qname, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) AS cols
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'f') AND a.attnum > 0 AND NOT a.attisdropped AND ${USER_NS}
        AND ${notExtMember('pg_class', 'c.oid')} GROUP BY 1`,
  );
  return new Map(rows.map((r) => [r.qname, r.cols]));
}

/** What the choice of a copy's method weighs (engine/copy-method.ts): the database's size, and how many relations. */
export async function databaseShape(db: Db): Promise<{ bytes: number; relations: number }> {
  const [r] = await db.query<{ bytes: string; relations: number }>(
    `SELECT pg_database_size(current_database())::text AS bytes,
            (SELECT count(*)::int FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND ${USER_NS}) AS relations`,
  );
  return { bytes: Number(r!.bytes), relations: r!.relations };
}

/**
 * Indexes of partitions that belong to a partitioned index, parents first: the schema library creates the
 * partitioned index `ON ONLY` its table (as pg_get_indexdef gives it) and never its partitions' indexes, which
 * pg_dump creates and attaches one by one.
 */
export async function partitionIndexes(db: Db): Promise<{ qname: string; def: string; parent: string }[]> {
  return db.query(
    `WITH RECURSIVE tree AS (
       SELECT i.inhrelid AS child, i.inhparent AS parent, 1 AS depth FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relkind = 'I' AND NOT EXISTS (SELECT 1 FROM pg_inherits up WHERE up.inhrelid = i.inhparent)
       UNION ALL
       SELECT i.inhrelid, i.inhparent, t.depth + 1 FROM pg_inherits i JOIN tree t ON i.inhparent = t.child)
     SELECT format('%I.%I', n.nspname, c.relname) AS qname, pg_get_indexdef(t.child) AS def,
            format('%I.%I', pn.nspname, p.relname) AS parent
       FROM tree t JOIN pg_class c ON c.oid = t.child JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_class p ON p.oid = t.parent JOIN pg_namespace pn ON pn.oid = p.relnamespace
      ORDER BY t.depth, 1`,
  );
}

/** Which of `qnames` (schema.index, quoted as format('%I.%I') gives them) exist. */
export async function existingIndexes(db: Db, qnames: string[]): Promise<Set<string>> {
  const rows = await db.query<{ q: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS q FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('i', 'I') AND format('%I.%I', n.nspname, c.relname) = ANY($1)`,
    [qnames],
  );
  return new Set(rows.map((r) => r.q));
}

export const attachIndex = (parent: string, child: string) => `ALTER INDEX ${parent} ATTACH PARTITION ${child}`;
