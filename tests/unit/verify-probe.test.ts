// The probe of `pgx agent verify claude` (src/verify/): its hook answers exactly as pgx's hook rewrites, and a cell
// is judged by the rules of the permissions matrix.
import { describe, expect, it } from 'vitest';
import { probePreToolUse, PROBE_SHELL } from '../../src/verify/probe.js';
import { rewriteCommand } from '../../src/hooks/claude/rewrite.js';
import { judgeCell, VERIFY_COMMANDS, classify } from '../../src/verify/cells.js';

const L = '/tmp/pgx-verify-x/mixed-default-routed/pgx';
const P = '/tmp/pgx-verify-x/mixed-default-routed/project';
const bash = (command: string, agent_id?: string) => ({
  session_id: 's1',
  tool_name: 'Bash',
  tool_input: { command, description: 'd' },
  ...(agent_id ? { agent_id } : {}),
});

describe('the probe hook', () => {
  it("a subagent's command gets pgx's own rewrite, the rest of tool_input kept", () => {
    const out = probePreToolUse(bash('npm test', 'a1'), L, P) as {
      hookSpecificOutput: { updatedInput: Record<string, unknown>; permissionDecision?: string };
    };
    expect(out.hookSpecificOutput.updatedInput).toEqual({
      command: rewriteCommand('npm test', {
        launcher: L,
        agentId: 'a1',
        projectDir: P,
        shell: PROBE_SHELL,
        branch: 'probe_a1',
      }),
      description: 'd',
    });
    expect(out.hookSpecificOutput.permissionDecision).toBeUndefined(); // the rules alone decide
    // Already rewritten (Claude Code may run the hook on its own output): left alone.
    expect(probePreToolUse(bash(out.hookSpecificOutput.updatedInput.command as string, 'a1'), L, P)).toBeUndefined();
  });

  it("pgx's refusals: a typed launcher (subagent and main session), a bare exit; invalid payloads fail closed", () => {
    const typed = `'${L}' agent exec --agent a0 --cwd ${P} -- /bin/bash -c 'rm -f x'`;
    for (const agent of ['a1', undefined])
      expect((probePreToolUse(bash(typed, agent), L, P) as any).hookSpecificOutput.permissionDecision).toBe('deny');
    expect((probePreToolUse(bash('npm test; exit', 'a1'), L, P) as any).hookSpecificOutput.permissionDecision).toBe(
      'deny',
    );
    expect(probePreToolUse(bash('rm -f x'), L, P)).toBeUndefined(); // the main session's commands are not rewritten
    expect(probePreToolUse({ ...bash('ls', 'a1'), tool_name: 'Read' }, L, P)).toBeUndefined();
    expect((probePreToolUse({ nope: 1 }, L, P) as any).hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('the test-only fault writes the rewrite without the verbatim copy', () => {
    const out = probePreToolUse(bash('rm -f x', 'a1'), L, P, 'no-verbatim-copy') as any;
    expect(out.hookSpecificOutput.updatedInput.command).toBe(
      `'${L}' agent exec --agent a1 --cwd ${P} -- /bin/bash -c 'rm -f x' # pgx-routed probe_a1`,
    );
  });
});

describe('judging a cell', () => {
  const rm = VERIFY_COMMANDS.find((c) => c.id === 'rm (deny)')!;
  const npmTest = VERIFY_COMMANDS.find((c) => c.id === 'npm test (exact allow)')!;
  const typed = VERIFY_COMMANDS.find((c) => c.id === 'launcher typed (subagent)')!;
  const o = (decision: 'allow' | 'ask' | 'deny' | 'missing', effect: boolean | null = null) => ({ decision, effect });

  it('holds when routed is the same or stricter; pgx may refuse what it refuses', () => {
    expect(judgeCell(rm, 'mixed', 'default', o('deny', false), o('deny', false)).ok).toBe(true);
    expect(judgeCell(npmTest, 'mixed', 'default', o('allow'), o('allow')).ok).toBe(true);
    expect(judgeCell(typed, 'mixed', 'bypass', o('allow', true), o('deny', false)).ok).toBe(true);
  });

  it('fails on a weaker decision, an effect routed only, a new prompt, an unexpected unrouted decision, a missing one', () => {
    expect(judgeCell(rm, 'mixed', 'default', o('deny', false), o('allow', true)).why).toBe(
      'routed allow is weaker than unrouted deny',
    );
    expect(judgeCell(rm, 'mixed', 'default', o('deny', false), o('deny', true)).why).toBe(
      'its effect happened routed but not unrouted',
    );
    expect(judgeCell(npmTest, 'mixed', 'default', o('allow'), o('ask')).why).toBe('it ran unrouted but asked routed');
    expect(judgeCell(rm, 'mixed', 'default', o('allow', true), o('allow', true)).why).toMatch(
      /^unrouted it was allow, where these rules give deny/,
    );
    expect(judgeCell(rm, 'mixed', 'default', o('missing'), o('deny')).why).toMatch(/^no decision seen unrouted/);
  });

  it("classifies Claude Code's -p texts", () => {
    expect(classify('Permission to use Bash with command rm -f x has been denied.')).toBe('deny');
    expect(classify('PreToolUse:Bash hook error: pgx: this command runs …')).toBe('deny');
    expect(classify('Permission to use Bash has been denied. IMPORTANT: …')).toBe('ask');
    expect(classify('This command requires approval')).toBe('ask');
    expect(
      classify('pgx: routing is verified to keep your permission rules on Claude Code 2.1.328; this is 9.9.9. Each …'),
    ).toBe('ask');
    expect(classify('TEST-RAN')).toBe('allow');
    expect(classify(undefined)).toBe('missing');
  });
});
