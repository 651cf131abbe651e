/**
 * pgx end to end with the real Claude Code CLI: a subagent's routed command runs through the shell launcher
 * (decision 230), with no node process between Claude Code's Bash tool and the command. The command reports the
 * process that started it (`/proc/$PPID/comm`): Claude Code's own shell (`bash`) when the launcher exec'd it, `node`
 * when node ran it. The first command of a session may still go through node: the broker the hooks started serves
 * the hooks' environment, and the Bash tool's answers only if it is the same (protocol.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  makeE2eProject,
  makeSource,
  pgx,
  recordFigures,
  runScenario,
  warnIfSkipped,
} from './pgx-harness.js';

warnIfSkipped();
afterAll(cleanupRoots);

const PROBE = 'echo "parent=$(cat /proc/$PPID/comm) db=${PGDATABASE:-none}"';

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: the shell launcher`, () => {
  it("a subagent's routed commands run on its branch with no node process in between", async () => {
    const source = await makeSource();
    const p = makeE2eProject({ source });
    const run = await runScenario(
      p,
      { subagents: [{ marker: 'probe', commands: [PROBE, PROBE, PROBE] }] },
      { allowedTools: 'Bash,Agent' },
    );
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);
    const results = run.fake.toolResults.get('probe') ?? [];
    expect(results, describeRun(run)).toHaveLength(3);
    for (const r of results) expect(r, describeRun(run)).toMatch(/db=agent_e2e_/);
    // Once the broker is up, the launcher replaces itself with the command.
    expect(results.at(-1), describeRun(run)).toMatch(/parent=bash /);
    recordFigures('shell-launcher', { parents: results.map((r) => /parent=(\S+)/.exec(r)?.[1] ?? '?') });
    expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  });
});
