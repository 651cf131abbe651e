// The check after masking (decision 466): the masked copy, not the rules, is read again. Every text, json and
// text-array column of every table and materialized view that no rule keeps is run through the scan's value
// detectors over all its rows (the detectors as SQL: server/mask-proof-catalog.ts); every masked column is checked to
// hold only what its strategy writes; every comment is read again; emptied large objects must be empty. A relation over
// PROOF_BOUND bytes is read through a random TABLESAMPLE of about that many bytes. Anything personal-looking left where
// no rule changed it refuses the import (exit 6) with the rule to paste; a masked column holding what its strategy
// never writes fails it (exit 7). Either way the caller drops the copy: pgx made it.
import { PgxError } from '../lib/errors.js';
import type { Db } from '../server/db.js';
import { boundedFrom, commentsOf, nonEmptyLargeObjects, type ColumnInfo } from '../server/mask-catalog.js';
import {
  detectorOf,
  flaggedDocuments,
  installDetectors,
  proofCounts,
  type ProofCheck,
} from '../server/mask-proof-catalog.js';
import { jsonPaths, proseKind, suggestionFor } from './detect.js';
import { FIRST_NAMES, LAST_NAMES } from './names.js';
import { keyOf, matviewKey, type MaskRule, type Strategy } from './rules.js';
import { blockOf, type Finding } from './scan-objects.js';
import { classOf, tomlString, workable } from './suggest.js';
import { quoteIdent, quoteLiteral } from '../server/catalog.js';
import { drainSharedQueue } from '../lib/shared-queue.js';

/**
 * Each relation is read whole up to this size (heap and TOAST); a bigger one through a sample of about this size
 * (whole pages picked at random), so the time the check takes is bounded by the number of relations, not their size.
 */
export const PROOF_BOUND = 256 * 1048576;

export interface ProofResult {
  /** Tables and materialized views read, and the columns checked in them. */
  relations: number;
  columns: number;
  /** Rows read (all of them, but in the sampled relations). */
  rows: number;
  /** Relations larger than the bound, read through a sample of about bound_mb. */
  sampled: string[];
  bound_mb: number;
  comments: number;
  /** The time each relation took to read, in ms (what the bench prints). */
  relation_ms: Record<string, number>;
  elapsed_ms: number;
}

/** The SQL code of a kind (server/mask-proof-catalog.ts) → the words detect.ts uses for it. */
const KIND_WORDS: Record<string, string> = {
  email: 'email addresses outside the reserved example domains',
  jwt: 'JWTs',
  key: 'API keys (a well-known prefix)',
  ip: 'IP addresses',
  card: 'card numbers (they pass the Luhn check)',
  iban: 'IBANs',
  phone: 'phone numbers',
};

const anyOf = (xs: string[]) => `ARRAY[${xs.map(quoteLiteral).join(',')}]`;

/**
 * What every value a strategy writes looks like, as a condition on the column (NULL passes: NULL stays NULL), or
 * undefined where the copy cannot tell (integers, uuids, dates, a value cut short by the column's length).
 */
function shapeOf(s: Strategy, c: ColumnInfo): string | undefined {
  const col = quoteIdent(c.column);
  const v = `${col}::text`;
  const fits = (n: number) => c.maxLength === null || c.maxLength >= n;
  const first = `split_part(${v}, ' ', 1) = ANY (${anyOf(FIRST_NAMES)})`;
  const last = (at: number) => `split_part(${v}, ' ', ${at}) = ANY (${anyOf(LAST_NAMES)})`;
  const cond = (() => {
    switch (s.kind) {
      case 'null':
        return 'false';
      case 'email':
        return `${v} ~ '^u[0-9a-f]{6,16}@example\\.com$'`;
      case 'phone':
        return fits(26) || (!c.unique && fits(15)) ? `${v} ~ '^\\+1 555 [0-9]{3} [0-9]{4}( x[0-9]{9})?$'` : undefined;
      case 'hash':
        return c.category === 'S' ? `${v} ~ '^[0-9a-f]+$'` : undefined;
      case 'ip':
        return `${v} ~ '^(198\\.51\\.100\\.[0-9]{1,3}|2001:db8(:[0-9a-f]{1,4}){6})(/[0-9]+)?$'`;
      case 'fixed':
        return `${col} = ${quoteLiteral(s.value)}::${c.type}`;
      case 'partial':
        return `(${v} = '' OR ${v} ~ '^\\*')`;
      case 'first_name':
        return fits(24) ? first : undefined;
      case 'last_name':
        return fits(24) ? `split_part(${v}, ' ', 1) = ANY (${anyOf(LAST_NAMES)})` : undefined;
      case 'name':
        return fits(34) ? `${first} AND ${last(2)}` : undefined;
      case 'username':
        return `${v} ~ '^[a-z.]*\\.[0-9a-f]{6,10}$'`;
      default:
        return undefined;
    }
  })();
  if (cond === undefined) return undefined;
  return s.kind === 'null' ? `${col} IS NULL` : `(${col} IS NULL OR ${cond})`;
}

