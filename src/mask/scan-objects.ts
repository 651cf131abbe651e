// What the scan finds beyond a table's own columns (decisions 467, 469): generated columns (they follow the columns they
// are computed from), materialized views (refreshed from the masked tables, or a rule on the view), comments and large
// objects (a rule each, or refused); and the checks of the rules themselves (a key that names nothing, a strategy that
// cannot apply, the two ends of a foreign key masked differently). Also the [mask] block the scan prints.
import type { Db } from '../server/db.js';
import { matviewPlan } from './matviews.js';
import { commentsOf, largeObjectCount, relationsOf, type ColumnInfo, type ForeignKey } from '../server/mask-catalog.js';
import { proseKind } from './detect.js';
import { keyOf, matviewKey, type MaskRule } from './rules.js';
import { checkContext, maskExpression, StrategyMismatch } from './strategies.js';
import { tomlString, workable } from './suggest.js';

export interface Finding {
  /** What it is: a column's key, "comment on …", or "large objects". */
  key: string;
  type: string;
  /** Why it looks personal (its name, its values). */
  why: string[];
  /** The rule it has (its strategy as written; for what follows other rules, how), or null. */
  rule: string | null;
  /** The strategy to paste when it has none (one that applies to it as it is). */
  suggest: string;
  /** The key its rule is written under, when not `key` (a materialized view's column: the view's key). */
  ruleKey?: string;
}

export interface RuleProblem {
  key: string;
  problem: string;
}

type Signs = Map<ColumnInfo, { why: string[]; suggest: string }>;

const masks = (r: MaskRule | undefined) => !!r && r.strategy.kind !== 'keep';

/** Findings for generated columns, materialized views' columns, comments and large objects; and their rules' problems. */
export async function objectFindings(
  db: Db,
  o: { columns: ColumnInfo[]; signs: Signs; rules: readonly MaskRule[]; personal: Finding[] },
): Promise<{ findings: Finding[]; problems: RuleProblem[] }> {
  const findings: Finding[] = [];
  const problems: RuleProblem[] = [];
  const ruleOf = (c: ColumnInfo) =>
    o.rules.find((r) => r.on === 'column' && r.schema === c.schema && r.table === c.table && r.column === c.column);
  const listed = new Set(o.personal.map((f) => f.key));
  // Generated columns: masked when the columns they are computed from are; a source with no rule is asked for.
  for (const [c, s] of o.signs) {
    if (!c.generated || c.relkind === 'm') continue;
    const sources = o.columns.filter(
      (x) => x.schema === c.schema && x.table === c.table && c.generatedFrom.includes(x.column),
    );
    const masked = sources.filter((x) => masks(ruleOf(x)));
    findings.push({
      key: keyOf(c.schema, c.table, c.column),
      type: c.type,
      why: s.why,
      rule: `(generated from ${sources.map((x) => x.column).join(', ')}${masked.length ? ', masked' : ''})`,
      suggest: 'keep',
    });
    if (masked.length) continue;
    for (const x of sources) {
      const key = keyOf(x.schema, x.table, x.column);
      if (listed.has(key) || ruleOf(x)) continue;
      listed.add(key);
      findings.push({
        key,
        type: x.type,
        why: [`${c.column} is computed from it, and ${s.why.join('; ')}`],
        rule: null,
        suggest: workable(x, s.suggest),
      });
    }
  }
  // Materialized views: refreshed after masking when they read anything personal; otherwise a personal-looking
  // column of one needs a rule on the view.
  const personalTables = new Set<number>();
  const tableOids = new Map<string, number>();
  for (const r of (await relationsOf(db)).relations) tableOids.set(`${r.schema}\0${r.name}`, r.oid);
  for (const c of o.columns) {
    const key = keyOf(c.schema, c.table, c.column);
    if (c.relkind !== 'm' && (masks(ruleOf(c)) || o.personal.some((f) => f.key === key && f.rule === null)))
      personalTables.add(tableOids.get(`${c.schema}\0${c.table}`)!);
  }
  const refreshed = new Map((await matviewPlan(db, personalTables)).map((m) => [m.oid, m.readsPersonal]));
  const matviewRule = (schema: string, name: string) =>
    o.rules.find((r) => r.on === 'matview' && r.schema === schema && r.table === name);
  for (const [c, s] of o.signs) {
    if (c.relkind !== 'm') continue;
    const rule = matviewRule(c.schema, c.table);
    const byDefault = refreshed.get(tableOids.get(`${c.schema}\0${c.table}`)!);
    findings.push({
      key: keyOf(c.schema, c.table, c.column),
      type: `${c.type}, materialized view`,
      why: s.why,
      rule: rule?.text ?? (byDefault ? '(refreshed from the masked tables)' : null),
      suggest: 'empty',
      ruleKey: matviewKey(c.schema, c.table),
    });
  }
  for (const r of o.rules.filter((r) => r.on === 'matview'))
    if (!o.columns.some((c) => c.relkind === 'm' && c.schema === r.schema && c.table === r.table))
      problems.push({ key: r.key, problem: 'names no materialized view of this database' });
  // Comments: their text, by the detectors for prose.
  const comments = await commentsOf(db);
  for (const c of comments) {
    const kind = proseKind(c.description);
    if (!kind) continue;
    const rule = o.rules.find((r) => r.on === 'comment' && r.object === c.object);
    findings.push({
      key: `comment on ${c.object}`,
      type: 'comment',
      why: [`its text holds ${kind}`],
      rule: rule?.text ?? null,
      suggest: 'null',
    });
  }
  for (const r of o.rules.filter((r) => r.on === 'comment'))
    if (!comments.some((c) => c.object === r.object))
      problems.push({
        key: r.key,
        problem: 'names no comment of this database (`pgx source scan` names each one it flags)',
      });
  // Large objects: blobs pgx cannot see into, whatever references them.
  const blobs = await largeObjectCount(db);
  if (blobs) {
    const rule = o.rules.find((r) => r.on === 'large_objects');
    findings.push({
      key: 'large objects',
      type: 'large object',
      why: [`${blobs} large object(s): blobs whose content pgx cannot judge`],
      rule: rule?.text ?? null,
      suggest: 'empty',
    });
  }
  return { findings, problems };
}

