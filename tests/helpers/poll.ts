// Waiting, defined once: poll a condition, or wait for the SERVER's clock (deadlines are judged by now() on the
// server, so a test of a deadline waits on the same clock rather than sleeping a guessed while).
import { sql } from './pgx.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until fn returns a truthy value or the time is up; returns the last value. */
export async function pollUntil<T>(fn: () => Promise<T>, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > deadline) return v;
    await sleep(everyMs);
  }
}

/** Resolves once the server's clock is past `t`. */
export async function untilServerTimePast(t: Date | string, timeoutMs = 30_000): Promise<void> {
  const iso = new Date(t).toISOString();
  const past = await pollUntil(
    async () => (await sql<{ past: boolean }>('SELECT now() > $1::timestamptz AS past', [iso]))[0]!.past,
    timeoutMs,
    50,
  );
  if (!past) throw new Error(`the server clock did not pass ${iso} within ${timeoutMs} ms`);
}
