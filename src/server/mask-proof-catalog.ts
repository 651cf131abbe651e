// The SQL of the check after masking (src/mask/prove.ts, decision 466): the scan's value detectors (src/mask/detect.ts
// valueKind, embeddedKind) written once more as session-local SQL functions, so that every row of the masked copy is
// judged in the server and no value travels to pgx; and the queries that read a relation with them. The two versions
// are held to the same answers by tests/engine/mask-proof.test.ts.
import type { Db } from './db.js';
import { quoteIdent } from './catalog.js';

const RESERVED = String.raw`(^|\.)(example\.(com|net|org)|example|test|invalid|localhost)$`;
const KEYS_IN_TEXT = String.raw`(sk|pk|rk)_(live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[abposr]-[\w-]{10,}|AKIA[0-9A-Z]{16}`;
const SK = String.raw`sk-(ant-|proj-)?[\w-]{20,}`;
const MORE_KEYS = String.raw`glpat-[\w-]{20}|SG\.[\w-]{16,}\.[\w-]{16,}|npm_[A-Za-z0-9]{30,}|shp(at|ss|ca|pa)_[a-fA-F0-9]{32}`;
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** What JavaScript's trim() removes from the ends (ECMAScript WhiteSpace and LineTerminator), as a SQL string. */
const TRIMMED = [
  9,
  10,
  11,
  12,
  13,
  32,
  160,
  5760,
  ...Array.from({ length: 11 }, (_, i) => 8192 + i),
  8232,
  8233,
  8239,
  8287,
  12288,
  65279,
]
  .map((c) => `chr(${c})`)
  .join(' || ');

/**
 * pgx_kind(text): the kind of personal value a whole value is (email, jwt, key, ip, card, iban, phone), else NULL;
 * pgx_embedded_kind(text): an email, JWT or key anywhere in a text; pgx_json_kind(jsonb): either, in a document or
 * any string in it; pgx_array_kind(text[]): pgx_kind of any element. In pg_temp: gone with the connection.
 */
