// The [mask] rules of .pgx.toml: one per column, keyed "schema.table.column", each naming how that column's values
// are replaced in pgx's own copy before any template, pool member or branch is made from it (decision 460). Parsed
// and validated here, as config is loaded (an unknown strategy or a malformed key is a CONFIG_INVALID naming it);
// whether each key names a real column is checked against the database when the rules are applied. Besides columns,
// a key can name what holds personal data outside a table's rows (decision 469): a comment ("comment on column
// public.users.email"), a materialized view ("materialized view public.mv"), or the database's large objects.
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';

/** How one column (or one path of a jsonb column, a comment, a materialized view, the large objects) is masked. */
export type Strategy =
  | {
      kind:
        | 'email'
        | 'name'
        | 'first_name'
        | 'last_name'
        | 'username'
        | 'phone'
        | 'hash'
        | 'null'
        | 'keep'
        | 'ip'
        | 'refresh'
        | 'empty';
    }
  | { kind: 'fixed'; value: string }
  | { kind: 'date_shift'; days: number }
  | { kind: 'partial'; keep: number }
  | { kind: 'jsonb'; paths: { path: string[]; strategy: Strategy }[] };

/** What a rule is about: a column of a table, a comment, a materialized view, or every large object. */
export type RuleTarget = 'column' | 'comment' | 'matview' | 'large_objects';

export interface MaskRule {
  /** As written in .pgx.toml. */
  key: string;
  on: RuleTarget;
  /** A column's (or a materialized view's: column '') parts; '' for a comment or the large objects. */
  schema: string;
  table: string;
  column: string;
  /** A comment's object as PostgreSQL names it ("column public.users.email", "table public.users"). */
  object?: string;
  strategy: Strategy;
  /** The strategy as written (canonical text; the digest and messages use it). */
  text: string;
}

/** The strategies, with what each does (the scan's suggestions, the docs and `pgx source scan` use these words). */
export const STRATEGIES: Record<string, string> = {
  email: 'u<16 hex>@example.com (a reserved domain), the same for the same address',
  name: 'a plausible "First Last" picked by the value\'s hash',
  first_name: "a plausible first name picked by the value's hash",
  last_name: "a plausible last name picked by the value's hash",
  username: 'a login such as "alvena.dornwick.3f9a2c" (its hex keeps distinct usernames distinct)',
  phone: '+1 555 NNN NNNN (an unassigned area code), the same for the same number',
  hash: '32 hex digits of md5(salt || value) for text, a keyed permutation of integer columns (distinct stays distinct), a uuid for uuid columns',
  null: 'NULL (refused on a NOT NULL column)',
  keep: 'unchanged: you reviewed the column and it is not personal',
  ip: 'an address in a documentation range (198.51.100.0/24, 2001:db8::/32 for unique columns)',
  'fixed:<value>': 'the same value in every row (refused on a unique column)',
  'date_shift[:<days>]': 'the date moved by up to ±days (default 30), the same shift for the same value',
  'partial[:<n>]': 'every character but the last n (default 4) replaced by "*"',
  '{ jsonb = { "a.b" = "<strategy>" } }':
    'the strategy applied to each path of a json/jsonb value, where it holds a string or number',
  refresh: 'a materialized view: refreshed from the masked tables (what every one that depends on them gets)',
  empty: 'a materialized view left unpopulated (WITH NO DATA); the large objects: every one emptied',
};

const SIMPLE = [
  'email',
  'name',
  'first_name',
  'last_name',
  'username',
  'phone',
  'hash',
  'null',
  'keep',
  'ip',
  'refresh',
  'empty',
] as const;

