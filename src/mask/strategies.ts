// Each masking strategy as one SQL expression over the column's value, evaluated by the server for every row in one
// rewrite of the table (never a row through node). Deterministic: every random-looking part is cut from
// md5(salt || value), with the project's salt (salt.ts) set for the transaction, so the same value gives the same
// masked value in every column, every table and every sync of the project, and joins on masked columns still match.
import type { ColumnInfo } from '../server/mask-catalog.js';
import { quoteIdent, quoteLiteral } from '../server/catalog.js';
import { PLAIN_POOLS, type NamePools } from './names.js';
import type { Strategy } from './rules.js';

/** A strategy that cannot apply to the column (its type, NOT NULL, a unique index, its length): said to the user. */
export class StrategyMismatch extends Error {}

/** What expressions share while one copy is masked: the session functions they call, and the name pools. */
export interface MaskContext {
  /** CREATE FUNCTION pg_temp.… statements the expressions call (run first, in the masking transaction). */
  defs: string[];
  pools: NamePools;
}

/** A context for checking whether a strategy applies (the scan's suggestions and rule checks). */
export const checkContext = (): MaskContext => ({ defs: [], pools: PLAIN_POOLS });

const arr = (xs: string[]) => `'{${xs.join(',')}}'::text[]`;

/** md5(salt || value) in hex; `v` is a text expression. */
const hex = (v: string) => `md5(current_setting('pgx.mask_salt') || ${v})`;
/** A non-negative bigint from 15 hex digits of the hash, starting at `from` (1-based). */
const num = (v: string, from = 1) => `('x' || substr(${hex(v)}, ${from}, 15))::bit(60)::bigint`;
const digits = (v: string, from: number, n: number) => `lpad((${num(v, from)} % ${10 ** n})::text, ${n}, '0')`;

/** The longest name a pool holds (a column shorter than a whole name gets it cut). */
const longest = (xs: string[]) => Math.max(...xs.map((x) => x.length));

/** A text-producing strategy over the text expression `v`, for text of at most `max` characters (null: no limit). */
function textExpr(s: Strategy, v: string, o: { unique: boolean; max: number | null }, ctx: MaskContext): string {
  const fit = (e: string) => (o.max !== null ? `left(${e}, ${o.max})` : e);
  /** On a unique column, 10 hex digits after the value keep distinct values distinct, whatever the cut. */
  const widened = (base: string, min: number) => {
    if (!o.unique) return fit(base);
    if (o.max !== null && o.max < min)
      throw new StrategyMismatch(
        `${s.kind} on a unique column needs ${min} characters; the column holds ${o.max}: use hash`,
      );
    return o.max !== null
      ? `left(${base}, ${o.max - 11}) || ' ' || left(${hex(v)}, 10)`
      : `${base} || ' ' || left(${hex(v)}, 10)`;
  };
  const { first: F, last: L } = ctx.pools;
  const first = `(${arr(F)})[1 + ${num(v, 1)} % ${F.length}]`;
  const last = `(${arr(L)})[1 + ${num(v, 16)} % ${L.length}]`;
  switch (s.kind) {
    case 'email': {
      const local = Math.min(16, (o.max ?? 99) - '@example.com'.length - 1);
      if (local < (o.unique ? 12 : 6))
        throw new StrategyMismatch(
          `email needs ${'@example.com'.length + 1 + (o.unique ? 12 : 6)} characters; the column holds ${o.max}: use hash`,
        );
      return `'u' || left(${hex(v)}, ${local}) || '@example.com'`;
    }
    case 'name':
      return widened(`${first} || ' ' || ${last}`, 14);
    case 'first_name':
      return widened(first, 14);
    case 'last_name':
      return widened(last, 14);
    case 'username': {
      // A login from the pools, then hex digits that keep distinct usernames distinct (6; 10 on a unique column).
      const n = o.unique ? 10 : 6;
      if (o.max !== null && o.max < n + 4)
        throw new StrategyMismatch(`username needs ${n + 4} characters; the column holds ${o.max}: use hash`);
      const login = `lower(${first} || '.' || ${last})`;
      return `${o.max !== null ? `left(${login}, ${o.max - n - 1})` : login} || '.' || left(${hex(v)}, ${n})`;
    }
    case 'phone': {
      const base = `'+1 555 ' || ${digits(v, 1, 3)} || ' ' || ${digits(v, 16, 4)}`;
      if (!o.unique) return fit(base);
      if (o.max !== null && o.max < 26)
        throw new StrategyMismatch(`phone on a unique column needs 26 characters; the column holds ${o.max}: use hash`);
      return `${base} || ' x' || ${digits(v, 1, 9)}`;
    }
    case 'hash':
      if (o.unique && o.max !== null && o.max < 12)
        throw new StrategyMismatch(
          `hash on a unique column needs 12 characters to keep values distinct; the column holds ${o.max}: use keep, or widen it`,
        );
      return fit(hex(v));
    case 'ip':
      if (o.unique)
        return `'2001:db8:' || ${[1, 5, 9, 13, 17, 21].map((i) => `to_hex(('x' || substr(${hex(v)}, ${i}, 4))::bit(16)::int)`).join(` || ':' || `)}`;
      return `'198.51.100.' || (1 + ${num(v)} % 254)::text`;
    case 'fixed':
      if (o.unique)
        throw new StrategyMismatch('fixed would give every row the same value, and the column is unique: use hash');
      return quoteLiteral(s.value);
    case 'partial':
      if (o.unique) throw new StrategyMismatch('partial can make two values equal, and the column is unique: use hash');
      return `CASE WHEN length(${v}) <= ${s.keep} THEN repeat('*', length(${v})) ELSE repeat('*', length(${v}) - ${s.keep}) || right(${v}, ${s.keep}) END`;
    default:
      throw new StrategyMismatch(`${s.kind} does not apply to text`);
  }
}

