// The scan: which columns of a database look personal (detect.ts, on each column's name and a sample of its values),
// which of them have a rule, and which rules are wrong (no such column, a strategy that cannot apply). `pgx source
// scan` prints it; import, sync and a masked template build refuse while it finds a personal column with no rule,
// listing each with why and a [mask] block ready to paste (fail closed: decision 460).
import type { Db } from '../server/db.js';
import { columnsOf, foreignKeysOf, sampleValues, type ColumnInfo, type ForeignKey } from '../server/mask-catalog.js';
import { embeddedKind, jsonPaths, nameSign, suggestionFor, valueKind } from './detect.js';
import { keyOf, type MaskRule } from './rules.js';
import { maskExpression, StrategyMismatch } from './strategies.js';

/** Rows sampled per table. */
const SAMPLE = 200;

export interface Finding {
  key: string;
  type: string;
  /** Why it looks personal (its name, its values). */
  why: string[];
  /** The rule it has (its strategy as written), or null. */
  rule: string | null;
  /** The strategy to paste when it has none (one that applies to the column's type and constraints). */
  suggest: string;
}

export interface RuleProblem {
  key: string;
  problem: string;
}

export interface ScanReport {
  database: string;
  tables: number;
  columns: number;
  /** Every column that looks personal, ruled or not. */
  personal: Finding[];
  /** The personal columns with no rule: import, sync and a masked template build refuse while there is one. */
  unruled: Finding[];
  /** Rules that name no column, or whose strategy cannot apply to theirs. */
  problems: RuleProblem[];
  /** Rules that apply, keep included. */
  rules: number;
  /** [mask] lines for the unruled columns, ready to paste into .pgx.toml. */
  block: string;
}

const tomlString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The first of the candidates that applies to the column (the suggestion must be a rule that works as pasted). */
function workable(c: ColumnInfo, first: string): string {
  const tries = [first, 'hash', 'null', 'fixed:redacted', 'keep'];
  for (const t of tries) {
    if (t.startsWith('{')) return t;
    try {
      maskExpression(parseLoose(t), c);
      return t;
    } catch (err) {
      if (!(err instanceof StrategyMismatch)) throw err;
    }
  }
  return 'keep';
}

function parseLoose(t: string): MaskRule['strategy'] {
  const [head, arg] = t.split(':') as [string, string | undefined];
  if (head === 'fixed') return { kind: 'fixed', value: arg ?? '' };
  if (head === 'date_shift') return { kind: 'date_shift', days: Number(arg ?? 30) };
  if (head === 'partial') return { kind: 'partial', keep: Number(arg ?? 4) };
  return { kind: head as 'email' };
}

/** Checks each rule against the database's columns (and foreign keys: both ends of one must be masked alike). */
export function ruleProblems(rules: readonly MaskRule[], columns: ColumnInfo[], fks: ForeignKey[]): RuleProblem[] {
  const byKey = new Map(columns.map((c) => [`${c.schema}\0${c.table}\0${c.column}`, c]));
  const ruleAt = new Map(rules.map((r) => [`${r.schema}\0${r.table}\0${r.column}`, r]));
  const problems: RuleProblem[] = [];
  for (const r of rules) {
    const c = byKey.get(`${r.schema}\0${r.table}\0${r.column}`);
    if (!c) {
      problems.push({
        key: r.key,
        problem: `names no column of a table in this database (a partition's or inheritance child's column is masked by its parent's rule)`,
      });
      continue;
    }
    try {
      maskExpression(r.strategy, c);
    } catch (err) {
      if (!(err instanceof StrategyMismatch)) throw err;
      problems.push({
        key: r.key,
        problem: `"${r.text}" cannot mask ${c.type}${c.notNull ? ' NOT NULL' : ''}${c.unique ? ' (unique)' : ''}: ${err.message}`,
      });
    }
  }
  for (const fk of fks) {
    fk.columns.forEach((col, i) => {
      const a = ruleAt.get(`${fk.schema}\0${fk.table}\0${col}`);
      const b = ruleAt.get(`${fk.refSchema}\0${fk.refTable}\0${fk.refColumns[i]}`);
      const masks = (r: MaskRule | undefined) => !!r && r.strategy.kind !== 'keep';
      if ((masks(a) || masks(b)) && a?.text !== b?.text) {
        problems.push({
          key: keyOf(fk.schema, fk.table, col),
          problem:
            `references ${keyOf(fk.refSchema, fk.refTable, fk.refColumns[i]!)} (foreign key ${fk.name}): give both ` +
            `the same strategy, so that masked keys still match`,
        });
      }
    });
  }
  return problems;
}

