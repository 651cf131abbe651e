/**
 * Issue 18's first "done when": with the newest Claude Code (NEWEST in scripts/install-claude-code.sh) installed as a
 * user has it, `claude` on PATH, and nothing but `pgx agent install claude`, a real session's subagents run their
 * routed commands with no prompt, each on its own branch, and the verdict is recorded under PGX_HOME.
 * PGX_VERIFIED_CLAUDE_CODE=<pinned> keeps the newest version off the built-in list, so the trust can only come from the
 * verification install ran. A control run without the verdict shows the same session asking.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { claudeMissing, findClaudeBinary, NEWEST_CLAUDE_CODE, PINNED_CLAUDE_CODE } from './claude.js';
import {
  branches,
  cleanupRoots,
  describeRun,
  hookLog,
  makeE2eProject,
  makeSource,
  PSQL_ALLOWED,
  recordFigures,
  runScenario,
} from './pgx-harness.js';

const newest = findClaudeBinary(NEWEST_CLAUDE_CODE);
if (!newest) console.warn(`SKIPPED: ${claudeMissing(NEWEST_CLAUDE_CODE)}`);
const dirs: string[] = [];
afterAll(() => {
  cleanupRoots();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const LIST = `select 'db=' || current_database();`;
const command = `psql -X -At -v ON_ERROR_STOP=1 -c "${LIST}"`;
const markers = ['u1', 'u2', 'u3'];
const script = { subagents: markers.map((marker) => ({ marker, commands: [command] })) };

describe.skipIf(!newest)(
  `a user's machine with Claude Code ${NEWEST_CLAUDE_CODE} on PATH: install verifies it, sessions run without prompts`,
  () => {
    it('install records a verified verdict; every subagent command then runs routed to its own branch, no ask', async () => {
      const userBin = mkdtempSync(join(tmpdir(), 'pgx-userbin-'));
      dirs.push(userBin);
      symlinkSync(newest!, join(userBin, 'claude')); // as the native installer's ~/.local/bin/claude links its version
      const env = {
        PATH: [userBin, dirname(process.execPath), process.env.PATH].join(delimiter),
        PGX_VERIFIED_CLAUDE_CODE: PINNED_CLAUDE_CODE,
      };
      const source = await makeSource();
      const t0 = Date.now();
      const p = makeE2eProject({ source, env });
      const installMs = Date.now() - t0;

      expect(p.install.verification, p.installStderr).toMatchObject({
        status: 'verified',
        claude_code: NEWEST_CLAUDE_CODE,
        failed: [],
      });
      expect(p.installStderr).toContain(`Claude Code ${NEWEST_CLAUDE_CODE} is not verified yet`);
      const file = join(p.pgxHome, 'agent', 'claude-code-verdicts.json');
      expect(JSON.parse(readFileSync(file, 'utf8')).versions[NEWEST_CLAUDE_CODE]).toMatchObject({ verified: true });

      const run = await runScenario(p, script, { bin: newest, allowedTools: PSQL_ALLOWED });
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(run.fake.errors).toEqual([]);
      const subs = branches(p).filter((b) => b.kind === 'subagent' && b.session_id === run.sessionId);
      expect(subs).toHaveLength(markers.length);
      const byAgent = new Map(subs.map((b) => [b.agent_id, b.name]));
      for (const m of markers) {
        const own = byAgent.get(run.fake.agentIds.get(m) ?? '?');
        expect(own, m).toBeTruthy();
        expect(run.fake.toolResults.get(m)?.[0], describeRun(run)).toContain(`db=${own}`); // ran, on its own branch
      }
      const lines = hookLog(p).filter((l) => l.session_id === run.sessionId);
      const pre = lines.filter((l) => l.event === 'pre-tool-use' && l.agent_id !== null);
      expect(pre).toHaveLength(markers.length);
      expect(
        pre.every(
          (l) =>
            l.claude_code === NEWEST_CLAUDE_CODE &&
            /^rewritten:/.test(l.outcome) &&
            !l.outcome.includes('ask-unverified'),
        ),
        JSON.stringify(pre),
      ).toBe(true);
      expect(lines.find((l) => l.event === 'session-start')?.outcome).not.toMatch(/verifying/);
      recordFigures('verify-on-install', {
        claude_code: NEWEST_CLAUDE_CODE,
        install_with_verify_ms: installMs,
        verify_ms: (p.install.verification as { elapsed_ms: number }).elapsed_ms,
        session_ms: run.out.durationMs,
      });

      // Control: the same session without the verdict (and no background verification) asks for every command.
      rmSync(file);
      const control = await runScenario(p, script, {
        bin: newest,
        allowedTools: PSQL_ALLOWED,
        env: { PGX_AUTO_VERIFY: '0' },
      });
      expect(control.out.code, describeRun(control)).toBe(0);
      // (In -p, the hook's ask shows as its reason: nobody is there to approve.)
      for (const m of markers)
        expect(control.fake.toolResults.get(m)?.[0], describeRun(control)).toContain(
          `this is ${NEWEST_CLAUDE_CODE}. Each routed subagent command asks for approval`,
        );
    }, 400_000);
  },
);
