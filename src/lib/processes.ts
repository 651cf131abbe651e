// Child-process primitives with one copy each: the exit status of a child that died of a signal, and the detached
// single-flight start (the broker, the pool filler). Node built-ins only, and node:child_process loaded on first
// use: the light hook entry carries this module on every hook, and most hooks start nothing.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants as osConstants } from 'node:os';

// by require: a dynamic import() would start node's ES module loader in the CommonJS hot-path entries
const lazy = createRequire(import.meta.url);

/** A shell's status for a process that died of `sig`: 128 + its number. */
export function signalStatus(sig: NodeJS.Signals): number {
  return 128 + (osConstants.signals[sig] ?? 0);
}

/** A child's exit status from its 'close' event: its code, else 128 + its signal's number (128 with neither). */
export function closeStatus(code: number | null, signal: NodeJS.Signals | null): number {
  return code ?? (signal ? signalStatus(signal) : 128);
}

export interface DetachedStart {
  /** The program and its arguments. */
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Is the start recorded in the marker (its text) still under way or alive? Then nothing is started. */
  held(markerText: string): boolean;
  /** The marker's text for the child just spawned. */
  stamp(pid: number | undefined): string;
  /** Called with the child's pid once it is spawned (its priority, say). */
  spawned?(pid: number): void;
}

/**
 * Starts a detached child (its own session, stdio ignored, not waited for) unless the marker file says another
 * process started one: the marker is created exclusively (O_EXCL), so of a burst of 20 callers one starts it. A
 * marker whose start is no longer held (a dead pid, a stale time) is replaced. The child that fails to spawn takes
 * its marker with it. Never throws: 'failed' says it could not.
 */
export function spawnDetachedOnce(marker: string, start: DetachedStart): 'started' | 'held' | 'failed' {
  const { spawn } = lazy('node:child_process') as typeof import('node:child_process');
  try {
    let fd: number;
    try {
      fd = openSync(marker, 'wx', 0o600);
    } catch {
      if (start.held(readFileSync(marker, 'utf8'))) return 'held';
      rmSync(marker, { force: true }); // a start that never finished, or a child that died without removing it
      fd = openSync(marker, 'wx', 0o600);
    }
    const child = spawn(start.command, start.args, {
      detached: true,
      stdio: 'ignore',
      env: start.env,
      ...(start.cwd !== undefined ? { cwd: start.cwd } : {}),
    });
    child.on('error', () => rmSync(marker, { force: true }));
    writeSync(fd, start.stamp(child.pid));
    closeSync(fd);
    if (child.pid) start.spawned?.(child.pid);
    child.unref();
    return 'started';
  } catch {
    return 'failed';
  }
}
