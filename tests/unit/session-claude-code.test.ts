// The per-session Claude Code version record (src/hooks/claude/session-claude-code.ts): what SessionStart writes and
// the HTTP broker reads back by the payload's session_id. Only a valid id names a file, only a version is read back,
// the file is 0600, and the records are bounded (TTL, count).
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dropSessionRecord,
  pruneSessionRecords,
  recordedClaudeCode,
  recordSessionClaudeCode,
  RECORD_TTL_MS,
  sessionRecordPath,
} from '../../src/hooks/claude/session-claude-code.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
function home(): string {
  const h = mkdtempSync(join(tmpdir(), 'pgx-sessions-'));
  homes.push(h);
  return h;
}
const records = (h: string) => readdirSync(join(h, 'agent', 'sessions')).filter((n) => n.endsWith('.claude-code'));

describe('the session version record', () => {
  it('reads back what SessionStart recorded, 0600 in a 0700 directory, and goes at SessionEnd', () => {
    const h = home();
    recordSessionClaudeCode(h, 'sess-1', '2.1.328');
    expect(recordedClaudeCode(h, 'sess-1')).toBe('2.1.328');
    expect(recordedClaudeCode(h, 'sess-2')).toBeUndefined();
    const file = sessionRecordPath(h, 'sess-1')!;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(h, 'agent', 'sessions')).mode & 0o777).toBe(0o700);
    recordSessionClaudeCode(h, 'sess-1', '2.1.332'); // a resume on an updated Claude Code
    expect(recordedClaudeCode(h, 'sess-1')).toBe('2.1.332');
    dropSessionRecord(h, 'sess-1');
    expect(recordedClaudeCode(h, 'sess-1')).toBeUndefined();
  });

  it('an id pgx refuses names no file, and a version that is not one is neither written nor read', () => {
    const h = home();
    for (const bad of ['', 'a\u0000b', '\ud800', 'x'.repeat(257), 42, null, undefined, { toString: () => 's' }]) {
      expect(sessionRecordPath(h, bad)).toBeUndefined();
      recordSessionClaudeCode(h, bad, '2.1.328');
      expect(recordedClaudeCode(h, bad)).toBeUndefined();
    }
    recordSessionClaudeCode(h, 's', '2.1.328\n9.9.9');
    recordSessionClaudeCode(h, 's', '../2.1.328');
    expect(recordedClaudeCode(h, 's')).toBeUndefined();
    // Hand-edited records: not a version, too big, a symlink to somebody's file, a directory
    const file = sessionRecordPath(h, 's')!;
    mkdirSync(join(h, 'agent', 'sessions'), { recursive: true });
    for (const text of ['2.1.328; rm -rf /\n', 'latest\n', ' 2.1.328 '.repeat(10)]) {
      writeFileSync(file, text);
      expect(recordedClaudeCode(h, 's'), text).toBeUndefined();
    }
    rmSync(file);
    const elsewhere = join(h, 'v');
    writeFileSync(elsewhere, '2.1.328\n');
    symlinkSync(elsewhere, file);
    expect(recordedClaudeCode(h, 's')).toBeUndefined();
    rmSync(file);
    mkdirSync(file);
    expect(recordedClaudeCode(h, 's')).toBeUndefined();
  });

  it('is bounded: a record past its TTL is not read and is pruned; past the cap the oldest go', () => {
    const h = home();
    recordSessionClaudeCode(h, 'old', '2.1.328');
    const old = new Date(Date.now() - RECORD_TTL_MS - 60_000);
    utimesSync(sessionRecordPath(h, 'old')!, old, old);
    expect(recordedClaudeCode(h, 'old')).toBeUndefined();
    for (let i = 0; i < 6; i++) {
      recordSessionClaudeCode(h, `s${i}`, '2.1.328');
      const at = new Date(Date.now() - (10 - i) * 1000);
      utimesSync(sessionRecordPath(h, `s${i}`)!, at, at);
    }
    // The old one went with the first record after it; the marker files beside them are not records and stay.
    writeFileSync(join(h, 'agent', 'sessions', 'a'.repeat(24)), '');
    expect(records(h).length).toBe(6);
    expect(pruneSessionRecords(h, Date.now(), 4)).toBe(2);
    expect(['s0', 's1', 's2', 's3', 's4', 's5'].map((s) => recordedClaudeCode(h, s) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
      true,
      true,
    ]);
    expect(readdirSync(join(h, 'agent', 'sessions'))).toContain('a'.repeat(24));
  });
});
