// Running a routed command once its environment is known: stdio inherited, signals forwarded, the exit status
// passed through (128 + n when it dies of signal n; 127/126/125 when it can't start, as a shell says). Its own
// module, node built-ins only: `agent exec` uses it, and so does the broker's light client (broker/client.ts).
import { spawn } from 'node:child_process';
import { closeStatus } from '../lib/processes.js';

export interface CommandRun {
  status: number;
  ms: number;
  spawnError?: string;
}

export const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/** The shell's statuses for a command that could not start: 127 not found, 126 found but not runnable, else 125. */
function spawnFailure(command: string, err: NodeJS.ErrnoException): { status: number; message: string } {
  if (err.code === 'ENOENT') return { status: 127, message: `pgx: ${command}: command not found` };
  if (err.code === 'EACCES' || err.code === 'ENOEXEC' || err.code === 'EISDIR')
    return { status: 126, message: `pgx: ${command}: cannot execute (${err.code})` };
  return { status: 125, message: `pgx: ${command}: could not start: ${err.message}` };
}

/** Runs `command` with exactly `env`; resolves with its status, never rejects. */
export function spawnCommand(command: string[], env: NodeJS.ProcessEnv): Promise<CommandRun> {
  const t0 = performance.now();
  return new Promise<CommandRun>((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
    const forward = (sig: NodeJS.Signals) => () => {
      try {
        child.kill(sig);
      } catch {
        // already gone
      }
    };
    const handlers = FORWARDED.map((sig) => [sig, forward(sig)] as const);
    for (const [sig, h] of handlers) process.on(sig, h);
    const done = (r: Omit<CommandRun, 'ms'>) => {
      for (const [sig, h] of handlers) process.off(sig, h);
      resolve({ ...r, ms: Math.round(performance.now() - t0) });
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      const f = spawnFailure(command[0]!, err);
      process.stderr.write(`${f.message}\n`);
      done({ status: f.status, spawnError: err.code ?? err.message });
    });
    child.on('close', (code, signal) => done({ status: closeStatus(code, signal) }));
  });
}