const DETECTORS = [
  `CREATE FUNCTION pg_temp.pgx_luhn(d text) RETURNS boolean LANGUAGE sql IMMUTABLE STRICT AS $pgx$
   SELECT sum(CASE WHEN i % 2 = 1 THEN CASE WHEN x * 2 > 9 THEN x * 2 - 9 ELSE x * 2 END ELSE x END) % 10 = 0
   FROM (SELECT substr(d, length(d) - i, 1)::int AS x, i FROM generate_series(0, length(d) - 1) i) s $pgx$`,
  // Called only on a value shaped like a.b.c.d[/n] (split_part then reads its numbers).
  `CREATE FUNCTION pg_temp.pgx_ipv4_personal(v text) RETURNS boolean LANGUAGE sql IMMUTABLE STRICT AS $pgx$
   SELECT split_part(v, '.', 1)::int <= 255 AND split_part(v, '.', 2)::int <= 255 AND split_part(v, '.', 3)::int <= 255
     AND split_part(split_part(v, '/', 1), '.', 4)::int <= 255 AND split_part(v, '.', 1)::int NOT IN (0, 127)
     AND split_part(v, '.', 1) || '.' || split_part(v, '.', 2) || '.' || split_part(v, '.', 3) NOT IN ('192.0.2', '198.51.100', '203.0.113') $pgx$`,
  // The whole-value detectors (detect.ts valueKind), in its order, on the value with its ends trimmed. Each regex is
  // behind a cheap test of the value's first characters: most values are none of these, and this runs on every row
  // (one regular expression for both tests: each call costs ~1 µs a value; decision 540).
  // One SELECT without FROM, so the server inlines it into the query (no call per row).
  `CREATE FUNCTION pg_temp.pgx_kind_trimmed(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $pgx$
   SELECT CASE
     WHEN v IS NULL OR length(v) < 5 OR length(v) > 2000 THEN NULL
     WHEN v !~ '[@0-9:]|^(eyJ|sk|pk|rk|gh|xox|AKIA|AIza|glpat|SG\\.|npm_|shp)' THEN NULL
     WHEN strpos(v, '@') > 0 AND v ~* '^[^\\s@<>()]+@[a-z0-9-]+(\\.[a-z0-9-]+)+$' THEN
       CASE WHEN substr(v, strpos(v, '@') + 1) ~* ${lit(RESERVED)} THEN NULL ELSE 'email' END
     WHEN left(v, 3) = 'eyJ' AND v ~ '^eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*$' THEN 'jwt'
     WHEN v ~ '^(sk|pk|rk|gh|github_pat_|xox|AKIA|AIza|glpat-|SG\\.|npm_|shp)'
       AND v ~ ${lit(`^(${KEYS_IN_TEXT}|AIza[\\w-]{30,}|${SK}|${MORE_KEYS})$`)} THEN 'key'
     WHEN v ~ '^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}(/\\d{1,2})?$' AND pg_temp.pgx_ipv4_personal(v) THEN 'ip'
     WHEN strpos(v, ':') > 0 AND v ~* '^[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}(/\\d{1,3})?$'
       AND v !~* '^2001:db8:' AND v <> '::1' AND v !~ '^[\\d:.]+$' THEN 'ip'
     WHEN v ~ '^[\\d\\s-]+$' AND regexp_replace(v, '[\\s-]', '', 'g') ~ '^\\d{13,19}$'
       AND regexp_replace(v, '[\\s-]', '', 'g') !~ '^(\\d)\\1+$' AND pg_temp.pgx_luhn(regexp_replace(v, '[\\s-]', '', 'g')) THEN 'card'
     WHEN v ~ '^[A-Z]{2}\\d{2}' AND regexp_replace(v, '\\s', '', 'g') ~ '^[A-Z]{2}\\d{2}[A-Z0-9]{11,30}$' THEN 'iban'
     WHEN v ~ '^\\+?\\(?\\d[\\d\\s().-]{6,}\\d$' AND v !~ '^\\d{4}-\\d{2}-\\d{2}' AND v !~ '^\\+1 555 '
       AND length(regexp_replace(v, '\\D', '', 'g')) BETWEEN 8 AND 15 AND (v ~ '^\\+' OR v ~ '[\\s()-]') AND v !~ '^\\d+\\.\\d+$'
       THEN 'phone'
   END $pgx$`,
  `CREATE FUNCTION pg_temp.pgx_kind(raw text) RETURNS text LANGUAGE sql IMMUTABLE AS $pgx$
   SELECT pg_temp.pgx_kind_trimmed(btrim(raw, ${TRIMMED})) $pgx$`,
  `CREATE FUNCTION pg_temp.pgx_embedded_kind(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $pgx$
   SELECT CASE
     WHEN t IS NULL THEN NULL
     WHEN strpos(t, '@') > 0 AND EXISTS (SELECT 1 FROM regexp_matches(t, '[a-z0-9._%+-]+@([a-z0-9-]+(\\.[a-z0-9-]+)+)', 'gi') m
                                         WHERE m[1] !~* ${lit(RESERVED)}) THEN 'email'
     WHEN t ~ 'eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]+' THEN 'jwt'
     WHEN t ~ ${lit(`\\y(${KEYS_IN_TEXT}|${SK})`)} THEN 'key'
   END $pgx$`,
  `CREATE FUNCTION pg_temp.pgx_json_kind(j jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $pgx$
   SELECT coalesce(pg_temp.pgx_embedded_kind(j::text),
     (SELECT min(pg_temp.pgx_kind(l #>> '{}')) FROM jsonb_path_query(j, 'strict $.**') l WHERE jsonb_typeof(l) = 'string')) $pgx$`,
  `CREATE FUNCTION pg_temp.pgx_array_kind(a text[]) RETURNS text LANGUAGE sql IMMUTABLE AS $pgx$
   SELECT min(pg_temp.pgx_kind(e)) FROM unnest(a) e $pgx$`,
];

