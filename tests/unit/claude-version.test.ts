// The verdict record of `pgx agent verify claude` and how isVerifiedClaudeCode uses it.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import {
  claimVerification,
  isVerifiedClaudeCode,
  probeShape,
  readVerdicts,
  recordVerdict,
  releaseVerification,
  verdictFor,
  verdictsPath,
  verificationRunning,
  verifyingMarker,
  type Verdict,
} from '../../src/hooks/claude/claude-version.js';
import { rewriteCommand } from '../../src/hooks/claude/rewrite.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
function home(): string {
  const h = mkdtempSync(join(tmpdir(), 'pgx-verdicts-'));
  homes.push(h);
  return h;
}
const verdict = (verified: boolean, over: Partial<Verdict> = {}): Verdict => ({
  verified,
  shape: probeShape(),
  time: new Date().toISOString(),
  binary: '/bin/claude',
  failed: verified ? [] : ['mixed/default/rm (deny): routed allow is weaker than unrouted deny'],
  cells: 52,
  elapsed_ms: 20_000,
  ...over,
});
const noOverride = {} as NodeJS.ProcessEnv;

describe('the verdict record', () => {
  it('is written 0600, atomically (no temp file left), and keeps the other versions', () => {
    const h = home();
    recordVerdict(h, '9.1.2', verdict(true));
    recordVerdict(h, '9.1.3', verdict(false));
    expect(statSync(verdictsPath(h)).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(h, 'agent'))).toEqual(['claude-code-verdicts.json']);
    expect(Object.keys(readVerdicts(h)).sort()).toEqual(['9.1.2', '9.1.3']);
    recordVerdict(h, '9.1.2', verdict(false));
    expect(readVerdicts(h)['9.1.2']!.verified).toBe(false);
    expect(readVerdicts(h)['9.1.3']!.failed).toHaveLength(1);
  });

  it('a malformed file or entry is ignored, never trusted', () => {
    const h = home();
    recordVerdict(h, '9.1.2', verdict(true));
    writeFileSync(verdictsPath(h), '{not json');
    expect(readVerdicts(h)).toEqual({});
    expect(isVerifiedClaudeCode('9.1.2', noOverride, h)).toBe(false);
    writeFileSync(
      verdictsPath(h),
      JSON.stringify({
        versions: {
          '9.1.2': { verified: 'yes', shape: probeShape(), time: 'x' },
          '../x': verdict(true),
          '9.1.4': verdict(true),
        },
      }),
    );
    expect(Object.keys(readVerdicts(h))).toEqual(['9.1.4']);
    expect(isVerifiedClaudeCode('9.1.2', noOverride, h)).toBe(false);
    expect(isVerifiedClaudeCode('9.1.4', noOverride, h)).toBe(true);
  });

  it('a verdict for another rewrite shape does not count: it proved a command pgx no longer writes', () => {
    const h = home();
    const old = rewriteCommand('CMD', {
      launcher: '/L',
      agentId: 'A',
      projectDir: '/P',
      shell: '/bin/bash',
      branch: 'B',
    }).replace('; exit', '');
    recordVerdict(h, '9.1.2', verdict(true, { shape: old }));
    expect(verdictFor(h, '9.1.2')).toBeUndefined();
    expect(isVerifiedClaudeCode('9.1.2', noOverride, h)).toBe(false);
  });
});

describe('isVerifiedClaudeCode', () => {
  it('the built-in list, then the record; a failed verdict stays unverified', () => {
    const h = home();
    expect(isVerifiedClaudeCode('2.1.328', noOverride, h)).toBe(true);
    expect(isVerifiedClaudeCode('9.9.9', noOverride, h)).toBe(false);
    expect(isVerifiedClaudeCode(undefined, noOverride, h)).toBe(false);
    recordVerdict(h, '9.9.9', verdict(true));
    recordVerdict(h, '9.9.8', verdict(false));
    expect(isVerifiedClaudeCode('9.9.9', noOverride, h)).toBe(true);
    expect(isVerifiedClaudeCode('9.9.8', noOverride, h)).toBe(false);
  });

  it('PGX_VERIFIED_CLAUDE_CODE replaces the built-in list only: a recorded verdict still counts', () => {
    const h = home();
    recordVerdict(h, '9.9.9', verdict(true));
    expect(isVerifiedClaudeCode('2.1.328', { PGX_VERIFIED_CLAUDE_CODE: 'none' }, h)).toBe(false);
    expect(isVerifiedClaudeCode('9.9.9', { PGX_VERIFIED_CLAUDE_CODE: 'none' }, h)).toBe(true);
    expect(isVerifiedClaudeCode('9.9.7', { PGX_VERIFIED_CLAUDE_CODE: '9.9.7, 2.1.328' }, h)).toBe(true);
  });

  it('reads PGX_HOME from the env it is given when no home is passed', () => {
    const h = home();
    recordVerdict(h, '9.9.9', verdict(true));
    expect(isVerifiedClaudeCode('9.9.9', { PGX_HOME: h })).toBe(true);
    expect(isVerifiedClaudeCode('9.9.9', { PGX_HOME: join(h, 'elsewhere') })).toBe(false);
  });
});

describe('the running marker (single flight)', () => {
  it('one claim per version; a dead owner is taken over; release frees it', async () => {
    const h = home();
    expect(claimVerification(h, '9.9.9')).toBe(true);
    expect(verificationRunning(h, '9.9.9')).toBe(true);
    expect(claimVerification(h, '9.9.9')).toBe(false);
    expect(claimVerification(h, '9.9.8')).toBe(true);
    releaseVerification(h, '9.9.9');
    expect(verificationRunning(h, '9.9.9')).toBe(false);
    // A marker whose process is gone.
    const child = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => child.once('exit', r));
    writeFileSync(verifyingMarker(h, '9.9.7'), `${child.pid} ${Date.now()}`);
    chmodSync(verifyingMarker(h, '9.9.7'), 0o600);
    expect(verificationRunning(h, '9.9.7')).toBe(false);
    expect(claimVerification(h, '9.9.7')).toBe(true);
    expect(readFileSync(verifyingMarker(h, '9.9.7'), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    // Too old to be a live verification (they take under 2 minutes), even with a live pid.
    writeFileSync(verifyingMarker(h, '9.9.6'), `${process.pid} ${Date.now() - 10 * 60_000}`);
    expect(verificationRunning(h, '9.9.6')).toBe(false);
  });
});
