// A socket directory nobody else can plant (decision 443), tested with a second Unix user (`nobody`; needs root, else
// skipped with a message). Another user who makes the broker's directory first, or plants a socket in one it can
// write, must never receive a hook (its listener counts connections), and must never block silently: the hooks
// still answer (each in its own process), and SessionStart, the doctor and `agent broker start` say why, the last
// two with an exit code.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { environmentMaterial, socketKey } from '../../src/broker/protocol.js';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';
import { hookEnv, launcherReal, pollUntil, rewriteOf, type Project } from '../helpers/hooks.js';
import { jsonOf, makeProject, REPO, runPgx } from '../helpers/pgx.js';
import { isBroker, processes } from '../helpers/leftovers.js';

const root = process.getuid?.() === 0;
if (!root) console.log('socket-dir-second-user: skipped, it needs root (to act as the second user `nobody`)');

const NOBODY = 65534;
const shared: string[] = [];
const listeners: ChildProcess[] = [];
const projects: Project[] = [];

afterAll(async () => {
  for (const l of listeners) l.kill('SIGKILL');
  await Promise.all(
    listeners.map((l) =>
      l.exitCode === null && l.signalCode === null ? new Promise((r) => l.once('exit', r)) : undefined,
    ),
  );
  for (const p of projects) runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: hookEnv(p, {}) });
  for (const d of shared) rmSync(d, { recursive: true, force: true });
});

/** A world-writable, sticky directory like /tmp, that `nobody` can reach. */
function sharedTmp(): string {
  const d = mkdtempSync('/tmp/pgx-shared-');
  chmodSync(d, 0o1777);
  shared.push(d);
  return d;
}

/** The broker socket names this build and launcher would use (protocol.ts), for the planted ones to take. */
function brokerKey(): string {
  const build = readFileSync(join(REPO, 'dist', 'build-id'), 'utf8').trim();
  return socketKey(environmentMaterial({}, launcherReal()).replace('"dev"', JSON.stringify(build)));
}

/** `nobody` (setpriv execs it: no parent to outlive) listens on `sockets` (made 0666 in `dir`) and appends a line to `log` for every connection. */
async function plantAsNobody(dir: string, sockets: string[], log: string): Promise<void> {
  const script = `const net=require('net'),fs=require('fs');let n=0;for(const p of ${JSON.stringify(sockets)}){const s=net.createServer((c)=>{fs.appendFileSync(${JSON.stringify(log)},p+'\\n');c.destroy()});s.listen(p,()=>{fs.chmodSync(p,0o666);if(++n===${sockets.length})console.log('up')})}`;
  const l = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  listeners.push(l);
  await new Promise((r) => l.stdout!.once('data', r));
}

/** Claude Code's command hook: `/bin/sh -c "'<launcher>' agent hook <event>"`, the payload on stdin. */
function entry(event: string, input: string, env: NodeJS.ProcessEnv, cwd: string) {
  return spawnSync('/bin/sh', ['-c', `'${launcherReal()}' agent hook ${event}`], {
    cwd,
    env,
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

function project(tmp: string): Project {
  const p = makeProject();
  // TMPDIR: the shared directory, so the socket directory is <shared>/pgx-<uid>, a name anyone may make first
  Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '60000', TMPDIR: tmp });
  delete p.env.XDG_RUNTIME_DIR;
  projects.push(p);
  return p;
}

const planted = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

describe.skipIf(!root)('a socket directory another user made first', () => {
  it('receives no hook, blocks nothing, and is said out loud (SessionStart, doctor, broker start)', async () => {
    const tmp = sharedTmp();
    const dir = join(tmp, `pgx-${process.getuid!()}`);
    const log = join(tmp, 'connections.log');
    expect(spawnSync('runuser', ['-u', 'nobody', '--', 'mkdir', '-m', '0777', dir]).status).toBe(0);
    const key = brokerKey();
    await plantAsNobody(tmp, [join(dir, `b-${key}.sock`), join(dir, `h-${key}.sock`)], log);
    const p = project(tmp);
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const env = hookEnv(p, { session_id: s.sessionId });

    const start = entry('session-start', JSON.stringify(sessionStart(s)), env, p.dir);
    expect(start.status).toBe(0);
    expect(JSON.parse(start.stdout).systemMessage).toMatch(
      new RegExp(`not a private directory of yours \\(it belongs to uid ${NOBODY}`),
    );
    expect(entry('subagent-start', JSON.stringify(subagentStart(s, a)), env, p.dir).status).toBe(0);
    const pre = entry(
      'pre-tool-use',
      JSON.stringify(preToolUseBash(s, "psql -c 'select 1'", { agentId: a })),
      env,
      p.dir,
    );
    expect(pre.status).toBe(0);
    expect(
      rewriteOf({
        status: 0,
        signal: null,
        stdout: pre.stdout,
        stderr: pre.stderr,
        elapsedMs: 0,
        json: JSON.parse(pre.stdout),
      }).command,
    ).toContain(`--agent ${a}`);
    // the routed command itself runs too, on the subagent's branch
    const routed = spawnSync(
      '/bin/bash',
      ['-c', JSON.parse(pre.stdout).hookSpecificOutput.updatedInput.command.replace("psql -c 'select 1'", 'true')],
      {
        cwd: p.dir,
        env: { ...p.env, CLAUDECODE: '1', CLAUDE_PROJECT_DIR: p.dir, CLAUDE_CODE_SESSION_ID: s.sessionId },
        encoding: 'utf8',
      },
    );
    expect(routed.status, routed.stderr).toBe(0);

    const doctor = runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: hookEnv(p, {}) });
    const check = jsonOf(doctor).checks.find((c: { name: string }) => c.name === 'broker');
    expect(check.status).toBe('fail');
    expect(check.detail).toContain(`owned by uid ${NOBODY}`);
    expect(doctor.status).not.toBe(0);
    const started = runPgx(['agent', 'broker', 'start'], { cwd: p.dir, env: hookEnv(p, {}) });
    expect(started.status).not.toBe(0);
    expect(started.stderr).toContain('not a private directory of yours');
    expect(runPgx(['agent', 'broker', 'status'], { cwd: p.dir, env: hookEnv(p, {}) }).status).not.toBe(0);

    // nothing of this user's went there: no connection, no broker serving from it
    expect(planted(log)).toEqual([]);
    expect(
      processes().filter(
        (x) => isBroker(x) && readFileSync(`/proc/${x.pid}/environ`, 'utf8').includes(`TMPDIR=${tmp}\0`),
      ),
    ).toEqual([]);
  });

  it("a directory of this user's that others may write: a socket planted in it by another user is never asked", async () => {
    const tmp = sharedTmp();
    const dir = join(tmp, `pgx-${process.getuid!()}`);
    mkdirSync(dir);
    chmodSync(dir, 0o777); // ours, but open: not private
    const log = join(tmp, 'connections.log');
    const key = brokerKey();
    await plantAsNobody(tmp, [join(dir, `b-${key}.sock`), join(dir, `h-${key}.sock`)], log);
    const p = project(tmp);
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const env = hookEnv(p, { session_id: s.sessionId });
    const pre = entry('pre-tool-use', JSON.stringify(preToolUseBash(s, 'echo hi', { agentId: a })), env, p.dir);
    expect(JSON.parse(pre.stdout).hookSpecificOutput.updatedInput.command).toContain(`--agent ${a}`);
    const check = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: hookEnv(p, {}) })).checks.find(
      (c: { name: string }) => c.name === 'broker',
    );
    expect(check.status).toBe('warn');
    expect(planted(log)).toEqual([]);
    // made private again by its owner, the broker comes back: a real socket of this user's replaces nothing of nobody's
    chmodSync(dir, 0o700);
    expect(runPgx(['agent', 'broker', 'start'], { cwd: p.dir, env: hookEnv(p, {}) }).status).toBe(0);
    await pollUntil(async () => readdirSync(dir).some((f) => f.startsWith('h-')) || undefined, 10_000);
    expect(planted(log)).toEqual([]);
  });
});

