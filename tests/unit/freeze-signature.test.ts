// The frozen copies' freshness proof (engine/freeze-signature.ts, decision 400) as pure rules: when a parent's activity has a
// signature at all, and when two readings around a copy prove nothing ran on the parent in between.
import { describe, expect, it } from 'vitest';
import { activitySignature, unchangedAcross } from '../../src/engine/freeze-signature.js';
import type { DatabaseActivity } from '../../src/server/catalog.js';

const idle: DatabaseActivity = {
  oid: '16384',
  backends: '101/1700000000.1/1700000005.2/idle',
  busy: 0,
  prepared: 0,
  sessions: '7',
  resets: '@1700000000',
  tracked: true,
};

describe('activity signature', () => {
  it('is there only when every backend is idle and readable, nothing prepared, the counters tracked', () => {
    expect(activitySignature(idle)).toBe('16384|101/1700000000.1/1700000005.2/idle|7|@1700000000');
    expect(activitySignature({ ...idle, backends: '' })).not.toBeNull(); // nobody connected
    for (const doubt of [{ busy: 1 }, { prepared: 1 }, { sessions: null }, { resets: null }, { tracked: false }])
      expect(activitySignature({ ...idle, ...doubt })).toBeNull();
    expect(activitySignature(null)).toBeNull();
  });
  it('changes with a statement (state_change), a new session (count), a new backend, a reset, a replaced database', () => {
    const s = activitySignature(idle);
    for (const moved of [
      { backends: '101/1700000000.1/1700000009.0/idle' },
      { sessions: '8' },
      { backends: `${idle.backends},102/1700000010.0/1700000010.1/idle` },
      { resets: '@1700000100' },
      { oid: '16999' },
    ]) {
      expect(activitySignature({ ...idle, ...moved })).not.toBe(s);
    }
  });
});

describe('unchanged across a copy', () => {
  it("holds when only the copy's own dump sessions were added", () => {
    expect(unchangedAcross(idle, { ...idle, sessions: '8' }, 1)).toBe(true);
    expect(unchangedAcross(idle, { ...idle, sessions: '9' }, 2)).toBe(true);
    expect(unchangedAcross(idle, idle, 0)).toBe(true);
  });
  it('fails on another session, a statement, a busy reading, a reset, or a dump still connected', () => {
    expect(unchangedAcross(idle, { ...idle, sessions: '9' }, 1)).toBe(false);
    expect(unchangedAcross(idle, { ...idle, backends: '101/1700000000.1/1700000006.0/idle' }, 1)).toBe(false);
    expect(unchangedAcross({ ...idle, busy: 1 }, { ...idle, sessions: '8' }, 1)).toBe(false);
    expect(unchangedAcross(idle, { ...idle, sessions: '8', resets: '@1700000100' }, 1)).toBe(false);
    expect(
      unchangedAcross(
        idle,
        { ...idle, backends: `${idle.backends},103/1700000020.0/1700000020.0/idle`, sessions: '7' },
        1,
      ),
    ).toBe(false);
  });
});
