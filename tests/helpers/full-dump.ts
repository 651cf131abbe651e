// A full dump of a database, and which original personal values are left anywhere in it: the test of issue 41 that a
// masked copy holds none. Every text value of every row of every table and materialized view (read as JSON), and
// pg_dump's plain output when a pg_dump that can read the server is on PATH (data, schema, comments, large objects,
// materialized views' rows); without one, the comments, view definitions and function bodies (what a machine without
// client programs can give).
import { spawnSync } from 'node:child_process';
import { pgInfo, sql } from './pgx.js';

export interface Dump {
  /** Every text value of every row of every table and materialized view (lower case). */
  fields: Set<string>;
  /** All of it, values and schema, as one lower-case text (for values that may sit inside others). */
  text: string;
  /** How the text was made. */
  via: 'pg_dump' | 'sql';
}

/**
 * The text values (lower case) of every row of every table and materialized view of `database`, but the columns
 * `except` names ("schema.table.column", the sample's personal columns when reading its origin's other values).
 */
export async function textFields(database: string, except: string[] = []): Promise<Set<string>> {
  const relations = await sql<{ schema: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'm') AND c.relispopulated AND n.nspname NOT IN ('pg_catalog', 'information_schema')
       AND n.nspname NOT LIKE 'pg\\_%'`,
    [],
    database,
  );
  const fields = new Set<string>();
  for (const { schema, name } of relations) {
    const q = `"${schema}"."${name.replace(/"/g, '""')}"`;
    for (const row of await sql<{ j: Record<string, unknown> }>(`SELECT to_jsonb(t) AS j FROM ${q} t`, [], database)) {
      for (const [column, v] of Object.entries(row.j))
        if (typeof v === 'string' && !except.includes(`${schema}.${name}.${column}`)) fields.add(v.toLowerCase());
    }
  }
  return fields;
}

export async function fullDump(database: string): Promise<Dump> {
  const fields = await textFields(database);
  const p = pgInfo();
  const r = spawnSync('pg_dump', ['--no-owner', '-d', database], {
    env: { PATH: process.env.PATH, PGHOST: p.host, PGPORT: String(p.port), PGUSER: p.user, PGPASSWORD: p.password },
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (!r.error && r.status === 0) {
    return { fields, text: r.stdout.toLowerCase(), via: 'pg_dump' };
  }
  const schema = await sql<{ t: string }>(
    `SELECT description AS t FROM pg_description UNION ALL SELECT pg_get_viewdef(c.oid) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('v', 'm') AND n.nspname = 'public'
     UNION ALL SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'`,
    [],
    database,
  );
  return { fields, text: [...fields, ...schema.map((s) => s.t.toLowerCase())].join('\n'), via: 'sql' };
}

/**
 * The original values found in the dump, by kind. A value counts as found when it is a whole text value of some row,
 * or, for the long kinds (emails, streets, full names, phones, usernames; 8 characters or more), when it is anywhere
 * in the dump, inside another value or in the schema. A value the origin also holds in a column that is not personal
 * (a first name that is also a city, "RALEIGH"; a district, "VIRGINIA": `elsewhere`) is no sign of a leak when it
 * is a whole value; numbers (ids, amounts) are not text values, so a postcode "10975" is not found in a rental_id.
 */
export function originalsIn(
  dump: Dump,
  originals: Record<string, string[]>,
  elsewhere: ReadonlySet<string> = new Set(),
): Record<string, string[]> {
  const long = new Set(['emails', 'streets', 'full_names', 'phones', 'usernames']);
  return Object.fromEntries(
    Object.entries(originals).map(([kind, values]) => [
      kind,
      values.filter((v) => {
        const x = v.toLowerCase();
        return (dump.fields.has(x) && !elsewhere.has(x)) || (long.has(kind) && x.length >= 8 && dump.text.includes(x));
      }),
    ]),
  );
}
