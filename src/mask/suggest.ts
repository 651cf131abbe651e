// What the scan suggests for a column: the class of its type (for the name rules), and the first strategy that
// applies to it as it is (its type, NOT NULL, unique index, length), so that the printed [mask] block imports as
// pasted (decisions 463, 467: a suggestion that cannot be imported is a defect).
import type { ColumnInfo } from '../server/mask-catalog.js';
import type { ColumnShape, TypeClass } from './detect.js';
import type { MaskRule } from './rules.js';
import { checkContext, maskExpression, StrategyMismatch } from './strategies.js';

export const tomlString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The class of a column's type, for the name rules (detect.ts). */
export function classOf(c: ColumnInfo): TypeClass {
  if (c.base === 'json' || c.base === 'jsonb') return 'json';
  if (c.category === 'A') return c.elemCategory === 'S' ? 'array' : 'other';
  if (c.category === 'S') return 'text';
  // An oid column points at a large object: its content has the "large objects" rule, not the column's.
  if (c.category === 'N') return c.base === 'oid' ? 'other' : 'number';
  if (c.category === 'D') return 'date';
  if (c.category === 'I') return 'net';
  if (c.category === 'G' || c.base === 'geometry' || c.base === 'geography') return 'geo';
  if (c.base === 'bytea') return 'blob';
  if (c.base === 'uuid') return 'uuid';
  return 'other';
}

export const shapeOf = (c: ColumnInfo): ColumnShape => ({ cls: classOf(c), key: c.key });

/** The first of the candidates that applies to the column (the suggestion must be a rule that works as pasted). */
export function workable(c: ColumnInfo, first: string): string {
  // fixed:redacted only where 'redacted' is a value of the column's type.
  const tries = [first, 'hash', 'null', ...(c.category === 'S' || c.base === 'bytea' ? ['fixed:redacted'] : [])];
  for (const t of tries) {
    if (t.startsWith('{')) return t;
    try {
      maskExpression(parseLoose(t), c, checkContext());
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
