/**
 * `pgx agent verify claude` with the REAL pinned Claude Code binary (tests/e2e/.cc), as a user runs it (the built CLI,
 * bin/pgx.js). PGX_VERIFIED_CLAUDE_CODE=none takes 2.1.328 off the built-in list, so the hook's trust can only come
 * from the recorded verdict.
 *  - A verification records a verdict, and the hook then trusts the version: no ask where it asked before.
 *  - A rewrite known to weaken deny rules (the one pgx wrote before the verbatim copy, injected by the test-only
 *    PGX_VERIFY_FAULT into the probe) fails, names the cells, and the hook keeps asking.
 *  - A binary that is not Claude Code (prints a version, answers nothing) is never verified.
 *  - A verify inside a probe run refuses to recurse.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonOf, makeProject, runPgx, runPgxAsync } from '../helpers/pgx.js';
import { hook } from '../helpers/hooks.js';
import { newAgentId, preToolUseBash, session, sessionStart } from '../helpers/hook-payloads.js';
import { symlinkSync } from 'node:fs';
import { delimiter } from 'node:path';
import { claudeBin, CLAUDE_CODE_VERSION, warnIfSkipped } from './pgx-harness.js';
import { PINNED_CLAUDE_CODE } from './claude.js';
import { VERIFY_COMMANDS, VERIFY_RUNS } from '../../src/verify/cells.js';

warnIfSkipped();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const CELLS = VERIFY_RUNS.length * VERIFY_COMMANDS.length;
const verifyDirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith('pgx-verify-'));

function project() {
  const p = makeProject();
  dirs.push(p.dir);
  p.env = { ...p.env, PGX_VERIFIED_CLAUDE_CODE: 'none' };
  return p;
}

interface VerifyJson {
  claude_code: string;
  verified: boolean;
  built_in: boolean;
  cells: {
    rules: string;
    mode: string;
    command: string;
    unrouted: string;
    routed: string;
    ok: boolean;
    why?: string;
  }[];
  failed: string[];
  elapsed_ms: number;
  recorded: string | null;
}

async function askDecision(p: ReturnType<typeof project>): Promise<string | undefined> {
  const s = session(p.dir, p.dir);
  const r = await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: newAgentId() }), p, {
    env: { AI_AGENT: 'claude-code_2-1-328_harness', PGX_VERIFIED_CLAUDE_CODE: 'none' },
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.json.hookSpecificOutput.updatedInput.command).toMatch(/; exit # pgx-routed \S+\necho hi$/);
  return r.json.hookSpecificOutput.permissionDecision;
}

describe.skipIf(!claudeBin || CLAUDE_CODE_VERSION !== PINNED_CLAUDE_CODE)(
  `pgx agent verify claude: the real Claude Code ${PINNED_CLAUDE_CODE}`,
  () => {
    it('verifies every cell, records the verdict (0600), and the hook then trusts the version', async () => {
      const p = project();
      expect(await askDecision(p)).toBe('ask'); // not built in (PGX_VERIFIED_CLAUDE_CODE=none), no verdict yet
      const before = verifyDirs().length;
      const r = await runPgxAsync(['agent', 'verify', 'claude', '--claude', claudeBin!, '--json'], {
        cwd: p.dir,
        env: p.env,
      });
      const j = jsonOf<VerifyJson>(r);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(j).toMatchObject({ claude_code: PINNED_CLAUDE_CODE, verified: true, built_in: false, failed: [] });
      expect(j.cells).toHaveLength(CELLS);
      expect(j.cells.filter((c) => !c.ok)).toEqual([]);
      // The cells discriminate: the deny rules denied (routed too), the allows ran, pgx refused its own launcher.
      const cell = (mode: string, command: string) =>
        j.cells.find((c) => c.rules === 'mixed' && c.mode === mode && c.command.startsWith(command))!;
      expect(cell('bypass', "r''m")).toMatchObject({ unrouted: 'deny', routed: 'deny' });
      expect(cell('default', 'npm test;')).toMatchObject({ unrouted: 'deny', routed: 'deny' });
      expect(cell('default', 'npm test (exact')).toMatchObject({ unrouted: 'allow', routed: 'allow' });
      expect(cell('default', 'npm test --silent')).toMatchObject({ unrouted: 'ask', routed: 'ask' });
      expect(cell('bypass', 'launcher typed (subagent)')).toMatchObject({ unrouted: 'allow', routed: 'deny' });
      // Progress on stderr, one line per pair.
      expect(r.stderr).toContain(`verifying Claude Code ${PINNED_CLAUDE_CODE}`);
      expect(r.stderr.match(/cells hold/g)).toHaveLength(VERIFY_RUNS.length);
      console.log(`[pgx-e2e] verify ${PINNED_CLAUDE_CODE}: ${j.cells.length} cells in ${j.elapsed_ms} ms`);

      const file = join(p.home, 'agent', 'claude-code-verdicts.json');
      expect(j.recorded).toBe(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8')).versions[PINNED_CLAUDE_CODE]).toMatchObject({
        verified: true,
        failed: [],
        cells: CELLS,
      });
      expect(verifyDirs().length).toBeLessThanOrEqual(before); // its temp projects are gone

      expect(await askDecision(p)).toBeUndefined(); // trusted like the built-in list: the rewrite alone
    }, 240_000);

    it('a rewrite that weakens deny rules fails: the output names the cells, and the hook keeps asking', async () => {
      const p = project();
      const r = await runPgxAsync(['agent', 'verify', 'claude', '--claude', claudeBin!, '--json'], {
        cwd: p.dir,
        env: { ...p.env, PGX_VERIFY_FAULT: 'no-verbatim-copy' },
      });
      const j = jsonOf<VerifyJson>(r);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(8);
      expect(j.verified).toBe(false);
      // Without the verbatim copy, the wrapper rule approves what the deny rules would have stopped, and it ran.
      expect(j.failed).toContain('mixed/default/rm (deny): routed allow is weaker than unrouted deny');
      expect(j.failed).toContain("mixed/bypass/r''m (deny, quoted): routed allow is weaker than unrouted deny");
      expect(
        j.cells.find((c) => c.mode === 'default' && c.rules === 'mixed' && c.command === 'rm (deny)'),
      ).toMatchObject({ routed_effect: true, unrouted_effect: false });
      expect(
        JSON.parse(readFileSync(join(p.home, 'agent', 'claude-code-verdicts.json'), 'utf8')).versions[
          PINNED_CLAUDE_CODE
        ],
      ).toMatchObject({ verified: false });
      expect(await askDecision(p)).toBe('ask');
      // The progress lines name the failing cells as each pair finishes.
      expect(r.stderr).toMatch(/mixed\/default: \d+\/\d+ cells hold; FAILED: .*rm \(deny\)/);
    }, 240_000);
  },
);

describe.skipIf(!claudeBin || CLAUDE_CODE_VERSION !== PINNED_CLAUDE_CODE)(
  'SessionStart on an unverified version: verification in the background, once',
  () => {
    it('starts it detached, says so in the session and the doctor, starts no second one, and the verdict then holds', async () => {
      const p = project();
      const userBin = mkdtempSync(join(tmpdir(), 'pgx-userbin-'));
      dirs.push(userBin);
      symlinkSync(claudeBin!, join(userBin, 'claude'));
      p.env = { ...p.env, PATH: [userBin, p.env.PATH].join(delimiter) };
      expect(runPgx(['agent', 'install', 'claude', '--no-verify'], { cwd: p.dir, env: p.env }).status).toBe(0);
      writeFileSync(
        join(p.env.HOME!, '.claude.json'),
        JSON.stringify({ projects: { [p.dir]: { hasTrustDialogAccepted: true } } }),
      );
      const env = { AI_AGENT: 'claude-code_2-1-328_harness', PGX_VERIFIED_CLAUDE_CODE: 'none' };
      const s = session(p.dir, p.dir);
      const marker = join(p.home, 'agent', `claude-code-verify-${PINNED_CLAUDE_CODE}.running`);

      const first = await hook('session-start', sessionStart(s), p, { env });
      expect(first.json.systemMessage).toContain(`pgx is verifying Claude Code ${PINNED_CLAUDE_CODE} now`);
      expect(first.json.hookSpecificOutput.additionalContext).toContain(
        `pgx is verifying Claude Code ${PINNED_CLAUDE_CODE} on this machine`,
      );
      const owner = readFileSync(marker, 'utf8').split(' ')[0];
      // A second session meanwhile: told the same, and no second verification (the marker keeps its owner).
      const second = await hook('session-start', sessionStart(session(p.dir, p.dir)), p, { env });
      expect(second.json.systemMessage).toContain('pgx is verifying');
      expect(readFileSync(marker, 'utf8').split(' ')[0]).toBe(owner);
      expect(await askDecision(p)).toBe('ask'); // until a verdict exists, as before
      const doctor = jsonOf<{ checks: { name: string; status: string; detail: string }[] }>(
        runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: { ...p.env, ...env } }),
      );
      expect(doctor.checks.find((c) => c.name === 'permissions')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('pgx is verifying it on this machine now'),
      });

      const deadline = Date.now() + 180_000;
      while (existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(marker), readFileSync(join(p.home, 'agent', 'claude-code-verify.log'), 'utf8')).toBe(false);
      const log = readFileSync(join(p.home, 'agent', 'claude-code-verify.log'), 'utf8');
      expect(log).toContain(`verifying Claude Code ${PINNED_CLAUDE_CODE}`);
      expect(
        JSON.parse(readFileSync(join(p.home, 'agent', 'claude-code-verdicts.json'), 'utf8')).versions[
          PINNED_CLAUDE_CODE
        ],
        log,
      ).toMatchObject({ verified: true });
      expect(await askDecision(p)).toBeUndefined();
      const after = await hook('session-start', sessionStart(session(p.dir, p.dir)), p, { env });
      expect(after.json?.systemMessage).toBeUndefined();
      expect(existsSync(marker)).toBe(false); // verified: nothing started
    }, 240_000);
  },
);

describe('pgx agent verify claude: what is not Claude Code is never verified', () => {
  it('a binary that prints a version and answers nothing: every cell missing, exit 8, recorded as failed', () => {
    const p = project();
    const bin = join(mkdtempSync(join(tmpdir(), 'pgx-fakeclaude-')), 'claude');
    dirs.push(join(bin, '..'));
    writeFileSync(bin, '#!/bin/sh\n[ "$1" = --version ] && echo "9.9.9 (Claude Code)"\nexit 0\n');
    chmodSync(bin, 0o755);
    const r = runPgx(['agent', 'verify', 'claude', '--json'], {
      cwd: p.dir,
      env: { ...p.env, PATH: `${join(bin, '..')}:${p.env.PATH}` },
      timeout: 60_000,
    });
    const j = jsonOf<VerifyJson>(r);
    expect(r.status, r.stdout + r.stderr).toBe(8);
    expect(j).toMatchObject({ claude_code: '9.9.9', verified: false });
    expect(j.failed).toHaveLength(CELLS);
    expect(j.cells.every((c) => c.unrouted === 'missing' && c.routed === 'missing')).toBe(true);
    // The human output says which cells failed, one line each.
    const text = runPgx(['agent', 'verify', 'claude'], {
      cwd: p.dir,
      env: { ...p.env, PATH: `${join(bin, '..')}:${p.env.PATH}` },
      timeout: 60_000,
    });
    expect(text.status).toBe(8);
    expect(text.stdout).toContain(`Claude Code 9.9.9: NOT verified: ${CELLS} of ${CELLS} cells failed`);
    expect(text.stdout).toContain('  mixed/default/rm (deny): no decision seen unrouted');
    expect(text.stdout).toContain('routed subagent commands keep asking for approval on this version');
  });

  it('no claude: exit 5 with the flag to pass; inside a probe run: refused (exit 6)', () => {
    const p = project();
    const none = runPgx(['agent', 'verify', 'claude', '--json'], {
      cwd: p.dir,
      env: { ...p.env, PATH: '/nonexistent' },
    });
    expect(none.status).toBe(5);
    expect(jsonOf(none).error.hint).toContain('--claude PATH');
    const nested = runPgx(['agent', 'verify', 'claude', '--json'], {
      cwd: p.dir,
      env: { ...p.env, PGX_VERIFY_PROBE: '/x/pgx' },
    });
    expect(nested.status).toBe(6);
    expect(existsSync(join(p.home, 'agent', 'claude-code-verdicts.json'))).toBe(false);
  });
});