/** A strategy's text → the strategy, or a message saying what is wrong with it. */
export function parseStrategy(text: string): Strategy | string {
  if ((SIMPLE as readonly string[]).includes(text)) return { kind: text as (typeof SIMPLE)[number] };
  const at = text.indexOf(':');
  const head = at === -1 ? text : text.slice(0, at);
  const arg = at === -1 ? undefined : text.slice(at + 1);
  if (head === 'fixed' && arg !== undefined) return { kind: 'fixed', value: arg };
  if (head === 'date_shift' || head === 'partial') {
    if (arg !== undefined && !/^\d{1,5}$/.test(arg))
      return `"${text}": ${head} takes a whole number (${head}:${head === 'partial' ? 4 : 30})`;
    const n = arg === undefined ? (head === 'partial' ? 4 : 30) : Number(arg);
    if (head === 'date_shift' && n < 1) return `"${text}": date_shift needs at least 1 day`;
    return head === 'partial' ? { kind: 'partial', keep: n } : { kind: 'date_shift', days: n };
  }
  return (
    `unknown strategy "${text}" (known: ${Object.keys(STRATEGIES)
      .filter((s) => !s.startsWith('{'))
      .join(', ')}, ` + `or { jsonb = { "path" = "<strategy>" } })`
  );
}

/** "schema.table.column", each part bare (no dots or quotes) or double-quoted ("" for a quote inside). */
const PART = String.raw`("(?:[^"]|"")+"|[^."]+)`;
const KEY_RE = new RegExp(`^${PART}\\.${PART}\\.${PART}$`);
const unquote = (p: string) => (p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p);

export function parseKey(key: string): { schema: string; table: string; column: string } | undefined {
  const m = KEY_RE.exec(key);
  return m ? { schema: unquote(m[1]!), table: unquote(m[2]!), column: unquote(m[3]!) } : undefined;
}

/**
 * The object types a comment rule may name, as `comment on <type> <identity>` (the words of COMMENT ON, and the
 * identity as PostgreSQL's pg_identify_object writes it: "comment on column public.users.email").
 */
export const COMMENT_TYPES = [
  'materialized view',
  'foreign table',
  'table',
  'view',
  'column',
  'index',
  'sequence',
  'type',
  'domain',
  'function',
  'procedure',
  'aggregate',
  'schema',
  'constraint',
  'trigger',
  'policy',
  'rule',
  'large object',
] as const;

/** A key for something that is not a column: a comment, a materialized view, the large objects; else undefined. */
function objectKey(key: string): Omit<MaskRule, 'key' | 'strategy' | 'text'> | string | undefined {
  const m = /^\s*(comment\s+on|materialized\s+view|large\s+objects)\b\s*(.*)$/i.exec(key);
  if (!m) return undefined;
  const head = m[1]!.toLowerCase().replace(/\s+/g, ' ');
  const rest = m[2]!.trim();
  if (head === 'large objects')
    return rest ? 'a "large objects" key names all of them: nothing may follow it' : none('large_objects');
  if (head === 'materialized view') {
    const parts = /^("(?:[^"]|"")+"|[^."\s]+)\.("(?:[^"]|"")+"|[^."\s]+)$/.exec(rest);
    if (!parts) return `a materialized view's key is "materialized view <schema>.<name>"`;
    return { ...none('matview'), schema: unquote(parts[1]!), table: unquote(parts[2]!) };
  }
  const type = COMMENT_TYPES.find((t) => rest.toLowerCase().startsWith(t + ' '));
  if (!type)
    return `a comment's key is "comment on <${COMMENT_TYPES.join(' | ')}> <its name, as pgx source scan prints it>"`;
  return { ...none('comment'), object: `${type} ${rest.slice(type.length).trim()}` };
}

const none = (on: RuleTarget) => ({ on, schema: '', table: '', column: '' });

/** Which strategies a rule about each kind of target may use (a column's are checked against its type later). */
const STRATEGIES_FOR: Record<Exclude<RuleTarget, 'column'>, string[]> = {
  comment: ['null', 'keep', 'fixed'],
  matview: ['refresh', 'empty', 'keep'],
  large_objects: ['empty', 'keep'],
};

