// The rewrite's shape and its guards, and that a routed command behaves byte for byte like the original under the
// shell Claude Code runs it in (a stand-in launcher that just runs what follows `--`).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  hasBareExit,
  invokesLauncher,
  isRouted,
  rewriteCommand,
  type RewriteParams,
} from '../../src/hooks/claude/rewrite.js';

const dir = mkdtempSync(join(tmpdir(), 'pgx-rewrite-'));
const launcher = join(dir, 'pgx launcher.js');
writeFileSync(launcher, '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n');
chmodSync(launcher, 0o755);
const P: RewriteParams = {
  launcher,
  agentId: 'a5550b0ae3d1c2c1c',
  projectDir: dir,
  shell: '/bin/bash',
  branch: 'agent_h_12345678_a5550b0a',
};

/** As Claude Code 2.1.328's Bash tool runs a command: eval inside bash -c, then records the cwd. */
function asClaudeCode(command: string) {
  const q = `'${command.replace(/'/g, `'\\''`)}'`;
  const r = spawnSync('/bin/bash', ['-c', `eval ${q} < /dev/null && pwd -P >| ${join(dir, 'cwd')}`], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.replace(/^\/bin\/bash: line \d+: /gm, 'bash: ') };
}

describe('rewriteCommand', () => {
  it('is the wrapper, `; exit`, the marker, and the original verbatim on the next line', () => {
    expect(rewriteCommand("echo 'hi'", P)).toBe(
      `'${launcher}' agent exec --agent ${P.agentId} --cwd ${dir} -- /bin/bash -c 'echo '\\''hi'\\'''; exit # pgx-routed ${P.branch}\necho 'hi'`,
    );
  });

  const originals = [
    'echo hello',
    'printf "a\\tb\\n" | tr a-z A-Z',
    'echo \'single\' "double" $((1+2)) $(echo sub)',
    'false',
    'exit 3',
    'echo out; echo err >&2; (exit 7)',
    "cat <<'EOF'\nline one\n$HOME stays literal\nEOF",
    'x=1\ny=2\necho $((x+y))',
    'sleep 0.1 & wait; echo waited',
    'echo no newline at end\\',
  ];
  it.each(originals)('runs once with the same stdout, stderr and status: %s', (original) => {
    const plain = asClaudeCode(original);
    const routed = asClaudeCode(rewriteCommand(original, P));
    expect(routed).toEqual(plain);
  });

  // Two documented differences (docs/pgx/local-dev/agents.md), both from how Claude Code runs a command: `eval … &&`.
  it('a syntax error: same status, the message names -c instead of eval', () => {
    const plain = asClaudeCode("echo unbalanced '");
    const routed = asClaudeCode(rewriteCommand("echo unbalanced '", P));
    expect([routed.status, routed.stdout]).toEqual([plain.status, plain.stdout]);
    expect(routed.stderr).toMatch(/unexpected EOF/);
  });
  it("set -e: unrouted, Claude Code's `eval … &&` switches it off; routed, the inner shell honours it", () => {
    expect(asClaudeCode('set -e; false; echo after').stdout).toBe('after\n');
    expect(asClaudeCode(rewriteCommand('set -e; false; echo after', P))).toEqual({ status: 1, stdout: '', stderr: '' });
  });
});

describe('isRouted', () => {
  const routed = rewriteCommand("psql -c 'select 1'", P);
  it('holds for exactly the form pgx wrote for this agent, launcher, project, shell and branch', () => {
    expect(isRouted(routed, P)).toBe(true);
    expect(isRouted(rewriteCommand("multi\nline 'q'", P), P)).toBe(true);
  });
  it('fails for anything else', () => {
    expect(isRouted(routed, { ...P, agentId: 'a0000000000000000' })).toBe(false);
    expect(isRouted(routed, { ...P, branch: 'other' })).toBe(false);
    expect(isRouted(routed, { ...P, shell: '/bin/sh' })).toBe(false);
    expect(isRouted(routed.replace("\npsql -c 'select 1'", '\necho harmless'), P)).toBe(false); // copy differs from what runs
    expect(isRouted(`${routed}\nrm -rf x`, P)).toBe(false);
    expect(isRouted(routed.replace('; exit #', '; true #'), P)).toBe(false);
    expect(isRouted(`psql # pgx-routed ${P.branch}`, P)).toBe(false);
  });
});

