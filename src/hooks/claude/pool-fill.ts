// Starting the warm pool's top-up (src/engine/pool.ts) off the hook's path: a detached `pgx agent pool fill
// --background` at low priority, which outlives the hook and never counts against its deadline. Single flight twice
// over: a pid file here keeps a burst of 20 SubagentStarts from spawning 20 fillers (cheap, best effort), and the
// filler's advisory try-lock on the template (registry/locks.ts) is what actually guarantees one at a time.
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../project/config.js';
import { pidAlive } from '../../lib/fsutil.js';
import { spawnDetachedOnce } from '../../lib/processes.js';

/** Below the user's work, above idle: a clone now saves a clone on the next SubagentStart. */
const NICE = 10;

function pidFile(config: Config): string {
  // One filler per project directory and server: the template is the project's.
  const tag = `${config.project}-${config.host}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  return join(config.home, 'agent', `pool-fill-${tag}.pid`);
}

/** Spawns the filler unless the pool is off or one is already running. Never throws: the hook's answer comes first. */
export function startPoolFill(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): 'started' | 'running' | 'off' | 'failed' {
  if (config.pool.size === 0) return 'off';
  const file = pidFile(config);
  try {
    mkdirSync(join(config.home, 'agent'), { recursive: true, mode: 0o700 });
  } catch {
    return 'failed';
  }
  const started = spawnDetachedOnce(file, {
    command: process.execPath,
    args: [process.argv[1]!, 'agent', 'pool', 'fill', '--background', '--cwd', config.projectDir],
    env, // the hook's (the broker's requester's), not the broker's own
    held: (text) => {
      const pid = Number(text.trim());
      return pid > 0 && pidAlive(pid);
    },
    stamp: (pid) => String(pid ?? ''),
    spawned: (pid) => {
      try {
        setPriority(pid, NICE);
      } catch {
        // not permitted here: it still runs, at normal priority
      }
    },
  });
  return started === 'held' ? 'running' : started;
}

/** The filler's end: its pid file goes (if still its own), and its outcome is appended to agent/pool-fill.log. */
export function finishPoolFill(config: Config, outcome: Record<string, unknown>): void {
  const file = pidFile(config);
  try {
    if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
  } catch {
    // no pid file: started by hand
  }
  const log = join(config.home, 'agent', 'pool-fill.log');
  try {
    if ((statSync(log, { throwIfNoEntry: false })?.size ?? 0) > 256 * 1024) rmSync(log, { force: true });
    appendFileSync(
      log,
      JSON.stringify({ time: new Date().toISOString(), pid: process.pid, project: config.project, ...outcome }) + '\n',
      { mode: 0o600 },
    );
  } catch {
    // the log is a courtesy
  }
}
