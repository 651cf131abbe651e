// Where a process stands (exec/routed-ancestry.ts, decision 450), against real processes: a routed command's record
// confines its descendants; a record whose start time is not the process's (a reused pid) confines nothing; a record
// claiming another agent inside an agent's tree confines to neither (refused); records are found in the pgx home an
// ancestor was started with, whatever the descendant's PGX_HOME says; the broker answers only the launcher that asks;
// a walk that stops at MAX_DEPTH parents, before the top, is "unknown", not free (decision 452).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { confinementOf, isLauncherOf, MAX_DEPTH } from '../../src/exec/routed-ancestry.js';
import { pollUntil } from '../helpers/poll.js';

const children: ChildProcess[] = [];
const leaves: number[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const pid of leaves) process.kill(pid, 'SIGKILL');
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const startOf = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ')[19]!;
};

function home(): string {
  const d = mkdtempSync(join(tmpdir(), 'pgx-routed-'));
  dirs.push(d);
  return d;
}

const nsOf = (pid: number) => /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/pid`))![1]!;

/** A record file as the router writes it (the file only: this process's memory holds none of these). */
function recordFile(h: string, pid: number, agent: string, start = startOf(pid), ns = nsOf(pid)): void {
  const dir = join(h, 'agent', 'routed', bootId());
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${pid}-${start}-${ns}`),
    JSON.stringify({ agent, session: 's1', project: 'p', branch: `agent_h_s1_${agent}` }),
    { mode: 0o600 },
  );
}

/** The pid of the `sleep` that `leaf.sh` in `d` execs once started (it writes its pid first). */
async function leafOf(d: string): Promise<number> {
  const leaf = await pollUntil(
    async () => {
      try {
        const v = Number(readFileSync(join(d, 'leaf'), 'utf8'));
        return v > 0 && readFileSync(`/proc/${v}/comm`, 'utf8').trim() === 'sleep' ? v : undefined;
      } catch {
        return undefined;
      }
    },
    10_000,
    20,
  );
  leaves.push(leaf!);
  return leaf!;
}

function leafScript(): { d: string; leaf: string } {
  const d = home();
  writeFileSync(join(d, 'leaf.sh'), `echo $$ > ${join(d, 'leaf')}\nexec sleep 30\n`);
  return { d, leaf: join(d, 'leaf.sh') };
}

/** `sh -c '<prefix> sh leaf.sh & wait'` with `env`: the top shell's pid, and the sleep's below it. */
async function tree(prefix: string, env: NodeJS.ProcessEnv): Promise<{ top: number; leaf: number }> {
  const { d, leaf } = leafScript();
  const c = spawn('sh', ['-c', `${prefix} sh ${leaf} & wait`], {
    env: { PATH: process.env.PATH, ...env },
    stdio: 'ignore',
  });
  children.push(c);
  return { top: c.pid!, leaf: await leafOf(d) };
}

