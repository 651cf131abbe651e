// A PreToolUse hook process that dies fails closed, with the real Claude Code
// (docs/pgx/local-dev/decisions/191-pretooluse-fails-closed.md). pgx's own errors are answered in-process (a deny
// for a subagent), but a hook process that can't start, is killed (OOM) or times out says nothing at all; Claude
// Code's default then runs the subagent's command as typed, unrouted. pgx writes `"onFailure": "block"` on its
// PreToolUse entry, so that call is blocked and the cause is in the tool result. The control run, the same entry
// without the key, shows the command running: the test can fail.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  makeE2eProject,
  makeSource,
  runScenario,
  warnIfSkipped,
  type E2eProject,
} from './pgx-harness.js';
import { LAUNCHER, sql } from '../helpers/pgx.js';

warnIfSkipped();
afterAll(cleanupRoots);

/** pgx on PATH, except that its PreToolUse hook process is SIGKILLed as it starts (what an OOM kill looks like). */
function killPreToolUseHooks(p: E2eProject): void {
  const pgx = join(p.root, 'bin', 'pgx');
  rmSync(pgx);
  writeFileSync(pgx, `#!/bin/sh\n[ "$1 $2 $3" = "agent hook pre-tool-use" ] && kill -9 $$\nexec '${LAUNCHER}' "$@"\n`, {
    mode: 0o755,
  });
}

describe.skipIf(!claudeBin)(`a dying PreToolUse hook with real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  it('is blocked with onFailure "block" (as installed); without the key the subagent command runs unrouted', async () => {
    const source = await makeSource();
    try {
      for (const installed of [true, false]) {
        // A hook PROCESS that dies (a broker that dies after taking the payload: tests/blackbox/shell-hooks.test.ts).
        const p = makeE2eProject({ source });
        const settingsFile = join(p.cwd, '.claude', 'settings.json');
        const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
        const entry = settings.hooks.PreToolUse[0].hooks[0];
        expect(entry.onFailure).toBe('block'); // what `pgx agent install claude` writes
        if (!installed) {
          delete entry.onFailure; // an install by an older pgx
          writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
        }
        killPreToolUseHooks(p);
        const run = await runScenario(
          p,
          { subagents: [{ marker: 'victim', commands: ['touch subagent-ran'] }] },
          { allowedTools: 'Agent,Bash(touch:*)' },
        );
        expect(run.out.code, describeRun(run)).toBe(0);
        const result = run.fake.toolResults.get('victim')![0] ?? '';
        if (installed) {
          expect(result, describeRun(run)).toMatch(/blocking because onFailure is "block"/);
          expect(readdirSync(p.cwd)).not.toContain('subagent-ran');
        } else {
          expect(readdirSync(p.cwd), describeRun(run)).toContain('subagent-ran'); // the window the key closes
        }
      }
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${source.name}`);
    }
  }, 300_000);
});
