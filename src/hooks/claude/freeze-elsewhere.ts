// A frozen copy of a large session branch made off the hook's process (engine/freeze.ts): a command hook's process
// exits at its deadline, taking an unfinished pg_dump | psql with it, and every retry would be cut off the same way.
// A detached `pgx agent freeze` outlives the hook; the hook waits for its copy within its time, and the next ensure
// (before the subagent's next Bash command) clones it once ready. Single flight twice over, as the pool filler's: a
// pid file per branch keeps a burst of 20 SubagentStarts from starting 20 freezers (cheap, best effort), and the
// branch's freeze lock is what guarantees one copy at a time. No password in its argv: the environment carries the
// server's settings, as for the pool filler.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../project/config.js';
import type { FreezeElsewhere } from '../../engine/api.js';
import { pidAlive } from '../../lib/fsutil.js';
import { spawnDetachedOnce } from '../../lib/processes.js';

/** The freezer's pid file for a branch (per PGX_HOME: one server's branches). */
export function freezeMarker(config: Config, branch: string): string {
  return join(config.home, 'agent', `freeze-${createHash('sha256').update(branch).digest('hex').slice(0, 24)}.pid`);
}

const pidIn = (file: string): number => {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return 0;
  }
};

export function freezeElsewhere(config: Config): FreezeElsewhere {
  return (parent, ticket) => {
    const marker = freezeMarker(config, parent);
    try {
      mkdirSync(join(config.home, 'agent'), { recursive: true, mode: 0o700 });
    } catch {
      return undefined;
    }
    const started = spawnDetachedOnce(marker, {
      command: process.execPath,
      args: [
        process.argv[1]!,
        'agent',
        'freeze',
        '--branch',
        parent,
        '--after-ticket',
        ticket,
        '--cwd',
        config.projectDir,
        '--json',
      ],
      env: process.env,
      held: (text) => {
        const pid = Number(text.trim());
        return pid > 0 && pidAlive(pid);
      },
      stamp: (pid) => String(pid ?? ''),
    });
    if (started === 'failed') return undefined;
    // Started now, or one already running (another fork's): either way, ended when that process is gone.
    const pid = pidIn(marker);
    const ended = new Promise<number | null>((res) => {
      const poll = setInterval(() => {
        if (pid > 0 && pidAlive(pid)) return;
        clearInterval(poll);
        res(null);
      }, 250);
      poll.unref();
    });
    return { ended };
  };
}

/** The freezer's end: its pid file goes, if still its own. */
export function finishFreeze(config: Config, branch: string): void {
  const file = freezeMarker(config, branch);
  if (pidIn(file) === process.pid) rmSync(file, { force: true });
}
