/**
 * The real Codex CLI (installed by scripts/install-codex.sh, pinned there) for end-to-end tests, driven offline by a
 * scripted fake Responses API on 127.0.0.1 (observed on 0.171.0, /work/shared/codex-cli.md):
 * - the CLI POSTs {base_url}/responses with stream: true; the answer is SSE: response.created, one
 *   response.output_item.done (a function_call or a message), response.completed;
 * - the shell tool is `exec_command {cmd}`; subagents are `spawn_agent {message}` / `wait_agent {targets}` in the
 *   namespace `multi_agent_v1` (the function_call carries "namespace");
 * - an unknown model slug ("fake-model") keeps plain function tools.
 * The script is stateless: each request says who asks (the parent's prompt, or a subagent's task as its user
 * message) and how far it got (the function_call_outputs it carries).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withPsql } from '../helpers/psql-stand-in.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const PINNED_CODEX = /^PINNED="([0-9.]+)"$/m.exec(
  readFileSync(join(HERE, '..', '..', 'scripts', 'install-codex.sh'), 'utf8'),
)![1]!;

/** The native binary scripts/install-codex.sh installed, or undefined (the tests then skip and say why). */
export function findCodexBinary(): string | undefined {
  if (process.env.PGX_CODEX_BIN) return existsSync(process.env.PGX_CODEX_BIN) ? process.env.PGX_CODEX_BIN : undefined;
  const bin = join(
    HERE,
    '.codex-cli',
    'node_modules',
    '@openai',
    'codex-linux-x64',
    'vendor',
    'x86_64-unknown-linux-musl',
    'bin',
    'codex',
  );
  return existsSync(bin) ? bin : undefined;
}

export type Step =
  | { exec: string }
  | { execFrom: (lastOutput: string) => string }
  | { spawn: string }
  | { wait: number }
  | { say: string }
  /** An MCP tool call: Codex offers a server's tools as the namespace `mcp__<server>` (measured on 0.171.0). */
  | { mcp: { server: string; tool: string; args: Record<string, unknown> } };

interface Item {
  type: string;
  role?: string;
  content?: { text?: string }[];
  output?: string;
  name?: string;
  call_id?: string;
}

export interface FakeResponses {
  url: string;
  /** Every request body's input, in order. */
  requests: Item[][];
  close(): Promise<void>;
}

/**
 * `script(userText)` gives the steps for the thread whose first user message is `userText` (the parent's prompt, or
 * a subagent's task). `{ wait: n }` waits on the n-th agent the thread spawned (ids from spawn_agent's outputs).
 */
export async function startFakeResponses(script: (userText: string) => Step[]): Promise<FakeResponses> {
  const requests: Item[][] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const input = ((JSON.parse(body) as { input?: Item[] }).input ?? []) as Item[];
      requests.push(input);
      const users = input
        .filter((i) => i.type === 'message' && i.role === 'user')
        .map((i) => (i.content ?? []).map((c) => c.text ?? '').join(''));
      const userText = users.find((t) => /^(PARENT|SUBAGENT)/.test(t)) ?? users[users.length - 1] ?? '';
      const done = input.filter((i) => i.type === 'function_call_output').length;
      const spawned = input
        .filter(
          (i) => i.type === 'function_call_output' && typeof i.output === 'string' && i.output.includes('agent_id'),
        )
        .map((i) => {
          try {
            return (JSON.parse(i.output!) as { agent_id?: string }).agent_id;
          } catch {
            return undefined;
          }
        })
        .filter((x): x is string => !!x);
      const outputs = input
        .filter((i) => i.type === 'function_call_output')
        .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
      const scripted = script(userText)[done] ?? { say: 'done' };
      const step: Exclude<Step, { execFrom: unknown }> =
        'execFrom' in scripted ? { exec: scripted.execFrom(outputs[outputs.length - 1] ?? '') } : scripted;
      const id = `resp_${n++}`;
      const call = `call_${n}`;
      const item =
        'mcp' in step
          ? {
              type: 'function_call',
              call_id: call,
              name: step.mcp.tool,
              namespace: `mcp__${step.mcp.server}`,
              arguments: JSON.stringify(step.mcp.args),
            }
          : 'exec' in step
            ? {
                type: 'function_call',
                call_id: call,
                name: 'exec_command',
                arguments: JSON.stringify({ cmd: step.exec }),
              }
            : 'spawn' in step
              ? {
                  type: 'function_call',
                  call_id: call,
                  name: 'spawn_agent',
                  namespace: 'multi_agent_v1',
                  arguments: JSON.stringify({ message: step.spawn }),
                }
              : 'wait' in step
                ? {
                    type: 'function_call',
                    call_id: call,
                    name: 'wait_agent',
                    namespace: 'multi_agent_v1',
                    arguments: JSON.stringify({ targets: [spawned[step.wait]].filter(Boolean), timeout_ms: 60000 }),
                  }
                : {
                    type: 'message',
                    role: 'assistant',
                    id: `msg_${n}`,
                    content: [{ type: 'output_text', text: step.say }],
                  };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (type: string, o: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`);
      ev('response.created', { response: { id } });
      ev('response.output_item.done', { item });
      ev('response.completed', { response: { id, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } } });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** $CODEX_HOME/config.toml pointing at the fake model. */
export function fakeModelConfig(url: string): string {
  return [
    'model = "fake-model"',
    'model_provider = "fake"',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${url}"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
}

export interface CodexRun {
  status: number | null;
  events: {
    type: string;
    item?: { type?: string; command?: string; aggregated_output?: string; exit_code?: number | null };
  }[];
  stderr: string;
}

/** `codex exec --json` in `cwd`, offline, with no stdin. */
export function runCodexExec(
  bin: string,
  prompt: string,
  o: { cwd: string; env: NodeJS.ProcessEnv; args?: string[]; timeoutMs?: number },
): Promise<CodexRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      bin,
      [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '-s',
        'workspace-write',
        '--disable',
        'plugins',
        ...(o.args ?? []),
        prompt,
      ],
      { cwd: o.cwd, env: withPsql(o.env, { loginShell: true }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      const events = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as CodexRun['events'][number]);
      resolve({ status, events, stderr: err });
    });
  });
}

/** Every tool output the model was sent (a subagent's commands are not in the parent's --json events). */
export const toolOutputsOf = (m: FakeResponses): string[] => [
  ...new Set(
    m.requests.flatMap((input) =>
      input.filter((i) => i.type === 'function_call_output' && typeof i.output === 'string').map((i) => i.output!),
    ),
  ),
];

/** The finished shell commands of a run's own thread, with their output. */
export const commandsOf = (r: CodexRun) =>
  r.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'command_execution').map((e) => e.item!);