describe("the session's form (a Codex parent, decision 205)", () => {
  const S: RewriteParams = {
    launcher,
    sessionId: '019a1b2c-3d4e-7f00-8000-0123456789ab',
    projectDir: dir,
    shell: '/bin/bash',
    branch: 'session_h_12345678',
  };
  it('is the subagent form with `--session <sid> --fail-open` in place of `--agent <id>`', () => {
    expect(rewriteCommand("echo 'hi'", S)).toBe(
      `'${launcher}' agent exec --session ${S.sessionId} --fail-open --cwd ${dir} -- /bin/bash -c 'echo '\\''hi'\\'''; exit # pgx-routed ${S.branch}\necho 'hi'`,
    );
    const asAgent = rewriteCommand("echo 'hi'", S)
      .replace(`--session ${S.sessionId} --fail-open`, `--agent ${P.agentId}`)
      .replace(S.branch, P.branch);
    expect(asAgent).toBe(rewriteCommand("echo 'hi'", P));
  });
  it('is routed only for that session: not as an agent of the same id, another session, or without --fail-open', () => {
    const routed = rewriteCommand("psql -c 'select 1'", S);
    expect(isRouted(routed, S)).toBe(true);
    expect(isRouted(routed, { ...P, agentId: S.sessionId, branch: S.branch })).toBe(false);
    expect(isRouted(routed, { ...S, sessionId: '019a1b2c-3d4e-7f00-8000-0123456789ac' })).toBe(false);
    expect(isRouted(routed.replace(' --fail-open', ''), S)).toBe(false);
    expect(isRouted(rewriteCommand("psql -c 'select 1'", { ...P, agentId: S.sessionId, branch: S.branch }), S)).toBe(
      false,
    );
  });
  it.each(['echo hello', 'echo out; echo err >&2; (exit 7)', "cat <<'EOF'\nline\nEOF"])(
    'runs once with the same stdout, stderr and status: %s',
    (original) => {
      expect(asClaudeCode(rewriteCommand(original, S))).toEqual(asClaudeCode(original));
    },
  );
});

describe('invokesLauncher', () => {
  it('finds the launcher however it is quoted, and any `pgx … agent … exec`', () => {
    for (const c of [
      `'${launcher}' agent exec --agent x -- rm y`,
      `"${launcher}" agent exec -- rm y`,
      `echo hi; '${launcher.replace('pgx', "pg''x")}' agent exec -- rm y`,
      `${launcher.replace(/ /g, '\\ ')} agent exec -- true`,
      'pgx agent exec --id x -- rm y',
      'npx pgx agent exec -- rm y',
      'node /x/bin/pgx.js agent exec -- rm y',
      'pgx --json agent exec -- true',
      `cat '${launcher}'`,
    ])
      expect(invokesLauncher(c, launcher), c).toBe(true);
  });
  it('leaves other pgx commands and unrelated text alone', () => {
    for (const c of [
      'pgx agent ls',
      'pgx agent doctor',
      'echo exec agent pgx',
      'psql -c "select 1"',
      'grep -r pgx src',
    ])
      expect(invokesLauncher(c, launcher), c).toBe(false);
  });
});

describe('hasBareExit', () => {
  it('finds a bare exit subcommand, over-matching', () => {
    for (const c of [
      'exit',
      'npm test; exit',
      'npm test || exit',
      'true && exit # done',
      'a\nexit\nb',
      '(exit)',
      'echo exit',
    ])
      expect(hasBareExit(c), c).toBe(true);
  });
  it('ignores exit with a status and exit inside a word or a quoted string', () => {
    for (const c of ['exit 1', 'npm test || exit 1', 'exit $?', 'echo "exit"', 'git commit -m exiting', 'exitcode=1'])
      expect(hasBareExit(c), c).toBe(false);
  });
});
