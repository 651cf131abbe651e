// The scan: which columns of a database look personal (detect.ts, on each column's name and type and a sample of its
// values), which comments, materialized views and large objects hold personal data out of the rules' reach
// (scan-objects.ts), which of them have a rule, and which rules are wrong (no such column, a strategy that cannot
// apply, a jsonb path that matches nothing). `pgx source scan` prints it; import, sync and a masked template build
// refuse while it finds something personal with no rule, listing each with why and a [mask] block ready to paste
// (fail closed: decisions 460, 463, 468, 469).
import type { Db } from '../server/db.js';
import { columnsOf, foreignKeysOf, sampleValues, type ColumnInfo } from '../server/mask-catalog.js';
import { embeddedKind, jsonPaths, nameSign, suggestionFor, valueKind } from './detect.js';
import { keyOf, type MaskRule } from './rules.js';
import { objectFindings, blockOf, ruleProblems, type Finding, type RuleProblem } from './scan-objects.js';
import { classOf, shapeOf, tomlString, workable } from './suggest.js';

export type { Finding, RuleProblem };

/** Rows sampled per table. */
const SAMPLE = 200;

export interface ScanReport {
  database: string;
  tables: number;
  columns: number;
  /** Everything that looks personal (columns, comments, materialized views' columns, large objects), ruled or not. */
  personal: Finding[];
  /** What looks personal and has no rule: import, sync and a masked template build refuse while there is one. */
  unruled: Finding[];
  /** Rules that name nothing, or whose strategy cannot apply to theirs. */
  problems: RuleProblem[];
  /** Rules that apply, keep included. */
  rules: number;
  /** [mask] lines for what has no rule, ready to paste into .pgx.toml. */
  block: string;
}

/** One relation's columns that look personal, each with why and the strategy to suggest; and its jsonb rules' paths. */
async function scanRelation(
  db: Db,
  cols: ColumnInfo[],
  ruleAt: (c: ColumnInfo) => MaskRule | undefined,
  problems: RuleProblem[],
): Promise<Map<ColumnInfo, { why: string[]; suggest: string }>> {
  const { schema, table, rows, relkind, populated } = cols[0]!;
  const signs = new Map<ColumnInfo, { why: string[]; suggest: string }>();
  const mark = (c: ColumnInfo, why: string, suggest: string) => {
    const s = signs.get(c) ?? { why: [], suggest };
    s.why.push(why);
    signs.set(c, s);
  };
  for (const c of cols) {
    const n = nameSign(table, c.column, shapeOf(c));
    if (n) mark(c, n.why, n.suggest);
    if (c.base === 'inet' || c.base === 'cidr') mark(c, `its type is ${c.base} (IP addresses)`, 'ip');
  }
  // Values: text-like, json and text-array columns, from a sample of the relation.
  const sampled = cols.filter((c) => ['text', 'json', 'array'].includes(classOf(c)));
  if (!sampled.length || (relkind === 'm' && !populated)) return signs;
  const arrays = new Set(sampled.filter((c) => c.category === 'A').map((c) => c.column));
  const sample = await sampleValues(
    db,
    schema,
    table,
    sampled.map((c) => c.column),
    rows,
    SAMPLE,
    arrays,
  );
  for (const c of sampled) {
    const values = sample
      .map((r) => r[c.column])
      .filter((v): v is string => v !== null && v !== undefined)
      .slice(0, SAMPLE);
    const json = classOf(c) === 'json';
    const rule = ruleAt(c);
    if (json && rule?.strategy.kind === 'jsonb') problems.push(...unmatchedPaths(rule, values));
    if (!values.length) continue;
    const kinds = new Map<string, number>();
    for (const v of values) {
      const k = json ? embeddedKind(v) : arrays.has(c.column) ? arrayKind(v) : valueKind(v);
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
  return signs;
}

/** The kind of the first element of an array (sampled as its JSON text) that looks personal. */
function arrayKind(jsonText: string): string | undefined {
  try {
    const items = JSON.parse(jsonText) as unknown[];
    for (const x of items.flat(Infinity)) if (typeof x === 'string' && valueKind(x)) return valueKind(x);
  } catch {
    // not an array of text
  }
  return undefined;
}

/** Each path of a jsonb rule must hold a string or number in some sampled row: a path that matches nothing masks nothing. */
function unmatchedPaths(rule: MaskRule, docs: string[]): RuleProblem[] {
  if (rule.strategy.kind !== 'jsonb' || !docs.length) return [];
  const seen = new Set<string>();
  const walk = (v: unknown, at: string[]) => {
    if (v && typeof v === 'object')
      for (const [k, x] of Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v))
        walk(x, [...at, k]);
    else if (typeof v === 'string' || typeof v === 'number') seen.add(at.join('.'));
  };
  for (const d of docs) {
    try {
      walk(JSON.parse(d), []);
    } catch {
      // not json
    }
  }
  const held = [...seen].sort();
  return rule.strategy.paths
    .filter((p) => !seen.has(p.path.join('.')))
    .map((p) => ({
      key: rule.key,
      problem:
        `path "${p.path.join('.')}" matches no value in the ${docs.length} sampled row(s), so it masks nothing ` +
        `(paths that hold a value there: ${held.slice(0, 12).join(', ')}${held.length > 12 ? ', …' : ''})`,
    }));
}

/**
 * Scans the database `db` is connected to against the rules. Reads the catalog and ≤ 200 rows per table or
 * materialized view; writes nothing.
 */
export async function scanDatabase(
  db: Db,
  database: string,
  rules: readonly MaskRule[],
  progress: (msg: string) => void = () => {},
): Promise<ScanReport> {
  const columns = await columnsOf(db);
  const fks = await foreignKeysOf(db);
  const columnRules = new Map(
    rules.filter((r) => r.on === 'column').map((r) => [`${r.schema}\0${r.table}\0${r.column}`, r]),
  );
  const ruleAt = (c: ColumnInfo) => columnRules.get(`${c.schema}\0${c.table}\0${c.column}`);
  const relations = new Map<string, ColumnInfo[]>();
  for (const c of columns)
    relations.set(`${c.schema}\0${c.table}`, [...(relations.get(`${c.schema}\0${c.table}`) ?? []), c]);
  const problems: RuleProblem[] = [];
  const signs = new Map<ColumnInfo, { why: string[]; suggest: string }>();
  let done = 0;
  for (const cols of relations.values()) {
    progress(`scanning: ${++done}/${relations.size} table(s), now ${cols[0]!.schema}.${cols[0]!.table}`);
    for (const [c, s] of await scanRelation(db, cols, ruleAt, problems)) signs.set(c, s);
  }
  const personal: Finding[] = [];
  for (const [c, s] of signs) {
    if (c.generated || c.relkind === 'm') continue; // they follow their sources (scan-objects.ts)
    personal.push({
      key: keyOf(c.schema, c.table, c.column),
      type: c.type,
      why: s.why,
      rule: ruleAt(c)?.text ?? null,
      suggest: workable(c, s.suggest),
    });
  }
  const objects = await objectFindings(db, { columns, signs, rules, personal });
  personal.push(...objects.findings);
  problems.push(...objects.problems, ...ruleProblems(rules, columns, fks));
  const unruled = personal.filter((f) => f.rule === null);
  return {
    database,
    tables: relations.size,
    columns: columns.length,
    personal,
    unruled,
    problems,
    rules: rules.length,
    block: blockOf(unruled),
  };
}