/** Checks each column rule against the database's columns (and foreign keys: both ends of one must be masked alike). */
export function ruleProblems(rules: readonly MaskRule[], columns: ColumnInfo[], fks: ForeignKey[]): RuleProblem[] {
  const byKey = new Map(columns.map((c) => [`${c.schema}\0${c.table}\0${c.column}`, c]));
  const columnRules = rules.filter((r) => r.on === 'column');
  const ruleAt = new Map(columnRules.map((r) => [`${r.schema}\0${r.table}\0${r.column}`, r]));
  const problems: RuleProblem[] = [];
  for (const r of columnRules) {
    const c = byKey.get(`${r.schema}\0${r.table}\0${r.column}`);
    if (!c) {
      problems.push({
        key: r.key,
        problem: `names no column of a table in this database (a partition's or inheritance child's column is masked by its parent's rule)`,
      });
      continue;
    }
    try {
      maskExpression(r.strategy, c, checkContext());
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
      const here = `${fk.schema}\0${fk.table}\0${col}`;
      const there = `${fk.refSchema}\0${fk.refTable}\0${fk.refColumns[i]}`;
      const [a, b] = [ruleAt.get(here), ruleAt.get(there)];
      const key = keyOf(fk.schema, fk.table, col);
      const ref = keyOf(fk.refSchema, fk.refTable, fk.refColumns[i]!);
      if ((masks(a) || masks(b)) && a?.text !== b?.text) {
        problems.push({
          key,
          problem: `references ${ref} (foreign key ${fk.name}): give both the same strategy, so that masked keys still match`,
        });
      } else if (masks(a) && byKey.get(here)?.base !== byKey.get(there)?.base) {
        problems.push({
          key,
          problem:
            `references ${ref} (foreign key ${fk.name}), of another type (${byKey.get(here)?.type} and ` +
            `${byKey.get(there)?.type}): "${a!.text}" would not map them alike; keep both`,
        });
      }
    });
  }
  return problems;
}

/** [mask] lines for what has no rule, ready to paste (one line per rule key, the reasons after it). */
export function blockOf(unruled: Finding[]): string {
  if (!unruled.length) return '';
  const lines = new Map<string, { suggest: string; why: string[] }>();
  for (const f of unruled) {
    const key = f.ruleKey ?? f.key;
    const line = lines.get(key) ?? { suggest: f.suggest, why: [] };
    line.why.push(...(f.ruleKey ? f.why.map((w) => `${f.key.split('.').pop()}: ${w}`) : f.why));
    lines.set(key, line);
  }
  const width = Math.max(...[...lines.keys()].map((k) => tomlString(k).length));
  return [
    '[mask]',
    ...[...lines].map(
      ([key, l]) =>
        `${tomlString(key).padEnd(width)} = ${l.suggest.startsWith('{') ? l.suggest : tomlString(l.suggest)}   # ${l.why.join('; ')}`,
    ),
  ].join('\n');
}