const TEXTUAL = ['email', 'name', 'first_name', 'last_name', 'username', 'phone', 'hash', 'ip', 'fixed', 'partial'];

/**
 * A keyed permutation of n-bit strings (a 4-round Feistel network whose round function is md5(salt, round, half)):
 * `hash` on an integer column maps distinct values to distinct values, so a key stays a key (issue 41: the old
 * `hash % 2^31` collided at 60,503 rows). The same value and width give the same result in every column.
 */
const PERMUTE = `CREATE FUNCTION pg_temp.pgx_mask_permute(b bit varying) RETURNS bit varying LANGUAGE plpgsql STABLE STRICT AS $pgx$
DECLARE h int := length(b) / 2; l bit varying := substring(b FROM 1 FOR h); r bit varying := substring(b FROM h + 1); t bit varying;
BEGIN
  FOR k IN 1..4 LOOP
    t := r;
    r := l # substring(('x' || md5(current_setting('pgx.mask_salt') || ':' || k || ':' || t::text))::bit(128) FROM 1 FOR h);
    l := t;
  END LOOP;
  RETURN l || r;
END $pgx$`;

function permuted(c: ColumnInfo, ctx: MaskContext): string {
  if (!ctx.defs.includes(PERMUTE)) ctx.defs.unshift(PERMUTE);
  const col = quoteIdent(c.column);
  if (c.base === 'int8') return `pg_temp.pgx_mask_permute(${col}::bit(64))::bit(64)::bigint`;
  if (c.base === 'int4') return `pg_temp.pgx_mask_permute(${col}::bit(32))::bit(32)::int`;
  // int2: its 16 bits, permuted, read back as a signed 16-bit number.
  return `((((B'0000000000000000' || pg_temp.pgx_mask_permute(${col}::int::bit(16)))::bit(32)::int + 32768) % 65536) - 32768)`;
}

const INTEGERS = ['int2', 'int4', 'int8'];

/** The expression giving the column's masked value (NULL stays NULL), cast back to the column's type. */
export function maskExpression(s: Strategy, c: ColumnInfo, ctx: MaskContext): string {
  const col = quoteIdent(c.column);
  const v = `${col}::text`;
  const cast = (e: string) => `(CASE WHEN ${col} IS NULL THEN NULL ELSE (${e}) END)::${c.type}`;
  if (s.kind === 'keep') return col;
  if (c.generated)
    throw new StrategyMismatch(
      `a generated column: it follows the columns it is computed from (${c.generatedFrom.join(', ')}); remove this rule`,
    );
  if (c.relkind === 'm')
    throw new StrategyMismatch(
      `a materialized view's column: it is refreshed from the masked tables (a rule on the view itself: ` +
        `"materialized view ${c.schema}.${c.table}" = "empty" | "keep")`,
    );
  if (c.category === 'A' && s.kind !== 'null') return arrayExpr(s, c, ctx);
  switch (s.kind) {
    case 'null':
      if (c.notNull) throw new StrategyMismatch('null on a NOT NULL column: use hash or fixed:<value>');
      return `NULL::${c.type}`;
    case 'hash':
      if (INTEGERS.includes(c.base)) {
        if (c.sequenceFed)
          throw new StrategyMismatch(
            'its values come from a sequence: masked keys would meet the next ones the sequence hands out, and a key ' +
              'is not personal: use keep',
          );
        return cast(permuted(c, ctx));
      }
      if (c.base === 'uuid') return cast(`${hex(v)}::uuid`);
      if (c.category === 'S') return cast(textExpr(s, v, { unique: c.unique, max: c.maxLength }, ctx));
      throw new StrategyMismatch(
        `hash applies to text, integer and uuid columns, not ${c.type}${c.category === 'N' ? ': use null, fixed:<number> or keep' : ''}`,
      );
    case 'fixed':
      if (c.unique)
        throw new StrategyMismatch('fixed would give every row the same value, and the column is unique: use hash');
      return `${quoteLiteral(s.value)}::${c.type}`;
    case 'date_shift':
      if (c.category !== 'D' || /^time( |$)/.test(c.type))
        throw new StrategyMismatch(`date_shift applies to date and timestamp columns, not ${c.type}`);
      // -days … -1 or 1 … days: never 0, so no value stays where it was.
      return cast(
        `${col} + ((${num(v)} % ${2 * s.days}) - ${s.days} + (${num(v)} % ${2 * s.days}) / ${s.days}) * interval '1 day'`,
      );
    case 'ip':
      if (c.category !== 'I' && c.category !== 'S')
        throw new StrategyMismatch(`ip applies to inet and text columns, not ${c.type}`);
      return cast(textExpr(s, v, { unique: c.unique, max: c.maxLength }, ctx));
    case 'jsonb':
      return jsonbExpr(s, c, ctx);
    case 'refresh':
    case 'empty':
      throw new StrategyMismatch(`${s.kind} applies to a materialized view or the large objects, not to a column`);
    default:
      if (c.category !== 'S')
        throw new StrategyMismatch(
          `${s.kind} applies to text columns, not ${c.type}${c.category === 'N' ? ': use hash' : ''}`,
        );
      return cast(textExpr(s, v, { unique: c.unique, max: c.maxLength }, ctx));
  }
}