interface Planned {
  column: ColumnInfo;
  rule: MaskRule | undefined;
  check: ProofCheck;
}

/** The checks of one relation's columns. */
function plan(cols: ColumnInfo[], ruleOf: (c: ColumnInfo) => MaskRule | undefined): Planned[] {
  const out: Planned[] = [];
  for (const c of cols) {
    const rule = ruleOf(c);
    if (rule?.strategy.kind === 'keep') continue;
    const cls = classOf(c);
    const detect = cls === 'text' || cls === 'json' || cls === 'array' ? detectorOf(c.column, cls) : undefined;
    if (c.generated) {
      // It follows its sources: checked when one of them is masked (else it is what they are, kept or not personal).
      const sources = cols.filter((x) => c.generatedFrom.includes(x.column));
      if (detect && sources.some((x) => (ruleOf(x)?.strategy.kind ?? 'keep') !== 'keep'))
        out.push({ column: c, rule, check: { detector: detect } });
      continue;
    }
    if (!rule) {
      if (detect) out.push({ column: c, rule, check: { detector: detect } });
      continue;
    }
    // A masked column: json and arrays through the detectors (their rules name some paths or change elements),
    // text through the shape of what its strategy writes (a detector could mistake a hash's digits for a card).
    if (rule.strategy.kind === 'jsonb' || (cls === 'array' && !['hash', 'fixed'].includes(rule.strategy.kind))) {
      if (detect) out.push({ column: c, rule, check: { detector: detect } });
      continue;
    }
    const shape = shapeOf(rule.strategy, c);
    if (shape) out.push({ column: c, rule, check: { shape } });
  }
  return out;
}

/** A failure found in the copy, as a line of the message and, where a rule fixes it, that rule. */
interface Left {
  line: string;
  finding?: Finding;
  /** A masked value its strategy never writes: a fault of pgx's, not of the rules. */
  fault?: boolean;
}

