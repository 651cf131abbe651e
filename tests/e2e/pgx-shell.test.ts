/**
 * pgx end to end with the real Claude Code CLI: the inner shell of a routed command is the shell Claude Code's own Bash
 * tool uses (src/lib/shell.ts claudeCodeShell). With SHELL=/bin/sh (dash on Debian), Claude Code 2.1.328 still runs its
 * Bash tool in bash (zsh when installed): bash syntax works in the parent's unrouted commands, and must work in a
 * subagent's routed ones too. Before, pgx took $SHELL and ran the routed command under dash ("[[: not found").
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

// bash/zsh only: an array and [[ ]]; also says which database it ran against
const BASHISM = `a=(x y); if [[ -n "\${PGDATABASE:-}" ]]; then d="$PGDATABASE"; else d=none; fi; echo "shell-ok \${a[@]} db=$d"`;

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: the inner shell`, () => {
  it('SHELL=/bin/sh: bash syntax works routed (subagent) exactly as unrouted (parent)', async () => {
    const source = await makeSource();
    const p = makeE2eProject({ source });
    const run = await runScenario(
      p,
      { parentCommands: [BASHISM], subagents: [{ marker: 'bashism', commands: [BASHISM] }] },
      { env: { SHELL: '/bin/sh' }, allowedTools: 'Bash,Agent' },
    );
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);
    const parent = run.fake.parentBashResults[0] ?? '';
    const routed = run.fake.toolResults.get('bashism')?.[0] ?? '';
    // Claude Code itself did not use dash for the parent's command …
    expect(parent, describeRun(run)).toMatch(/shell-ok x y db=/);
    // … and the routed command ran in the same kind of shell, on the subagent's branch
    expect(routed, describeRun(run)).toMatch(/shell-ok x y db=agent_e2e_/);
    recordFigures('inner-shell', {
      shell_env: '/bin/sh',
      parent: parent.trim().slice(0, 60),
      routed: routed.trim().slice(0, 60),
    });
    expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  });
});
