// A command's output to a pipe whose reader went away (`pgx agent gc --help | head`) ends quietly: the status the
// command settled on (0 for help and --version), never an EPIPE stack trace (decision 456). The built CLI, spawned with
// its stdout's reading end closed before it writes, and through a real `| head -1` in bash with pipefail.
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';
import { shellQuote } from '../../src/lib/shell.js';

/** Runs pgx with its stdout a pipe nobody reads (closed at once): its status, signal and stderr. */
function intoClosedPipe(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(process.execPath, [LAUNCHER, ...args], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.destroy(); // the reader is gone before pgx writes a byte
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise<{ status: number | null; signal: string | null; stderr: string }>((res) =>
    child.on('close', (status, signal) => res({ status, signal, stderr })),
  );
}

const NO_STACK = /EPIPE|Unhandled 'error'|^\s+at /m;

describe('output to a closed pipe', () => {
  it('help and --version end with status 0 and nothing on stderr', async () => {
    const env = { PATH: process.env.PATH, HOME: '/nonexistent' };
    for (const args of [['agent', 'gc', '--help'], ['--help'], ['--version']]) {
      const r = await intoClosedPipe(args, { cwd: '/', env });
      expect(r.signal, args.join(' ')).toBeNull();
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.status, args.join(' ')).toBe(0);
    }
    // the issue's own form
    const head = spawnSync(
      'bash',
      ['-o', 'pipefail', '-c', `${shellQuote(process.execPath)} ${shellQuote(LAUNCHER)} agent gc --help | head -1`],
      { cwd: '/', env, encoding: 'utf8' },
    );
    expect(head.stdout).toBe('Usage: pgx agent gc [options]\n');
    expect(head.stderr).toBe('');
    expect(head.status).toBe(0);
  });

  it('a command that ran (agent doctor --json) ends with the status it would have had, quietly', async () => {
    const p = makeProject();
    const read = runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: p.env });
    const r = await intoClosedPipe(['agent', 'doctor', '--json'], { cwd: p.dir, env: p.env });
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(r.signal).toBeNull();
    expect(r.status).toBe(read.status);
  }, 120_000);
});