/** Makes the detectors on this connection (once per connection). */
export async function installDetectors(db: Db): Promise<void> {
  const [{ n }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'pgx_kind' AND pronamespace = pg_my_temp_schema()`,
  );
  if (n) return;
  for (const d of DETECTORS) await db.query(d);
}

/**
 * The detector for a column of a class: the value it reads (computed once a row) and the call that names the kind of
 * what that value holds, or NULL.
 */
export function detectorOf(
  column: string,
  cls: 'text' | 'json' | 'array',
): { value: string; kind: (ref: string) => string } {
  const c = quoteIdent(column);
  if (cls === 'json') return { value: `${c}::jsonb`, kind: (v) => `pg_temp.pgx_json_kind(${v})` };
  if (cls === 'array') return { value: `${c}::text[]`, kind: (v) => `pg_temp.pgx_array_kind(${v})` };
  return { value: `btrim(${c}::text, ${TRIMMED})`, kind: (v) => `pg_temp.pgx_kind_trimmed(${v})` };
}

/** One check of a relation's column: a detector (counted, with the kinds found), or a shape every value must have. */
export interface ProofCheck {
  detector?: ReturnType<typeof detectorOf>;
  shape?: string;
}

export interface ProofCounts {
  rows: number;
  /** Per check, in order: values the detector flagged and their kinds; values not of the shape. */
  checks: { flagged: number; kinds: string[]; misshapen: number }[];
}

/**
 * Reads `from` once (a relation, maybe sampled: mask-catalog.ts boundedFrom) and counts what each check finds. The
 * detectors' values are computed in a subquery the planner keeps (OFFSET 0), once a row, not once per use; it reads
 * only `columns` (those the shapes name) besides.
 */
export async function proofCounts(db: Db, from: string, columns: string[], checks: ProofCheck[]): Promise<ProofCounts> {
  const values: string[] = [];
  const inner: string[] = [];
  const outer: string[] = ['count(*)::float8 AS rows'];
  checks.forEach((c, i) => {
    if (c.detector) values.push(`${c.detector.value} AS pgx_v${i}`);
    inner.push(`${c.detector ? c.detector.kind(`pgx_v${i}`) : 'NULL::text'} AS k${i}`, `${c.shape ?? 'true'} AS s${i}`);
    outer.push(
      `count(k${i})::int AS n${i}`,
      `coalesce(array_agg(DISTINCT k${i}) FILTER (WHERE k${i} IS NOT NULL), '{}') AS kinds${i}`,
      `count(*) FILTER (WHERE NOT s${i})::int AS bad${i}`,
    );
  });
  const rows = `SELECT *${values.length ? `, ${values.join(', ')}` : ''} FROM ${from} OFFSET 0`;
  const [row] = await db.query<Record<string, unknown>>(
    `SELECT ${outer.join(', ')} FROM (SELECT ${inner.join(', ')} FROM (${rows}) v) x`,
  );
  return {
    rows: Number(row!.rows),
    checks: checks.map((_, i) => ({
      flagged: row![`n${i}`] as number,
      kinds: row![`kinds${i}`] as string[],
      misshapen: row![`bad${i}`] as number,
    })),
  };
}

/**
 * Up to `limit` documents of a json column the detector flags, as text: what the paths holding personal values are
 * read from (only when the check failed; they stay in pgx's process and are never printed).
 */
export async function flaggedDocuments(db: Db, from: string, column: string, limit: number): Promise<string[]> {
  const rows = await db.query<{ d: string }>(
    `SELECT ${quoteIdent(column)}::text AS d FROM ${from} WHERE pg_temp.pgx_json_kind(${quoteIdent(column)}::jsonb) IS NOT NULL LIMIT ${limit}`,
  );
  return rows.map((r) => r.d);
}

/** The detectors on plain values (what tests compare with detect.ts's). */
export async function kindsOf(db: Db, values: string[]): Promise<(string | null)[]> {
  const rows = await db.query<{ k: string | null }>(
    `SELECT pg_temp.pgx_kind(v) AS k FROM unnest($1::text[]) WITH ORDINALITY u(v, i) ORDER BY i`,
    [values],
  );
  return rows.map((r) => r.k);
}
