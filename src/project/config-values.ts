// The kinds of value a .pgx.toml writes by hand: durations ("15m"), sizes ("2GB") and disk reserves ("10%"), each as a
// plain parser (flags use them too) and as a zod type for the schema (config-schema.ts), within what PostgreSQL accepts.
import * as z from 'zod/mini';

const DURATION_RE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** "5s", "15m", "2h", "1d", "500ms", or a number of seconds → milliseconds. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error('must be a non-negative number of seconds');
    return Math.round(value * 1000);
  }
  const m = DURATION_RE.exec(value.trim());
  if (!m) throw new Error(`"${value}" is not a duration like 5s, 15m, 2h, 1d`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
}

/**
 * What PostgreSQL accepts, checked here so that a value can't validate and then fail every branch. The guards are
 * integer GUCs in milliseconds (INT_MAX at most). The agent timings end up in `now() + ms * interval '1 millisecond'`
 * (the registry's deadlines): a timestamp must stay below year 294276, so pgx caps them at 100 years, far inside it.
 */
export const PG_INT_MAX = 2_147_483_647;
const HUNDRED_YEARS_MS = 100 * 365 * 86_400_000;

/** A duration string or number of seconds → milliseconds, within [minMs, maxMs]. */
export function duration(range: { minMs: number; maxMs: number; max: string; why: string }) {
  return z.pipe(
    z.union([z.string(), z.number()]),
    z.transform((v: string | number, ctx) => {
      try {
        return inRange(parseDuration(v), v, range);
      } catch (e) {
        ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
        return z.NEVER;
      }
    }),
  );
}

function inRange(
  ms: number,
  v: string | number,
  range: { minMs: number; maxMs: number; max: string; why: string },
): number {
  const shown = typeof v === 'number' ? `${v}` : `"${v}"`;
  if (ms > range.maxMs) throw new Error(`${shown} is too long: at most ${range.max} (${range.why})`);
  if (ms < range.minMs) throw new Error(`${shown} is too short: at least ${range.minMs / 1000}s`);
  return ms;
}

export const AGENT_TIMING = { maxMs: HUNDRED_YEARS_MS, max: '36500d', why: 'a deadline PostgreSQL can store' } as const;
const GUARD_RANGE = {
  minMs: 0,
  maxMs: PG_INT_MAX,
  max: '2147483647ms (about 24.8 days)',
  why: 'PostgreSQL keeps these settings as an integer number of milliseconds',
} as const;

/** A guard is a duration, or false / "off" to leave that setting alone (null). */
export const guard = z.pipe(
  z.union([z.literal(false), z.string(), z.number()]),
  z.transform((v: false | string | number, ctx): number | null => {
    if (v === false || v === 'off') return null;
    try {
      return inRange(parseDuration(v), v, GUARD_RANGE);
    } catch (e) {
      ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
      return z.NEVER;
    }
  }),
);

const SIZE_RE = /^(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|GB|TB)?$/i;
const SIZE_UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 };

/** "512MB", "2GB", or a number of bytes → bytes. */
export function parseSize(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error('must be a non-negative number of bytes');
    return Math.round(value);
  }
  const m = SIZE_RE.exec(value.trim());
  if (!m) throw new Error(`"${value}" is not a size like 512MB or 2GB`);
  return Math.round(Number(m[1]) * SIZE_UNIT[(m[2] ?? 'b').toLowerCase()]!);
}

export const size = z.pipe(
  z.union([z.string(), z.number()]),
  z.transform((v: string | number, ctx) => {
    try {
      return parseSize(v);
    } catch (e) {
      ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
      return z.NEVER;
    }
  }),
);
export const count = z.int().check(z.gte(0), z.lte(256));

/** How much of a file system pgx leaves free: a size, a share of the file system's size, or (both) the smaller. */
export interface DiskReserve {
  bytes?: number;
  percent?: number;
}

/** Unset: 2 GB, or 10% of a file system smaller than 20 GB (a small data volume is not refused everything). */
export const DEFAULT_RESERVE: DiskReserve = { bytes: 2 * 1024 ** 3, percent: 10 };

const PERCENT_RE = /^(\d+(?:\.\d+)?)\s*%$/;

/** "2GB", a number of bytes, or "10%" (of the file system's size, at most 90%) → a reserve. */
export function parseReserve(value: string | number): DiskReserve {
  const m = typeof value === 'string' ? PERCENT_RE.exec(value.trim()) : null;
  if (!m) return { bytes: parseSize(value) };
  const percent = Number(m[1]);
  if (percent > 90) throw new Error(`"${value}" is more than 90% of the file system: nothing could ever be copied`);
  return { percent };
}

export const reserve = z.pipe(
  z.union([z.string(), z.number()]),
  z.transform((v: string | number, ctx) => {
    try {
      return parseReserve(v);
    } catch (e) {
      ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
      return z.NEVER;
    }
  }),
);