/** Scans the database `db` is connected to against the rules. Reads the catalog and ≤ 200 rows per table; writes nothing. */
export async function scanDatabase(
  db: Db,
  database: string,
  rules: readonly MaskRule[],
  progress: (msg: string) => void = () => {},
): Promise<ScanReport> {
  const columns = await columnsOf(db);
  const fks = await foreignKeysOf(db);
  const ruleAt = new Map(rules.map((r) => [`${r.schema}\0${r.table}\0${r.column}`, r]));
  const tables = new Map<string, ColumnInfo[]>();
  for (const c of columns) tables.set(`${c.schema}\0${c.table}`, [...(tables.get(`${c.schema}\0${c.table}`) ?? []), c]);
  const personal: Finding[] = [];
  let done = 0;
  for (const cols of tables.values()) {
    const { schema, table, rows } = cols[0]!;
    progress(`scanning: ${++done}/${tables.size} table(s), now ${schema}.${table}`);
    const signs = new Map<ColumnInfo, { why: string[]; suggest: string }>();
    const mark = (c: ColumnInfo, why: string, suggest: string) => {
      const s = signs.get(c) ?? { why: [], suggest };
      s.why.push(why);
      signs.set(c, s);
    };
    for (const c of cols) {
      const n = nameSign(table, c.column);
      if (n) mark(c, n.why, n.suggest);
      if (c.base === 'inet' || c.base === 'cidr') mark(c, `its type is ${c.base} (IP addresses)`, 'ip');
    }
    // Values: text-like and json columns, from a sample of the table.
    const sampled = cols.filter((c) => c.category === 'S' || c.base === 'json' || c.base === 'jsonb');
    if (sampled.length) {
      const sample = await sampleValues(
        db,
        schema,
        table,
        sampled.map((c) => c.column),
        rows,
        SAMPLE,
      );
      for (const c of sampled) {
        const values = sample
          .map((r) => r[c.column])
          .filter((v): v is string => v !== null && v !== undefined)
          .slice(0, SAMPLE);
        if (!values.length) continue;
        const json = c.base === 'json' || c.base === 'jsonb';
        const kinds = new Map<string, number>();
        for (const v of values) {
          const k = json ? embeddedKind(v) : valueKind(v);
          if (k) kinds.set(k, (kinds.get(k) ?? 0) + 1);
        }
        for (const [k, n] of kinds)
          mark(c, `${n}/${values.length} sampled values look like ${k}`, json ? 'jsonb' : suggestionFor(k));
        if (json && signs.has(c)) {
          const paths = new Map<string, string>();
          for (const v of values) {
            try {
              jsonPaths(JSON.parse(v), [], paths);
            } catch {
              // not json after all: the suggestion falls back to null
            }
          }
          signs.get(c)!.suggest = paths.size
            ? `{ jsonb = { ${[...paths].map(([p, s]) => `${tomlString(p)} = ${tomlString(s)}`).join(', ')} } }`
            : 'null';
        }
      }
    }
    for (const [c, s] of signs) {
      const rule = ruleAt.get(`${c.schema}\0${c.table}\0${c.column}`);
      personal.push({
        key: keyOf(c.schema, c.table, c.column),
        type: c.type,
        why: s.why,
        rule: rule?.text ?? null,
        suggest: workable(c, s.suggest),
      });
    }
  }
  const unruled = personal.filter((f) => f.rule === null);
  const width = Math.max(0, ...unruled.map((f) => tomlString(f.key).length));
  const block = unruled.length
    ? [
        '[mask]',
        ...unruled.map(
          (f) =>
            `${tomlString(f.key).padEnd(width)} = ${f.suggest.startsWith('{') ? f.suggest : tomlString(f.suggest)} ` +
            `  # ${f.why.join('; ')}`,
        ),
      ].join('\n')
    : '';
  const problems = ruleProblems(rules, columns, fks);
  return {
    database,
    tables: tables.size,
    columns: columns.length,
    personal,
    unruled,
    problems,
    rules: rules.length,
    block,
  };
}
