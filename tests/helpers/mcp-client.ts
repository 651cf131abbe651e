// A minimal MCP client over stdio for the tests (newline-delimited JSON-RPC): what Claude Code is to a server, enough
// to drive pgx's front (`pgx mcp serve`) or a user's server directly. Requests get increasing ids; notifications and
// server requests are kept for the test to look at.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface McpClient {
  child: ChildProcessWithoutNullStreams;
  request(method: string, params?: unknown, timeoutMs?: number): Promise<Record<string, any>>;
  notify(method: string, params?: unknown): void;
  /** Messages that were not answers (notifications, the server's own requests). */
  other: Record<string, any>[];
  stderr: () => string;
  /** Closes stdin (how Claude Code ends a stdio server) and waits for the exit. */
  close(timeoutMs?: number): Promise<number | null>;
}

export const CLIENT_INIT = {
  protocolVersion: '2025-06-18',
  capabilities: { roots: { listChanged: true } },
  clientInfo: { name: 'pgx-tests', version: '1.0.0' },
};

export function startMcp(command: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string }): McpClient {
  const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const waiting = new Map<number, (m: Record<string, any>) => void>();
  const other: Record<string, any>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    let m: Record<string, any>;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.method === undefined && typeof m.id === 'number' && waiting.has(m.id)) {
      waiting.get(m.id)!(m);
      waiting.delete(m.id);
    } else other.push(m);
  });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  let next = 1;
  return {
    child,
    other,
    stderr: () => err,
    request(method, params, timeoutMs = 30_000) {
      const id = next++;
      return new Promise((res, rej) => {
        const t = setTimeout(
          () => rej(new Error(`no answer to ${method} in ${timeoutMs} ms; stderr: ${err}`)),
          timeoutMs,
        );
        waiting.set(id, (m) => {
          clearTimeout(t);
          res(m);
        });
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      });
    },
    notify(method, params) {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
    },
    async close(timeoutMs = 10_000) {
      child.stdin.end();
      const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** The text of a tools/call answer's content. */
export const resultText = (m: Record<string, any>): string =>
  (m.result?.content ?? []).map((c: { text?: string }) => c.text ?? '').join('\n');
