import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendHookLog, hookLogPath } from '../../src/hooks/claude/log.js';

const line = (i: number) => ({
  time: new Date(0).toISOString(),
  event: 'pre-tool-use',
  session_id: 's',
  agent_id: `a${i}`,
  branch: null,
  outcome: 'ok',
  elapsed_ms: i,
});

describe('hook log', () => {
  it('is 0600, one JSON line per call, and rotates once past its size limit keeping one old file', () => {
    const home = mkdtempSync(join(tmpdir(), 'pgx-log-'));
    const path = hookLogPath(home);
    for (let i = 0; i < 10; i++) appendHookLog(home, line(i), 500);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(existsSync(`${path}.1`)).toBe(true);
    const all = [...readFileSync(`${path}.1`, 'utf8').split('\n'), ...readFileSync(path, 'utf8').split('\n')]
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(all.map((l) => l.agent_id)).toEqual(
      ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9'].slice(-all.length),
    );
    expect(statSync(path).size).toBeLessThan(500 + 200);
  });
});