// Decision 454: the hint for a socket directory another user made first is a command that works, whatever HOME is.
// With a HOME over 59 bytes, $HOME/.pgx/run does not fit a socket path, so "unset TMPDIR" (the old hint) led to
// /tmp/pgx-<uid>, which anyone may make first too.
describe.skipIf(!root)('the way out of a squatted socket directory (decision 454)', () => {
  it.each([
    ['a HOME over 59 bytes', true],
    ['a short HOME', false],
  ])('with %s: the hint names one command, and run where it says, the broker starts', async (_, long) => {
    const tmp = sharedTmp();
    expect(
      spawnSync('runuser', ['-u', 'nobody', '--', 'mkdir', '-m', '0777', join(tmp, `pgx-${process.getuid!()}`)]).status,
    ).toBe(0);
    const p = project(tmp);
    if (long) {
      p.env.HOME = join(p.dir, 'a-home-directory-with-a-name-long-enough-for-this');
      mkdirSync(p.env.HOME);
    }
    expect(Buffer.byteLength(join(p.env.HOME!, '.pgx', 'run')) > 68).toBe(long);
    const refused = runPgx(['agent', 'broker', 'start'], { cwd: p.dir, env: p.env });
    expect(refused.status, refused.stderr).not.toBe(0);
    const fix = /run `([^`]+)`/.exec(refused.stderr)?.[1];
    expect(fix, refused.stderr).toBe(
      long ? 'export TMPDIR="$(mktemp -d /tmp/pgx-run.XXXXXX)"' : 'unset TMPDIR TMP TEMP',
    );
    expect(refused.stderr).toContain(`tell whoever runs uid ${NOBODY}`);
    // the doctor gives the same
    const check = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: p.env })).checks.find(
      (c: { name: string }) => c.name === 'broker',
    );
    expect(check.fix).toContain(`\`${fix}\``);

    // the user's shell, then pgx started from it (as the agent would be)
    const started = spawnSync(
      '/bin/sh',
      ['-c', `${fix}; echo "tmpdir=\${TMPDIR-}"; '${launcherReal()}' agent broker start --json`],
      { cwd: p.dir, env: p.env, encoding: 'utf8' },
    );
    const made = /tmpdir=(\S*)/.exec(started.stdout)?.[1] ?? '';
    if (made) shared.push(made); // the mktemp directory goes with the test's
    const env = { ...p.env, TMPDIR: made || undefined };
    try {
      expect(started.status, started.stderr).toBe(0);
      const dir = long ? join(made, `pgx-${process.getuid!()}`) : join(p.env.HOME!, '.pgx', 'run');
      await pollUntil(async () => readdirSync(dir).some((f) => /^b-.*\.sock$/.test(f)) || undefined, 10_000);
    } finally {
      expect(runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env }).status).toBe(0);
    }
  });
});
