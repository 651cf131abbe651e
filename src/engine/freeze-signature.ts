// The proof that a parent did not change since its frozen copy began (freeze.ts, "Which copy serves a fork"): its
// activity as a signature, two readings around a copy compared, and the second reading taken once the dump has left.
import * as catalog from '../server/catalog.js';
import type { DatabaseActivity } from '../server/catalog.js';
import type { EngineContext } from './context.js';

/**
 * The parent's state as a signature that proves "nothing committed since" when it is equal later; null when it
 * can't prove it (a backend running a statement, another role's backend unreadable, a prepared transaction, counters
 * off, PostgreSQL < 14).
 */
export function activitySignature(a: DatabaseActivity | null): string | null {
  if (!a || !a.tracked || a.busy > 0 || a.prepared > 0 || a.sessions === null || a.resets === null) return null;
  return `${a.oid}|${a.backends}|${a.sessions}|${a.resets}`;
}

/** Two readings around a copy: the same backends, in the same states, no session but the copy's own `own` since. */
export function unchangedAcross(before: DatabaseActivity | null, after: DatabaseActivity | null, own: number): boolean {
  const b = activitySignature(before);
  const a = activitySignature(after);
  if (
    b === null ||
    a === null ||
    before!.oid !== after!.oid ||
    before!.backends !== after!.backends ||
    before!.resets !== after!.resets
  )
    return false;
  return BigInt(after!.sessions!) === BigInt(before!.sessions!) + BigInt(own);
}

/**
 * The parent's activity after the copy, read again (for up to 1 s) while the dump's own backend is still leaving:
 * its counters are flushed when it exits, so the proof would fail for nothing but timing.
 */
export async function settledActivity(
  e: EngineContext,
  parent: string,
  before: DatabaseActivity,
  own: number,
): Promise<DatabaseActivity | null> {
  const until = Date.now() + 1000;
  for (;;) {
    const after = await catalog.databaseActivity(e.registry, parent);
    if (
      own === 0 ||
      unchangedAcross(before, after, own) ||
      Date.now() >= until ||
      (after && after.backends !== before.backends && !stillLeaving(before, after))
    )
      return after;
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Only backends added since `before` (the dump's, on its way out), none of before's gone or changed. */
function stillLeaving(before: DatabaseActivity, after: DatabaseActivity): boolean {
  const b = new Set(before.backends.split(',').filter(Boolean));
  const a = after.backends.split(',').filter(Boolean);
  return [...b].every((x) => a.includes(x)) && a.length > b.size;
}
