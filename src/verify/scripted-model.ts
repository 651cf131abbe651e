// A scripted stand-in for the Anthropic Messages API on 127.0.0.1, so `pgx agent verify claude` drives the user's
// own Claude Code offline: no account, no network, no tokens. Ported from the e2e tests' fake (tests/e2e/fake-model.ts),
// trimmed to what the probe needs. Facts it relies on (Claude Code 2.1.328, -p mode): the CLI only calls
// `POST /v1/messages?beta=true` with `stream: true` and the whole conversation; several `Agent` tool_use blocks in one
// assistant message start subagents in parallel; a subagent is told apart by the marker its prompt carries.
//
// - The parent: after the user's prompt it runs its scripted Bash commands one per turn, then launches one Agent per
//   scripted subagent (all in one message), then answers plain text to everything else (completion notices).
// - A subagent: its step is the number of tool_results it has received; it runs commands[step], then says done.
// Every Bash tool_result is recorded: that text is how the probe reads Claude Code's decision on each command.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface ScriptedSubagent {
  /** [A-Za-z0-9_.-]+, embedded in the subagent's prompt. */
  marker: string;
  commands: string[];
}

export interface ModelScript {
  subagents: ScriptedSubagent[];
  parentCommands?: string[];
}

export interface ScriptedModel {
  url: string;
  /** Per marker: the text of each Bash tool_result that subagent received, in order. */
  toolResults: Map<string, string[]>;
  /** The parent's own Bash tool_results, in order. */
  parentBashResults: string[];
  /** Anything unexpected (unknown paths, bad bodies, unknown markers): a probe run with errors proves nothing. */
  errors: string[];
  close(): Promise<void>;
}

const markerTag = (marker: string): string => `[[pgx-verify:${marker}]]`;
const MARKER_RE = /\[\[pgx-verify:([A-Za-z0-9_.-]+)\]\]/;

interface Block {
  type?: string;
  text?: string;
  name?: string;
  id?: string;
  tool_use_id?: string;
  content?: unknown;
}
interface Message {
  role?: string;
  content?: unknown;
}

function blocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === 'object' && b !== null) : [];
}

function textOf(content: unknown): string {
  return blocks(content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

const toolResultsOf = (messages: Message[]) =>
  messages.flatMap((m) =>
    blocks(m.content)
      .filter((b) => b.type === 'tool_result')
      .map((b) => ({ id: String(b.tool_use_id ?? ''), text: textOf(b.content) })),
  );

const calledTool = (m: Message, name: string) =>
  m.role === 'assistant' && blocks(m.content).some((b) => b.type === 'tool_use' && b.name === name);

/** The latest real user prompt: user text that is not a `<system-reminder>` (notices arrive as those). */
function lastPromptIndex(messages: Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (
      m.role === 'user' &&
      blocks(m.content).some(
        (b) => b.type === 'text' && typeof b.text === 'string' && !b.text.trimStart().startsWith('<system-reminder>'),
      )
    )
      return i;
  }
  return -1;
}

/** The marker in user-authored text of a conversation that has not launched agents itself (the parent's history holds every marker). */
function markerOf(messages: Message[]): string | undefined {
  if (messages.some((m) => calledTool(m, 'Agent'))) return undefined;
  for (const m of messages) {
    if (m.role === 'assistant') continue;
    const hit = MARKER_RE.exec(textOf(m.content));
    if (hit) return hit[1];
  }
  return undefined;
}

type Out =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
const toolId = () => `toolu_${randomBytes(12).toString('hex')}`;

function writeSse(res: ServerResponse, model: string, content: Out[], stop: 'tool_use' | 'end_turn'): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': `req_${randomBytes(8).toString('hex')}`,
  });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  send('message_start', {
    type: 'message_start',
    message: {
      id: `msg_${randomBytes(12).toString('hex')}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  content.forEach((b, index) => {
    if (b.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
      });
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 20 },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startScriptedModel(script: ModelScript): Promise<ScriptedModel> {
  const byMarker = new Map(script.subagents.map((s) => [s.marker, s]));
  const parentCommands = script.parentCommands ?? [];
  const toolResults = new Map<string, string[]>(script.subagents.map((s) => [s.marker, []]));
  const parentBashResults: string[] = [];
  const parentBashIds = new Set<string>();
  const seen = new Set<string>();
  const errors: string[] = [];

  const answer = (body: {
    messages?: Message[];
    system?: unknown;
  }): { content: Out[]; stop: 'tool_use' | 'end_turn' } => {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const marker = markerOf(messages);
    const results = toolResultsOf(messages);
    if (marker !== undefined || textOf(body.system).includes('cc_is_subagent=true')) {
      const sub = marker === undefined ? undefined : byMarker.get(marker);
      if (!sub) {
        errors.push(`subagent request with ${marker ? `unknown marker ${marker}` : 'no marker'}`);
        return { content: [{ type: 'text', text: 'unknown subagent' }], stop: 'end_turn' };
      }
      for (const r of results) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        toolResults.get(sub.marker)!.push(r.text);
      }
      const step = results.length;
      if (step < sub.commands.length)
        return {
          content: [
            {
              type: 'tool_use',
              id: toolId(),
              name: 'Bash',
              input: { command: sub.commands[step], description: `step ${step}` },
            },
          ],
          stop: 'tool_use',
        };
      return { content: [{ type: 'text', text: `done ${sub.marker}` }], stop: 'end_turn' };
    }
    for (const r of results) {
      if (!parentBashIds.has(r.id) || seen.has(r.id)) continue;
      seen.add(r.id);
      parentBashResults.push(r.text);
    }
    const since = messages.slice(lastPromptIndex(messages) + 1);
    const bashRun = since.filter((m) => calledTool(m, 'Bash')).length;
    if (bashRun < parentCommands.length) {
      const id = toolId();
      parentBashIds.add(id);
      return {
        content: [
          {
            type: 'tool_use',
            id,
            name: 'Bash',
            input: { command: parentCommands[bashRun], description: `parent step ${bashRun}` },
          },
        ],
        stop: 'tool_use',
      };
    }
    if (!since.some((m) => calledTool(m, 'Agent')) && script.subagents.length > 0) {
      return {
        content: script.subagents.map((s) => ({
          type: 'tool_use' as const,
          id: toolId(),
          name: 'Agent',
          // In the background, Claude Code's default: -p waits for each completion notice (answered with text below).
          input: {
            description: `probe ${s.marker}`,
            prompt: `${markerTag(s.marker)} Run the scripted commands.`,
            subagent_type: 'general-purpose',
          },
        })),
        stop: 'tool_use',
      };
    }
    return { content: [{ type: 'text', text: 'All subagents finished.' }], stop: 'end_turn' };
  };

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if ((req.method === 'HEAD' || req.method === 'GET') && path === '/') {
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      errors.push(`unexpected ${req.method} ${req.url ?? ''}`);
      req.resume();
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not found' } }));
      return;
    }
    readBody(req)
      .then((raw) => {
        let body: { model?: unknown; messages?: Message[]; system?: unknown };
        try {
          body = JSON.parse(raw) as typeof body;
        } catch {
          errors.push('a request body that is not JSON');
          res.writeHead(400).end();
          return;
        }
        const { content, stop } = answer(body);
        writeSse(res, typeof body.model === 'string' ? body.model : 'claude-probe', content, stop);
      })
      .catch((e: unknown) => {
        errors.push(`request failed: ${String(e)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    toolResults,
    parentBashResults,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // the CLI keeps connections alive
        server.close(() => resolve());
      }),
  };
}