/** A part of a key, quoted only when it needs it. */
const part = (p: string) => (/^[^."\s]+$/.test(p) ? p : `"${p.replace(/"/g, '""')}"`);

/** A key for a column, quoting a part only when it needs it (what the scan prints for pasting). */
export function keyOf(schema: string, table: string, column: string): string {
  return `${part(schema)}.${part(table)}.${part(column)}`;
}

/** A materialized view's key: "materialized view <schema>.<name>". */
export const matviewKey = (schema: string, name: string) => `materialized view ${part(schema)}.${part(name)}`;

type RawValue = string | { jsonb: Record<string, string> };

function ruleOf(key: string, raw: RawValue): MaskRule | string {
  const object = objectKey(key);
  if (typeof object === 'string') return object;
  if (object && object.on !== 'column') {
    const allowed = STRATEGIES_FOR[object.on];
    const s = typeof raw === 'string' ? parseStrategy(raw) : 'a jsonb rule applies to a json or jsonb column only';
    if (typeof s === 'string') return s;
    if (!allowed.includes(s.kind)) return `"${raw as string}" does not apply here (it takes ${allowed.join(', ')})`;
    return { key, ...object, strategy: s, text: raw as string };
  }
  const parsed = parseKey(key);
  if (!parsed)
    return (
      `a key must name one column as "schema.table.column" (or be "comment on …", "materialized view …" or ` +
      `"large objects")`
    );
  const where = { on: 'column' as const, ...parsed };
  if (typeof raw === 'string') {
    const s = parseStrategy(raw);
    if (typeof s === 'string') return s;
    if (s.kind === 'refresh' || s.kind === 'empty')
      return `"${raw}" applies to a materialized view or the large objects, not to a column`;
    return { key, ...where, strategy: s, text: raw };
  }
  const paths: { path: string[]; strategy: Strategy }[] = [];
  for (const [path, text] of Object.entries(raw.jsonb)) {
    const s = parseStrategy(text);
    if (typeof s === 'string') return `path "${path}": ${s}`;
    if (s.kind === 'keep' || s.kind === 'date_shift' || s.kind === 'refresh' || s.kind === 'empty')
      return `path "${path}": ${s.kind} is not a strategy for a jsonb path`;
    if (!/^[^.]+(\.[^.]+)*$/.test(path)) return `path "${path}": a path is keys (or array indexes) joined by "."`;
    paths.push({ path: path.split('.'), strategy: s });
  }
  if (!paths.length) return '{ jsonb = { ... } } names no path';
  const text = `jsonb{${Object.entries(raw.jsonb)
    .map(([p, t]) => `${p}=${t}`)
    .sort()
    .join(',')}}`;
  return { key, ...where, strategy: { kind: 'jsonb', paths }, text };
}

/** The [mask] table of .pgx.toml, validated into rules; every bad key is reported with its own message. */
export const maskSection = z.pipe(
  z.record(z.string(), z.union([z.string(), z.strictObject({ jsonb: z.record(z.string(), z.string()) })])),
  z.transform((raw: Record<string, RawValue>, ctx) => {
    const rules: MaskRule[] = [];
    for (const [key, value] of Object.entries(raw)) {
      const r = ruleOf(key, value);
      if (typeof r === 'string') ctx.issues.push({ code: 'custom', message: r, input: value, path: [key] });
      else rules.push(r);
    }
    return rules;
  }),
);

/**
 * What a copy was masked with, as one short value: stamped on the masked source copy and the template, so that the
 * doctor and a template build see when the rules have changed since. Null: no rules at all.
 */
export function rulesDigest(rules: readonly MaskRule[]): string | null {
  if (!rules.length) return null;
  // A column's tuple is what it was before other targets existed, so existing copies keep their digest.
  const canonical = rules
    .map((r) =>
      r.on === 'column' ? [r.schema, r.table, r.column, r.text] : [r.on, r.object ?? `${r.schema}.${r.table}`, r.text],
    )
    .sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16);
}

/** Rules that change something (all but `keep`). */
export const masking = (rules: readonly MaskRule[]) => rules.filter((r) => r.strategy.kind !== 'keep');
