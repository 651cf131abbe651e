// Each masking strategy as one SQL expression over the column's value, evaluated by the server for every row in one
// rewrite of the table (never a row through node). Deterministic: every random-looking part is cut from
// md5(salt || value), with the project's salt (salt.ts) set for the transaction, so the same value gives the same
// masked value in every column, every table and every sync of the project, and joins on masked columns still match.
import type { ColumnInfo } from '../server/mask-catalog.js';
import { quoteIdent, quoteLiteral } from '../server/catalog.js';
import type { Strategy } from './rules.js';

/** A strategy that cannot apply to the column (its type, NOT NULL, a unique index, its length): said to the user. */
export class StrategyMismatch extends Error {}

const FIRST = [
  'Alex',
  'Sam',
  'Robin',
  'Jordan',
  'Taylor',
  'Morgan',
  'Casey',
  'Jamie',
  'Riley',
  'Avery',
  'Quinn',
  'Charlie',
  'Dana',
  'Emery',
  'Finley',
  'Harper',
  'Kai',
  'Logan',
  'Parker',
  'Reese',
  'Rowan',
  'Sage',
  'Skyler',
  'Drew',
  'Elliot',
  'Hayden',
  'Jesse',
  'Kendall',
  'Lee',
  'Marley',
  'Noel',
  'Peyton',
];
const LAST = [
  'Smith',
  'Jones',
  'Brown',
  'Miller',
  'Davis',
  'Garcia',
  'Wilson',
  'Moore',
  'Taylor',
  'Clark',
  'Hall',
  'Allen',
  'Young',
  'King',
  'Wright',
  'Scott',
  'Green',
  'Baker',
  'Adams',
  'Nelson',
  'Hill',
  'Campbell',
  'Mitchell',
  'Roberts',
  'Carter',
  'Phillips',
  'Evans',
  'Turner',
  'Torres',
  'Parker',
  'Collins',
  'Edwards',
];
const arr = (xs: string[]) => `'{${xs.join(',')}}'::text[]`;

/** md5(salt || value) in hex; `v` is a text expression. */
const hex = (v: string) => `md5(current_setting('pgx.mask_salt') || ${v})`;
/** A non-negative bigint from 15 hex digits of the hash, starting at `from` (1-based). */
const num = (v: string, from = 1) => `('x' || substr(${hex(v)}, ${from}, 15))::bit(60)::bigint`;
const digits = (v: string, from: number, n: number) => `lpad((${num(v, from)} % ${10 ** n})::text, ${n}, '0')`;

/** A text-producing strategy over the text expression `v`, for text of at most `max` characters (null: no limit). */
function textExpr(s: Strategy, v: string, o: { unique: boolean; max: number | null }): string {
  const fit = (e: string) => (o.max !== null ? `left(${e}, ${o.max})` : e);
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
    case 'first_name':
    case 'last_name': {
      const first = `(${arr(FIRST)})[1 + ${num(v, 1)} % ${FIRST.length}]`;
      const last = `(${arr(LAST)})[1 + ${num(v, 16)} % ${LAST.length}]`;
      const base = s.kind === 'name' ? `${first} || ' ' || ${last}` : s.kind === 'first_name' ? first : last;
      return fit(o.unique ? `${base} || ' ' || left(${hex(v)}, 10)` : base);
    }
    case 'phone': {
      const base = `'+1 555 ' || ${digits(v, 1, 3)} || ' ' || ${digits(v, 16, 4)}`;
      return fit(o.unique ? `${base} || ' x' || ${digits(v, 1, 9)}` : base);
    }
    case 'hash':
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

const TEXTUAL = ['email', 'name', 'first_name', 'last_name', 'phone', 'hash', 'ip', 'fixed', 'partial'];

/** The expression giving the column's masked value (NULL stays NULL), cast back to the column's type. */
export function maskExpression(s: Strategy, c: ColumnInfo, defs: string[] = []): string {
  const col = quoteIdent(c.column);
  const v = `${col}::text`;
  const cast = (e: string) => `(CASE WHEN ${col} IS NULL THEN NULL ELSE (${e}) END)::${c.type}`;
  if (c.generated) throw new StrategyMismatch('a generated column: mask the columns it is computed from');
  switch (s.kind) {
    case 'keep':
      return col;
    case 'null':
      if (c.notNull) throw new StrategyMismatch('null on a NOT NULL column: use hash or fixed:<value>');
      return `NULL::${c.type}`;
    case 'hash':
      if (c.category === 'N') {
        const mod = c.base === 'int2' ? 32767 : c.base === 'int4' ? 2147483647 : null;
        return cast(mod ? `${num(v)} % ${mod}` : num(v));
      }
      if (c.base === 'uuid') return cast(`${hex(v)}::uuid`);
      if (c.category === 'S') return cast(textExpr(s, v, { unique: c.unique, max: c.maxLength }));
      throw new StrategyMismatch(`hash applies to text, integer and uuid columns, not ${c.type}`);
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
      return cast(textExpr(s, v, { unique: c.unique, max: c.maxLength }));
    case 'jsonb':
      return jsonbExpr(s, c, defs);
    default:
      if (c.category !== 'S')
        throw new StrategyMismatch(
          `${s.kind} applies to text columns, not ${c.type}${c.category === 'N' ? ': use hash' : ''}`,
        );
      return cast(textExpr(s, v, { unique: c.unique, max: c.maxLength }));
  }
}

/**
 * Each path's value (a string or number) replaced by its strategy's; other values and missing paths as they are. One
 * session-local function per path (pg_temp, gone with the connection), called one inside the other: written inline,
 * each path would repeat the whole expression of the paths before it.
 */
function jsonbExpr(s: Extract<Strategy, { kind: 'jsonb' }>, c: ColumnInfo, defs: string[]): string {
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
        : `to_jsonb(${textExpr(strategy, `(j #>> ${p})`, { unique: false, max: null })})`;
    const fn = `pg_temp.pgx_mask_jsonb_${defs.length + 1}`;
    defs.push(
      `CREATE FUNCTION ${fn}(j jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $pgx$ SELECT CASE WHEN jsonb_typeof(j ` +
        `#> ${p}) IN ('string', 'number') THEN jsonb_set(j, ${p}, ${value}) ELSE j END $pgx$`,
    );
    e = `${fn}(${e})`;
  }
  return `(${e})::${c.type}`;
}
