// parseRoutedExec: the light entries' reading of the rewrite's argv, for both forms (a subagent's `--agent`, a Codex
// session's `--session … --fail-open`, decision 205), taken from what a shell really hands the launcher.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRoutedExec } from '../../src/exec/exec-argv.js';
import { rewriteCommand, type RewriteParams } from '../../src/hooks/claude/rewrite.js';

const dir = mkdtempSync(join(tmpdir(), 'pgx-argv-'));
const launcher = join(dir, 'pgx launcher.js');
const argvFile = join(dir, 'argv');
// A stand-in launcher that records its argv, NUL-separated.
writeFileSync(launcher, `#!/bin/sh\nprintf '%s\\0' "$@" > '${argvFile}'\n`);
chmodSync(launcher, 0o755);

/** The argv a routed command's first line gives the launcher under bash. */
function argvOf(command: string): string[] {
  const r = spawnSync('/bin/bash', ['-c', command], { cwd: dir, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(argvFile, 'utf8').split('\0').slice(0, -1);
}

const original = `psql -X -Atc 'select current_database()' | tr a-z A-Z`;
const base = { launcher, projectDir: join(dir, 'my project'), shell: '/bin/bash', branch: 'b_1' };

describe('parseRoutedExec', () => {
  it("reads a subagent's routed command back: the agent, the project, the shell and the original", () => {
    const p: RewriteParams = { ...base, agentId: 'a5550b0ae3d1c2c1c' };
    expect(parseRoutedExec(argvOf(rewriteCommand(original, p)))).toEqual({
      agent: p.agentId,
      cwd: p.projectDir,
      command: ['/bin/bash', '-c', original],
    });
  });

  it("reads a session's routed command back (`--session <sid> --fail-open`): the session, not an agent", () => {
    const p: RewriteParams = { ...base, sessionId: '019a1b2c-3d4e-7f00-8000-0123456789ab' };
    const parsed = parseRoutedExec(argvOf(rewriteCommand(original, p)));
    expect(parsed).toEqual({ session: p.sessionId, cwd: p.projectDir, command: ['/bin/bash', '-c', original] });
    expect(parsed?.agent).toBeUndefined();
    expect(parseRoutedExec(['agent', 'exec', '--session', 's1', '--fail-open', '--', 'true'])).toEqual({
      session: 's1',
      cwd: undefined,
      command: ['true'],
    });
  });

  it('takes no other form: those go to the full CLI, which parses and answers as always', () => {
    for (const argv of [
      ['agent', 'exec', '--session', 's1', '--', 'true'], // no --fail-open: a user's own session exec
      ['agent', 'exec', '--session', 's1', '--cwd', dir, '--fail-open', '--', 'true'], // out of order
      ['agent', 'exec', '--agent', 'a1', '--fail-open', '--', 'true'], // refused by the CLI (exit 2)
      ['agent', 'exec', '--fail-open', '--session', 's1', '--', 'true'],
      ['agent', 'exec', '--session', '--fail-open', '--', 'true'],
      ['agent', 'exec', '--session', 's1', '--fail-open', '--'],
      ['agent', 'exec', '--session', 's1', '--fail-open', '--json', '--', 'true'],
      ['agent', 'exec', '--id', 'x', '--', 'true'],
    ]) {
      expect(parseRoutedExec(argv), argv.join(' ')).toBeUndefined();
    }
  });
});