/**
 * A text strategy applied to each element of an array of text (NULL elements stay NULL; the order is kept), through a
 * session-local function: ALTER … TYPE … USING takes no subquery.
 */
function arrayExpr(s: Strategy, c: ColumnInfo, ctx: MaskContext): string {
  if (c.elemCategory !== 'S' || !TEXTUAL.includes(s.kind))
    throw new StrategyMismatch(
      `${s.kind} does not apply to ${c.type} (on arrays: text strategies, element by element)`,
    );
  const e = textExpr(s, 'e::text', { unique: false, max: c.maxLength }, ctx);
  const fn = `pg_temp.pgx_mask_array_${ctx.defs.length + 1}`;
  ctx.defs.push(
    `CREATE FUNCTION ${fn}(a text[]) RETURNS text[] LANGUAGE sql STABLE STRICT AS $pgx$ SELECT ARRAY(SELECT CASE WHEN e ` +
      `IS NULL THEN NULL ELSE (${e}) END FROM unnest(a) WITH ORDINALITY u(e, i) ORDER BY i) $pgx$`,
  );
  return `${fn}(${quoteIdent(c.column)}::text[])::${c.type}`;
}

/**
 * Each path's value (a string or number) replaced by its strategy's; other values and missing paths as they are. One
 * session-local function per path (pg_temp, gone with the connection), called one inside the other: written inline,
 * each path would repeat the whole expression of the paths before it.
 */
function jsonbExpr(s: Extract<Strategy, { kind: 'jsonb' }>, c: ColumnInfo, ctx: MaskContext): string {
  if (c.base !== 'jsonb' && c.base !== 'json')
    throw new StrategyMismatch(`a jsonb rule applies to json and jsonb columns, not ${c.type}`);
  let e = `${quoteIdent(c.column)}::jsonb`;
  for (const { path, strategy } of s.paths) {
    if (!TEXTUAL.includes(strategy.kind) && strategy.kind !== 'null')
      throw new StrategyMismatch(`${strategy.kind} does not apply to a jsonb path`);
    const p = `${quoteLiteral(`{${path.map((k) => `"${k.replace(/["\\]/g, '\\$&')}"`).join(',')}}`)}::text[]`;
    const value =
      strategy.kind === 'null'
        ? `'null'::jsonb`
        : `to_jsonb(${textExpr(strategy, `(j #>> ${p})`, { unique: false, max: null }, ctx)})`;
    const fn = `pg_temp.pgx_mask_jsonb_${ctx.defs.length + 1}`;
    ctx.defs.push(
      `CREATE FUNCTION ${fn}(j jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $pgx$ SELECT CASE WHEN jsonb_typeof(j ` +
        `#> ${p}) IN ('string', 'number') THEN jsonb_set(j, ${p}, ${value}) ELSE j END $pgx$`,
    );
    e = `${fn}(${e})`;
  }
  return `(${e})::${c.type}`;
}

/** The longest value each name strategy writes with the pools (a shorter varchar cuts it: the check then reads a prefix). */
export const NAME_LENGTH = { first: longest(PLAIN_POOLS.first), last: longest(PLAIN_POOLS.last) };
