import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/lib/fsutil.js';
import { sleep } from '../helpers/poll.js';

const lockPath = () => join(mkdtempSync(join(tmpdir(), 'pgx-lock-')), 'up.lock');
/** A pid that certainly belonged to a process that has exited. */
const deadPid = () => spawnSync('true').pid!;
const ageDir = (dir: string, seconds: number) => {
  const t = new Date(Date.now() - seconds * 1000);
  utimesSync(dir, t, t);
};

describe('withFileLock', () => {
  it('is not taken from a live holder however long it holds it', async () => {
    const lock = lockPath();
    const events: string[] = [];
    let entered!: () => void;
    const holding = new Promise<void>((r) => (entered = r));
    const a = withFileLock(lock, async () => {
      events.push('a-in');
      entered();
      await sleep(1500);
      events.push('a-out');
    });
    await holding;
    ageDir(lock, 3600); // as if held for an hour (a slow initdb): age alone must not make it stale
    const b = withFileLock(lock, async () => void events.push('b-in'), 100, 10_000);
    await Promise.all([a, b]);
    expect(events).toEqual(['a-in', 'a-out', 'b-in']);
    expect(existsSync(lock)).toBe(false);
  });

  it('is taken over at once when its owner process is dead', async () => {
    const lock = lockPath();
    mkdirSync(lock);
    writeFileSync(join(lock, 'owner'), JSON.stringify({ pid: deadPid(), nonce: 'gone' }));
    const t0 = Date.now();
    await withFileLock(lock, async () => {}, 30_000, 3000);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('without an owner file: waited for while fresh, taken over once older than staleMs', async () => {
    const fresh = lockPath();
    mkdirSync(fresh);
    await expect(withFileLock(fresh, async () => {}, 30_000, 500)).rejects.toThrow(/timed out/);
    ageDir(fresh, 60);
    await withFileLock(fresh, async () => {}, 30_000, 3000);
  });

  it('on release, removes the lock only if it is still ours', async () => {
    const lock = lockPath();
    const other = JSON.stringify({ pid: process.ppid, nonce: 'someone-else' });
    await withFileLock(lock, async () => {
      // Someone took the lock over meanwhile (e.g. judged us dead): their lock must survive our release.
      rmSync(lock, { recursive: true });
      mkdirSync(lock);
      writeFileSync(join(lock, 'owner'), other);
    });
    expect(readFileSync(join(lock, 'owner'), 'utf8')).toBe(other);
  });

  it('serialises concurrent holders', async () => {
    const lock = lockPath();
    let inside = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withFileLock(lock, async () => {
          max = Math.max(max, ++inside);
          await sleep(20);
          inside--;
        }),
      ),
    );
    expect(max).toBe(1);
  });
});
