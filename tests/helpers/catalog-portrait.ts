// What a copy must carry besides what `pgx agent diff` compares (schema objects by definition, rows): owners, ACLs
// (column ones too), comments, column order, statistics targets, extended statistics, trigger states, row security,
// policies, default privileges, sequences' values, materialized views' state, large objects (OID, owner, ACL,
// comment, content), and a checksum of every table's rows. Two databases with equal portraits are the same copy.
import pg from 'pg';

export interface Server {
  host: string;
  port: number;
  user: string;
  password: string;
}

const USER_NS = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname !~ '^pg_(toast_)?temp_'`;
const NOT_EXT = (cat: string, x: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '${cat}'::regclass AND e.objid = ${x} AND e.deptype = 'e')`;

const QUERIES: Record<string, string> = {
  schemas: `SELECT n.nspname, pg_get_userbyid(n.nspowner) AS owner, n.nspacl::text AS acl, obj_description(n.oid, 'pg_namespace') AS comment
              FROM pg_namespace n WHERE ${USER_NS} ORDER BY 1`,
  relations: `SELECT format('%I.%I', n.nspname, c.relname) AS q, c.relkind, c.relpersistence, pg_get_userbyid(c.relowner) AS owner,
                     c.relacl::text AS acl, obj_description(c.oid, 'pg_class') AS comment, c.relrowsecurity, c.relforcerowsecurity,
                     c.relispopulated, c.reloptions::text AS options,
                     (SELECT string_agg(concat_ws(':', a.attname, format_type(a.atttypid, a.atttypmod), coalesce(a.attstattarget, -1),
                             a.attacl::text, col_description(c.oid, a.attnum), a.attgenerated, a.attidentity), ' | ' ORDER BY a.attnum)
                        FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE ${USER_NS} AND ${NOT_EXT('pg_class', 'c.oid')} AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'i') ORDER BY 1`,
  routines: `SELECT p.oid::regprocedure::text AS f, pg_get_userbyid(p.proowner) AS owner, p.proacl::text AS acl,
                    obj_description(p.oid, 'pg_proc') AS comment, md5(CASE WHEN p.prokind = 'a' THEN '' ELSE pg_get_functiondef(p.oid) END) AS def
               FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_NS} AND ${NOT_EXT('pg_proc', 'p.oid')} ORDER BY 1`,
  types: `SELECT format('%I.%I', n.nspname, t.typname) AS t, t.typtype, pg_get_userbyid(t.typowner) AS owner, t.typacl::text AS acl,
                 obj_description(t.oid, 'pg_type') AS comment
            FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
           WHERE ${USER_NS} AND ${NOT_EXT('pg_type', 't.oid')} AND t.typtype IN ('d', 'e', 'c', 'r') AND t.typrelid = 0 ORDER BY 1`,
  triggers: `SELECT format('%I.%I', c.relname, t.tgname) AS t, t.tgenabled, pg_get_triggerdef(t.oid) AS def
               FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE NOT t.tgisinternal AND ${USER_NS} ORDER BY 1`,
  constraints: `SELECT format('%I.%I', c.relname, k.conname) AS k, k.contype, k.convalidated, pg_get_constraintdef(k.oid) AS def
                  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE ${USER_NS} ORDER BY 1`,
  indexes: `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
  policies: `SELECT schemaname, tablename, policyname, permissive, roles::text, cmd, qual, with_check FROM pg_policies ORDER BY 1, 2, 3`,
  default_acls: `SELECT pg_get_userbyid(d.defaclrole) AS role, d.defaclnamespace::regnamespace::text AS ns, d.defaclobjtype,
                        d.defaclacl::text AS acl FROM pg_default_acl d ORDER BY 1, 2, 3`,
  statistics: `SELECT pg_get_statisticsobjdef(s.oid) AS def, pg_get_userbyid(s.stxowner) AS owner FROM pg_statistic_ext s
                 JOIN pg_namespace n ON n.oid = s.stxnamespace WHERE ${USER_NS} ORDER BY 1`,
  extensions: `SELECT extname, extversion, extnamespace::regnamespace::text AS ns FROM pg_extension ORDER BY 1`,
  large_objects: `SELECT l.oid::text AS oid, pg_get_userbyid(l.lomowner) AS owner, l.lomacl::text AS acl,
                         obj_description(l.oid, 'pg_largeobject') AS comment, md5(lo_get(l.oid)) AS content
                    FROM pg_largeobject_metadata l ORDER BY l.oid`,
};

export type Portrait = Record<string, unknown[]>;

export async function portrait(server: Server, database: string): Promise<Portrait> {
  const c = new pg.Client({ ...server, database });
  await c.connect();
  try {
    const out: Portrait = {};
    for (const [k, q] of Object.entries(QUERIES)) out[k] = (await c.query(q)).rows;
    // Sequences' values and every table's (and populated materialized view's) rows.
    const rels = (
      await c.query<{ q: string; relkind: string; populated: boolean }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS q, c.relkind, c.relispopulated AS populated
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE ${USER_NS} AND ${NOT_EXT('pg_class', 'c.oid')} AND c.relkind IN ('r', 'm', 'S') ORDER BY 1`,
      )
    ).rows;
    out.sequences = [];
    out.rows = [];
    for (const r of rels) {
      if (r.relkind === 'S')
        out.sequences.push({ q: r.q, ...(await c.query(`SELECT last_value, is_called FROM ${r.q}`)).rows[0] });
      else if (r.populated)
        out.rows.push({
          q: r.q,
          ...(
            await c.query(
              `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS sum FROM ${r.q} t`,
            )
          ).rows[0],
        });
    }
    return out;
  } finally {
    await c.end();
  }
}

/** The keys of two portraits that differ, with both sides (for a readable failure). */
export function portraitDifferences(a: Portrait, b: Portrait): Record<string, { a: unknown[]; b: unknown[] }> {
  const out: Record<string, { a: unknown[]; b: unknown[] }> = {};
  for (const k of Object.keys(a)) {
    const [x, y] = [JSON.stringify(a[k]), JSON.stringify(b[k])];
    if (x === y) continue;
    const ys = new Set((b[k] ?? []).map((r) => JSON.stringify(r)));
    const xs = new Set((a[k] ?? []).map((r) => JSON.stringify(r)));
    out[k] = {
      a: a[k]!.filter((r) => !ys.has(JSON.stringify(r))),
      b: (b[k] ?? []).filter((r) => !xs.has(JSON.stringify(r))),
    };
  }
  return out;
}
