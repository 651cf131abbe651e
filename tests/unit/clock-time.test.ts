// clockTime: every time a message shows (a deadline, a failed fill) carries its date and how far off it is.
import { describe, expect, it } from 'vitest';
import { clockTime } from '../../src/lib/output.js';

describe('clockTime', () => {
  const local = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
    new Date(y, mo - 1, d, h, mi, s);

  it('a deadline more than a day away carries its date', () => {
    const now = local(2026, 12, 4, 17, 7, 4).getTime();
    expect(clockTime(local(2026, 12, 5, 18, 7, 4), now)).toBe('2026-12-05 18:07:04 (in 1d 1h)');
  });

  it('so does one minutes away (the same day), and one in the past; padded fields', () => {
    const now = local(2026, 1, 2, 3, 4, 5).getTime();
    expect(clockTime(local(2026, 1, 2, 3, 14, 5), now)).toBe('2026-01-02 03:14:05 (in 10m)');
    expect(clockTime(local(2026, 1, 1, 23, 59, 59).toISOString(), now)).toBe('2026-01-01 23:59:59 (3h 4m ago)');
  });
});
