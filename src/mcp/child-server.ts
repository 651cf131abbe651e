// One MCP server process over stdio (newline-delimited JSON-RPC, the MCP stdio transport): what pgx's front runs for
// a branch, a copy of the user's own server. Its stderr goes to the front's (Claude Code keeps an MCP server's stderr
// in its debug log); lines that are not JSON are dropped, as a client drops them.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

export type JsonRpc = Record<string, unknown>;

export interface ChildServer {
  readonly pid: number | undefined;
  send(msg: JsonRpc): void;
  /** Ends the process group: its stdin closed (a stdio server's signal to go), then SIGTERM, then SIGKILL. */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildEvents {
  message(msg: JsonRpc): void;
  exit(why: string): void;
}

export function startChild(
  cmd: { command: string; args: string[]; env: NodeJS.ProcessEnv; cwd?: string },
  on: ChildEvents,
  stderr: Writable = process.stderr,
): ChildServer {
  // A process group of its own: `npx …` runs the server as its child, and stop() must end both.
  const child = spawn(cmd.command, cmd.args, {
    env: cmd.env,
    cwd: cmd.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const kill = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {
      // gone
    }
  };
  let exited = false;
  const done = new Promise<void>((res) => {
    const end = (why: string) => {
      if (exited) return;
      exited = true;
      kill('SIGTERM'); // what the leader left of its group (npx's server)
      on.exit(why);
      res();
    };
    child.once('error', (e) => end(`could not start: ${e.message}`));
    child.once('exit', (code, signal) => end(signal ? `ended by ${signal}` : `exited with status ${code}`));
  });
  child.stderr.on('data', (d: Buffer) => stderr.write(d));
  child.stdin.on('error', () => {}); // a server that died: its exit says so
  createInterface({ input: child.stdout }).on('line', (line) => {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof msg === 'object' && msg !== null && !Array.isArray(msg)) on.message(msg as JsonRpc);
  });
  return {
    pid: child.pid,
    send(msg) {
      if (!exited && child.stdin.writable) child.stdin.write(JSON.stringify(msg) + '\n');
    },
    async stop(graceMs = 2000) {
      if (exited) return;
      child.stdin.end();
      const timer = setTimeout(() => kill('SIGTERM'), Math.min(500, graceMs));
      const hard = setTimeout(() => kill('SIGKILL'), graceMs);
      await done;
      clearTimeout(timer);
      clearTimeout(hard);
    },
  };
}
