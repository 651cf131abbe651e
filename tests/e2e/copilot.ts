/**
 * The real GitHub Copilot CLI (installed by scripts/install-copilot.sh, pinned there) for end-to-end tests, driven
 * offline by a scripted fake OpenAI chat-completions endpoint on 127.0.0.1 (/work/shared/copilot-cli.md):
 * - with COPILOT_PROVIDER_BASE_URL set (and COPILOT_OFFLINE), the CLI POSTs {base}/chat/completions, stream: true,
 *   and reads SSE `data: {chat.completion.chunk}` lines up to `data: [DONE]`;
 * - the shell tool is `bash {command, description}`; a subagent is the `task` tool;
 * - a subagent's conversation starts with the task's prompt as its user message.
 * The script is stateless: each request says who asks (the parent's prompt, or a subagent's prompt) and how far it got
 * (the tool results it carries).
 *
 * The package's binary extracts ~235 MB into $XDG_CACHE_HOME/copilot on its first run. The tests point that cache at
 * tests/e2e/.copilot-cli/cache (git-ignored, beside the binary, filled once by scripts/install-copilot.sh), never at a
 * test's temp dir: one extraction per machine, not per run (docs/pgx/local-dev/decisions/474-copilot-e2e.md).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withPsql } from '../helpers/psql-stand-in.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const PINNED_COPILOT = /^PINNED="([0-9.]+)"$/m.exec(
  readFileSync(join(HERE, '..', '..', 'scripts', 'install-copilot.sh'), 'utf8'),
)![1]!;
export const COPILOT_PREFIX = join(HERE, '.copilot-cli');
/** Where the binary unpacks itself (XDG_CACHE_HOME for every run): in the git-ignored prefix, shared by all runs. */
export const COPILOT_CACHE = join(COPILOT_PREFIX, 'cache');

/** The native binary scripts/install-copilot.sh installed, or undefined (the tests then skip and say why). */
export function findCopilotBinary(): string | undefined {
  if (process.env.PGX_COPILOT_BIN)
    return existsSync(process.env.PGX_COPILOT_BIN) ? process.env.PGX_COPILOT_BIN : undefined;
  const bin = join(COPILOT_PREFIX, 'node_modules', '@github', 'copilot-linux-x64', 'copilot');
  return existsSync(bin) ? bin : undefined;
}

export type Step =
  | { bash: string }
  | { task: string }
  | { say: string }
  /** An MCP tool call: Copilot names a server's tool `<server>-<tool>` (measured on 1.0.102). */
  | { mcp: { name: string; args: Record<string, unknown> } };

interface Message {
  role: string;
  content?: string | { type?: string; text?: string }[] | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface FakeChat {
  url: string;
  /** Every request's messages, in order. */
  requests: Message[][];
  /** The tool definitions of the first request (names and parameter schemas). */
  tools: unknown[];
  close(): Promise<void>;
}

const textOf = (m: Message): string =>
  typeof m.content === 'string'
    ? m.content
    : Array.isArray(m.content)
      ? m.content.map((c) => c.text ?? '').join('')
      : '';

/** The text of every tool result the model was sent (a subagent's too), once per tool call, in order. */
export function toolResultsOf(m: FakeChat, from = 0): string[] {
  const byCall = new Map<string, string>();
  for (const msgs of m.requests.slice(from))
    for (const x of msgs)
      if (x.role === 'tool' && !byCall.has(x.tool_call_id ?? '')) byCall.set(x.tool_call_id ?? '', textOf(x));
  return [...byCall.values()];
}

/**
 * `script(userText)` gives the steps for the conversation whose first scripted user message is `userText` (the
 * parent's prompt starts with PARENT, a subagent's with SUBAGENT). Step k answers the request that carries k tool
 * results.
 */
export async function startFakeChat(script: (userText: string) => Step[]): Promise<FakeChat> {
  const requests: Message[][] = [];
  let tools: unknown[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const parsed = (() => {
        try {
          return JSON.parse(body) as { messages?: Message[]; tools?: unknown[] };
        } catch {
          return {};
        }
      })();
      const messages = parsed.messages ?? [];
      if (!tools.length && parsed.tools) tools = parsed.tools;
      requests.push(messages);
      const users = messages.filter((m) => m.role === 'user').map(textOf);
      const userText =
        users.map((t) => /(PARENT|SUBAGENT)[^\n]*/.exec(t)?.[0]).find(Boolean) ?? users[users.length - 1] ?? '';
      const done = messages.filter((m) => m.role === 'tool').length;
      const step = script(userText)[done] ?? { say: 'done' };
      const id = `chatcmpl-${n++}`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null) =>
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'gpt-4.1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      if ('say' in step) {
        chunk({ role: 'assistant', content: step.say }, null);
        chunk({}, 'stop');
      } else {
        const call =
          'mcp' in step
            ? { name: step.mcp.name, arguments: JSON.stringify(step.mcp.args) }
            : 'bash' in step
              ? { name: 'bash', arguments: JSON.stringify({ command: step.bash, description: 'run it' }) }
              : {
                  name: 'task',
                  arguments: JSON.stringify({
                    description: 'a scripted subagent',
                    prompt: step.task,
                    agent_type: 'general-purpose',
                    name: `sub${n}`,
                  }),
                };
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: call }],
          },
          null,
        );
        chunk({}, 'tool_calls');
      }
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}/v1`,
    requests,
    get tools() {
      return tools;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * The environment of an offline run: the fake model, no GitHub login, no update check, the cache in the prefix, and
 * Copilot's own state (COPILOT_HOME, HOME) in `home`, a directory of the test's.
 */
export function copilotEnv(base: NodeJS.ProcessEnv, url: string, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PROVIDER_BASE_URL: url,
    COPILOT_PROVIDER_API_KEY: 'x',
    COPILOT_MODEL: 'gpt-4.1',
    COPILOT_HOME: join(home, '.copilot'),
    HOME: home,
    XDG_CACHE_HOME: COPILOT_CACHE,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(home, '.state'),
  };
  for (const k of Object.keys(env))
    if (k.startsWith('GITHUB_') || k === 'GH_TOKEN' || k === 'COPILOT_ALLOW_ALL') delete env[k];
  return env;
}

export interface CopilotRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `copilot -p <prompt> <args>` in `cwd`, no stdin. */
export function runCopilot(
  bin: string,
  prompt: string,
  o: { cwd: string; env: NodeJS.ProcessEnv; args?: string[]; timeoutMs?: number },
): Promise<CopilotRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      bin,
      ['-p', prompt, '--no-auto-update', '--disable-builtin-mcps', '--no-custom-instructions', ...(o.args ?? [])],
      { cwd: o.cwd, env: withPsql(o.env), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout: out, stderr: err });
    });
  });
}
