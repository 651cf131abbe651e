// Defects 3 and 4: an `agent exec --id X` branch is retired when its command ends, on every exit path (the command's
// status, a signal, a command that cannot start), and concurrent execs of one id each hold a lease on it, so the
// branch is retired only when the last of them ends: none of them loses its branch under its command.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { LAUNCHER, makeProject, runPgx, runPgxAsync } from '../helpers/pgx.js';
import { dbState, pollUntil, registryRows } from '../helpers/hooks.js';

const stateOf = async (project: string, name: string) =>
  (await registryRows(project)).find((r) => r.name === name)?.state;

describe('agent exec --id: the branch is retired on every exit path', () => {
  it('a command that cannot start (127): retired, not left active', async () => {
    const p = makeProject();
    const r = runPgx(['agent', 'exec', '--id', 'nosuch', '--json', '--', 'nosuchcmd-xyz'], p);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('pgx: nosuchcmd-xyz: command not found');
    const report = JSON.parse(r.stderr.trim().split('\n').pop()!);
    expect(report).toMatchObject({ status: 127, retired: true, lease: 'retired', spawn_error: 'ENOENT' });
    expect(await stateOf(p.name, `exec_${p.host}_nosuch`)).toBe('retiring');
    expect((await dbState(`exec_${p.host}_nosuch`)).allowConn).toBe(false);
  });

  it('pgx itself signalled while the command runs: the signal reaches the command, then the branch is retired', async () => {
    const p = makeProject();
    const name = `exec_${p.host}_sig`;
    const child = spawn(process.execPath, [LAUNCHER, 'agent', 'exec', '--id', 'sig', '--', 'sleep', '30'], {
      cwd: p.cwd,
      env: p.env,
      stdio: 'ignore',
    });
    const closed = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
    expect(await pollUntil(async () => (await stateOf(p.name, name)) === 'active', 30_000, 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 300)); // the command is running
    child.kill('SIGTERM');
    expect(await closed).toBe(143);
    expect(await stateOf(p.name, name)).toBe('retiring');
  });

  it('--keep: the branch stays active after its exec, and after a throwaway exec that attached to it', async () => {
    const p = makeProject();
    expect(runPgx(['agent', 'exec', '--id', 'kept', '--keep', '--', 'true'], p).status).toBe(0);
    expect(runPgx(['agent', 'exec', '--id', 'kept', '--', 'true'], p).status).toBe(0);
    expect(await stateOf(p.name, `exec_${p.host}_kept`)).toBe('active');
  });
});

describe('concurrent agent exec --id X: a lease each, retired when the last ends', () => {
  it('20 concurrent execs of one id: 0 fail, none loses its branch mid-command; retired once all have ended', async () => {
    const p = makeProject();
    const name = `exec_${p.host}_shared`;
    // Each command holds a connection to the branch for a while, then uses it again: a retire under it would show.
    const cmd = 'psql -X -q -v ON_ERROR_STOP=1 -Atc "select pg_sleep(random() * 1.5)" -c "select current_database()"';
    const runs = await Promise.all(
      Array.from({ length: 20 }, () =>
        runPgxAsync(['agent', 'exec', '--id', 'shared', '--json', '--', 'sh', '-c', cmd], p),
      ),
    );
    const failed = runs.filter((r) => r.status !== 0);
    process.stderr.write(`20 concurrent same-id execs: ${failed.length} failed\n`);
    expect(
      failed.map((r) => r.stderr),
      'failures',
    ).toEqual([]);
    for (const r of runs) expect(r.stdout.trim().split('\n').pop()).toBe(name);
    const leases = runs.map((r) => JSON.parse(r.stderr.trim().split('\n').pop()!).lease as string);
    // The last to end retires it (an exec that started after an earlier retire revives it and retires it again).
    expect(leases.filter((l) => l === 'retired').length).toBeGreaterThanOrEqual(1);
    expect(leases.filter((l) => l !== 'retired' && l !== 'other-leases')).toEqual([]);
    expect(await stateOf(p.name, name)).toBe('retiring');
  });
});