describe('routed ancestry', () => {
  it("confines a routed command's descendants to its agent; nothing else", async () => {
    const h = home();
    const { top, leaf } = await tree('', { PGX_HOME: h });
    expect(confinementOf(leaf).kind).toBe('free');
    recordFile(h, top, 'agentA');
    expect(confinementOf(leaf)).toMatchObject({
      kind: 'agent',
      agent: 'agentA',
      session: 's1',
      branch: 'agent_h_s1_agentA',
    });
    expect(confinementOf(process.pid).kind).toBe('free'); // the test itself is outside it
  });

  it("a record of another PID namespace's process with the same pid and start time (a sandbox's own numbering) confines nothing", async () => {
    const h = home();
    const { top, leaf } = await tree('', { PGX_HOME: h });
    // Codex runs each command in a bubblewrap PID namespace: two launchers there, started in the same clock tick, had
    // the same pid and start time. The same pid and start here, another namespace's inode: not this process.
    recordFile(h, top, 'agentB', startOf(top), String(Number(nsOf(top)) + 1));
    expect(confinementOf(leaf).kind).toBe('free');
    recordFile(h, top, 'agentA');
    expect(confinementOf(leaf)).toMatchObject({ kind: 'agent', agent: 'agentA' });
  });

  it("a record whose start time is not the process's (a reused pid) confines nothing", async () => {
    const h = home();
    const { top, leaf } = await tree('', { PGX_HOME: h });
    recordFile(h, top, 'agentA', String(Number(startOf(top)) - 1));
    expect(confinementOf(leaf).kind).toBe('free');
  });

  it("a record claiming another agent inside an agent's tree: conflict, so everything is refused", async () => {
    const h = home();
    const { top, leaf } = await tree('', { PGX_HOME: h });
    recordFile(h, top, 'agentA');
    recordFile(h, leaf, 'agentB'); // forged by the command for itself
    expect(confinementOf(leaf)).toEqual({ kind: 'conflict', agents: ['agentB', 'agentA'] });
  });

  it('finds the records in the home an ancestor was started with, whatever PGX_HOME and HOME the descendant has', async () => {
    const h = home();
    const { top, leaf } = await tree(`PGX_HOME=${home()} HOME=/nonexistent`, { PGX_HOME: h });
    recordFile(h, top, 'agentA');
    expect(confinementOf(leaf, [])).toMatchObject({ kind: 'agent', agent: 'agentA' });
  });

  it("a node launcher on the chain confines by its argv alone; the caller's own argv does not", async () => {
    // node named as the launcher: `node <dir>/pgx.js agent exec --agent A --cwd . -- sh -c …`
    const { d, leaf: script } = leafScript();
    writeFileSync(
      join(d, 'pgx.js'),
      `require('child_process').spawn('sh', ['${script}'], { stdio: 'ignore' }); setTimeout(() => {}, 30000);`,
    );
    const c = spawn(
      process.execPath,
      [join(d, 'pgx.js'), 'agent', 'exec', '--agent', 'agentA', '--cwd', d, '--', 'sh', script],
      { stdio: 'ignore' },
    );
    children.push(c);
    const leaf = await leafOf(d);
    expect(confinementOf(leaf)).toMatchObject({ kind: 'agent', agent: 'agentA', branch: null });
    expect(confinementOf(c.pid!).kind).toBe('free'); // the launcher itself is judged, not confined by its own argv
    // the broker answers for that launcher's exec only
    const req = { agent: 'agentA', cwdFlag: d, command: ['sh', script] };
    expect(isLauncherOf(c.pid, req)).toBe(true);
    expect(isLauncherOf(c.pid, { ...req, agent: 'agentB' })).toBe(false);
    expect(isLauncherOf(leaf, req)).toBe(false);
    expect(isLauncherOf(1, req)).toBe(false);
    expect(isLauncherOf(undefined, req)).toBe(false);
  });

  it(`a process more than ${MAX_DEPTH} parents deep is "unknown", with why; one fewer is judged as always`, async () => {
    // `sh deep.sh <n> leaf.sh`: n shells, each waiting for the next, then the leaf
    const deep = (n: number) => {
      const { d, leaf } = leafScript();
      writeFileSync(
        join(d, 'deep.sh'),
        `n=$1; shift\nif [ "$n" -gt 0 ]; then sh "$0" $((n - 1)) "$@"; exit $?; fi\nexec sh "$@"\n`,
      );
      children.push(spawn('sh', [join(d, 'deep.sh'), String(n), leaf], { stdio: 'ignore' }));
      return leafOf(d);
    };
    const ours = depthOf(process.pid); // the shells hang below this process
    const shallow = await deep(MAX_DEPTH - ours - 4);
    expect(confinementOf(shallow).kind).toBe('free');
    const far = await deep(MAX_DEPTH);
    expect(confinementOf(far)).toMatchObject({
      kind: 'unknown',
      why: expect.stringContaining(`after ${MAX_DEPTH} of them, before the top of the tree`),
    });
  });
});

/** How many processes from `pid` up to the top (itself included). */
function depthOf(pid: number): number {
  let n = 0;
  for (let p = pid; p > 0; n++) {
    const s = readFileSync(`/proc/${p}/stat`, 'utf8');
    p = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return n;
}