export async function proveMasked(
  db: Db,
  o: {
    database: string;
    columns: ColumnInfo[];
    rules: readonly MaskRule[];
    file: string;
    progress: (m: string) => void;
    /** Bytes read whole from a relation (PROOF_BOUND; a test sets a small one to see the sample). */
    bound?: number;
    /** A second connection to the copy that reads relations too, once `after` has settled (decision 540). */
    also?: { db: Db; after: Promise<void> };
  },
): Promise<ProofResult> {
  const bound = o.bound ?? PROOF_BOUND;
  const t0 = performance.now();
  const columnRule = new Map(
    o.rules.filter((r) => r.on === 'column').map((r) => [`${r.schema}\0${r.table}\0${r.column}`, r]),
  );
  const ruleOf = (c: ColumnInfo) =>
    c.relkind === 'm' ? undefined : columnRule.get(`${c.schema}\0${c.table}\0${c.column}`);
  const relations = new Map<string, ColumnInfo[]>();
  for (const c of o.columns) {
    if (c.relkind === 'm' && !c.populated) continue;
    const k = `${c.schema}\0${c.table}`;
    relations.set(k, [...(relations.get(k) ?? []), c]);
  }
  const left: Left[] = [];
  const result: ProofResult = {
    relations: 0,
    columns: 0,
    rows: 0,
    sampled: [],
    bound_mb: +(bound / 1048576).toFixed(3),
    comments: 0,
    relation_ms: {},
    elapsed_ms: 0,
  };
  // The relations to read, the largest first from one queue: each connection takes the next when it is free.
  const jobs = [...relations.values()]
    .map((cols, at) => ({ cols, at, planned: plan(cols, ruleOf) }))
    .filter((j) => j.planned.length)
    .sort((a, b) => b.cols[0]!.bytes - a.cols[0]!.bytes);
  const found: Left[][] = [];
  const sampled: string[] = [];
  let done = 0;
  const readOne = async (db: Db, { cols, at, planned }: (typeof jobs)[number]) => {
    const out: Left[] = (found[at] = []);
    const { schema, table, bytes, relkind } = cols[0]!;
    o.progress(`checking the masked copy: ${++done}/${jobs.length} relation(s), now ${schema}.${table}`);
    const from = boundedFrom(schema, table, bytes, bound);
    if (bytes > bound) sampled[at] = `${schema}.${table}`;
    const r0 = performance.now();
    const counts = await proofCounts(
      db,
      from,
      planned.filter((p) => p.check.shape).map((p) => p.column.column),
      planned.map((p) => p.check),
    );
    result.relation_ms[`${schema}.${table}`] = Math.round(performance.now() - r0);
    result.relations++;
    result.columns += planned.length;
    result.rows += counts.rows;
    for (const [i, p] of planned.entries()) {
      const { flagged, kinds, misshapen } = counts.checks[i]!;
      const key = keyOf(schema, table, p.column.column);
      const of = `${flagged.toLocaleString('en')} of ${counts.rows.toLocaleString('en')} row(s)`;
      const what = kinds.map((k) => KIND_WORDS[k] ?? k).join(', ');
      if (misshapen)
        out.push({
          line: `${key}: ${misshapen} value(s) that "${p.rule!.text}" never writes (the masking did not change them)`,
          fault: true,
        });
      if (!flagged) continue;
      if (relkind === 'm') {
        out.push({
          line: `${key} (a materialized view): ${of} hold ${what} after it was refreshed from the masked tables`,
          finding: {
            key,
            type: p.column.type,
            why: [`${of} hold ${what}`],
            rule: null,
            suggest: 'empty',
            ruleKey: matviewKey(schema, table),
          },
        });
      } else if (classOf(p.column) === 'json') {
        const paths = new Map<string, string>();
        for (const d of await flaggedDocuments(db, from, p.column.column, 50)) {
          try {
            jsonPaths(JSON.parse(d), [], paths, false);
          } catch {
            // not json
          }
        }
        const ruled = p.rule?.strategy.kind === 'jsonb' ? p.rule.strategy.paths : [];
        const all = new Map([...ruled.map((x) => [x.path.join('.'), textOf(x.strategy)] as const), ...paths]);
        const at = [...paths.keys()].map((x) => `"${x}"`).join(', ') || 'an object key (no path rule reaches it)';
        out.push({
          line: `${key}: ${of} hold ${what}, at ${at}`,
          finding: {
            key,
            type: p.column.type,
            why: [`${of} hold ${what} at ${at}`],
            rule: null,
            suggest: all.size
              ? `{ jsonb = { ${[...all].map(([x, s]) => `${tomlString(x)} = ${tomlString(s)}`).join(', ')} } }`
              : 'null',
          },
        });
      } else if (p.column.generated) {
        out.push({ line: `${key} (generated from ${p.column.generatedFrom.join(', ')}): ${of} hold ${what}` });
      } else {
        out.push({
          line: `${key}: ${of} hold ${what}${p.rule ? ` after "${p.rule.text}"` : " (the scan's sample of 200 rows had none)"}`,
          finding: {
            key,
            type: p.column.type,
            why: [`${of} hold ${what}`],
            rule: null,
            suggest: workable(p.column, suggestionFor(KIND_WORDS[kinds[0]!] ?? '')),
          },
        });
      }
    }
  };
  // Both connections run to their end before anything is thrown (drainSharedQueue), so that neither is still reading
  // when the caller closes it and drops the copy.
  const also = o.also;
  await drainSharedQueue(
    [
      { worker: db, ready: () => installDetectors(db) },
      ...(also ? [{ worker: also.db, ready: () => also.after.then(() => installDetectors(also.db)) }] : []),
    ],
    jobs,
    readOne,
  );
  left.push(...found.flat());
  result.sampled.push(...sampled.filter(Boolean));
  // Comments, all of them again (few and short: read here).
  for (const c of await commentsOf(db)) {
    result.comments++;
    const kind = proseKind(c.description);
    const rule = o.rules.find((r) => r.on === 'comment' && r.object === c.object);
    if (kind && rule?.strategy.kind !== 'keep') {
      const key = `comment on ${c.object}`;
      left.push({
        line: `${key}: its text holds ${kind}`,
        finding: { key, type: 'comment', why: [`its text holds ${kind}`], rule: null, suggest: 'null' },
      });
    }
  }
  if (o.rules.some((r) => r.on === 'large_objects' && r.strategy.kind === 'empty')) {
    const n = await nonEmptyLargeObjects(db);
    if (n) left.push({ line: `large objects: ${n} still hold data after "empty"`, fault: true });
  }
  result.elapsed_ms = Math.round(performance.now() - t0);
  if (left.length) throw failureOf(o, left, result);
  return result;
}

const textOf = (s: Strategy): string =>
  s.kind === 'fixed' ? `fixed:${s.value}` : s.kind === 'partial' ? `partial:${s.keep}` : s.kind;

function failureOf(o: { database: string; file: string }, left: Left[], r: ProofResult): PgxError {
  const read =
    `every row of ${r.relations} table(s) and view(s)${r.sampled.length ? ` (a ${r.bound_mb} MB sample of ${r.sampled.join(', ')})` : ''}` +
    `, ${r.comments} comment(s)`;
  const list = left.map((l) => `  ${l.line}`).join('\n');
  if (left.some((l) => l.fault))
    return new PgxError(
      'IMPORT_FAILED',
      `The masked copy of "${o.database}" was checked (${read}) and still holds values the masking should have ` +
        `changed; the copy was dropped:\n${list}`,
      'This is a fault of pgx, not of your rules: report it with this message (it names no value). Nothing was kept.',
    );
  const findings = left.flatMap((l) => (l.finding ? [l.finding] : []));
  return new PgxError(
    'REFUSED',
    `The masked copy of "${o.database}" was checked again (${read}): it still holds personal-looking values that no ` +
      `rule in ${o.file} changes, so it was dropped (nothing was kept):\n${list}`,
    `Review each, then add or extend its rule in ${o.file}.` +
      (findings.length ? ` Suggested, ready to paste:\n\n${blockOf(findings)}\n\n` : ' ') +
      'Then run the same command again. docs/pgx/local-dev/masking.md says what each strategy does.',
  );
}
