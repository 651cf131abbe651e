// initdb, run so that a pgx killed half-way can't leave it running. It runs in a process group of its own, tagged
// with the data directory in its environment (inherited by the `postgres --boot/--single` children it starts). A pgx
// that is signalled (Ctrl-C, SIGTERM) kills the group itself; a pgx that is SIGKILLed can't, so the next
// `pgx local up` finds the leftovers by their tag and kills them before it removes the half-made directory (an
// initdb still writing into it made that removal fail with ENOTEMPTY, and would have raced the new initdb).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { PgxError } from '../lib/errors.js';
import { signalStatus } from '../lib/processes.js';

/** The tag, as NAME=value in a process's environment. */
export const INIT_TAG = 'PGX_LOCAL_INIT';

export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs `cmd` in its own process group, tagged with `dataDir`; rejects with LOCAL_SERVER on failure. */
export function runInitGroup(
  runAs: RunAs | undefined,
  cmd: string,
  args: string[],
  dataDir: string,
  what: string,
  opts: { timeoutMs?: number; onKilled?: () => void } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      uid: runAs?.uid,
      gid: runAs?.gid,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C', [INIT_TAG]: dataDir },
      detached: true, // setsid: its own group, so the whole tree can be killed at once
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    // Ctrl-C reaches the terminal's foreground group, which initdb has left: pass it on, then die of it as before.
    const onSignal = (sig: NodeJS.Signals) => {
      killGroup();
      opts.onKilled?.();
      process.exit(signalStatus(sig));
    };
    for (const sig of SIGNALS) process.on(sig, onSignal);
    const timer = setTimeout(killGroup, opts.timeoutMs ?? 120_000);
    const done = () => {
      clearTimeout(timer);
      for (const sig of SIGNALS) process.off(sig, onSignal);
    };
    child.on('error', (err) => {
      done();
      reject(
        new PgxError(
          'LOCAL_SERVER',
          `${what} failed: ${err.message}`,
          'Check that the PostgreSQL binaries run on this machine (`pgx local status`).',
        ),
      );
    });
    child.on('close', (code, signal) => {
      done();
      if (code === 0) return resolve();
      killGroup(); // a child of a failed initdb that outlived it
      const detail = output.trim().split('\n').slice(-5).join('\n');
      reject(
        new PgxError(
          'LOCAL_SERVER',
          `${what} failed: ${detail || (signal ? `killed by ${signal}` : `exit ${code}`)}`,
          'Check that the PostgreSQL binaries run on this machine (`pgx local status`).',
        ),
      );
    });
  });
}

/** Pids of live processes tagged with `dataDir` (Linux /proc; elsewhere none are found). */
export function taggedProcesses(dataDir: string): number[] {
  const needle = `${INIT_TAG}=${dataDir}`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(needle)) continue;
      const stat = readFileSync(`/proc/${e}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue; // a zombie holds nothing
      pids.push(Number(e));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** Kills what an earlier, killed pgx left initialising `dataDir`, and waits (up to 10 s) until it is gone. */
export async function killLeftoverInit(dataDir: string): Promise<number> {
  const found = taggedProcesses(dataDir);
  for (const pid of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const until = Date.now() + 10_000;
  while (taggedProcesses(dataDir).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return found.length;
}
