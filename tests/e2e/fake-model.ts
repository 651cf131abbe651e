/**
 * A scripted fake of the Anthropic Messages API, good enough to drive the real Claude Code
 * CLI (pinned 2.1.328) offline in end-to-end tests.
 *
 * The CLI only ever calls `POST /v1/messages?beta=true` with `stream: true`. Every request
 * carries the whole conversation, so this fake is (almost) stateless: it decides what to
 * answer purely from the request body.
 *
 * - Parent conversation: on the first request after a real user prompt, it answers with ONE
 *   assistant message holding one `Agent` tool_use per scripted subagent (several Agent calls
 *   in one message start the subagents in parallel). Afterwards (tool_results such as "Async
 *   agent launched", task-notification prompts, which arrive as `<system-reminder>` user text)
 *   it answers with plain text, end_turn. "After the latest real prompt" rather than "first
 *   request ever" so that a `--resume`d session, whose history already holds Agent calls,
 *   launches the scripted subagents again for its new prompt.
 * - Subagent conversation: recognised by its system prompt (`cc_is_subagent=true`) or by the
 *   `[[pgx-e2e:<marker>]]` tag that the parent put in its prompt. Its step is the number of
 *   tool_result blocks it has received; step k < commands.length → a `Bash` tool_use running
 *   commands[k]; otherwise end_turn text "done <marker>".
 *
 * Why not detect the subagent purely by "marker anywhere in messages": once the parent has
 * launched the agents, the parent's own history contains every marker too (in its Agent
 * tool_use inputs), so the parent would be mistaken for a subagent. We therefore only look for
 * the marker in *user-authored text* of a conversation that has not itself called Agent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A step of a script: a Bash command, or any other tool call (an MCP tool, ToolSearch, Monitor) with its input. */
export type Step = string | { tool: string; input: Record<string, unknown> };

export interface SubagentScript {
  /** Unique, [A-Za-z0-9_.-]+ ; embedded in the subagent's prompt as `[[pgx-e2e:<marker>]]`. */
  marker: string;
  /** What the subagent runs, one per model turn, in order: Bash commands, or other tool calls. */
  commands: Step[];
  /** Agent tool `description` (defaults to `e2e <marker>`). */
  description?: string;
  /** Agent tool `subagent_type`: an agent defined in the project's .claude/agents/ (defaults to general-purpose). */
  subagentType?: string;
  /** Started by a parent's Workflow script (`agent('[[pgx-e2e:<marker>]] …')`), not by its Agent call. */
  viaWorkflow?: boolean;
}

export interface FakeScript {
  subagents: SubagentScript[];
  /** Default true (omit `run_in_background`, which defaults to true in 2.1.328); false → synchronous agents. */
  background?: boolean;
  /** Debugging aid: write every request body to `<dumpDir>/<nnn>-<kind>.json`. */
  dumpDir?: string;
  /**
   * Bash commands the PARENT runs after each real prompt, one per model turn, before it launches the subagents
   * (counted from the latest real prompt, so a `--resume`d session runs them again for its new prompt).
   */
  parentCommands?: Step[];
  /** Bash commands the PARENT runs after its subagents were launched (foreground: after they finished), one per turn. */
  parentCommandsAfter?: Step[];
  /**
   * Awaited before the first request is answered: e.g. until Claude Code has connected the MCP servers, which `-p`
   * mode connects in the background (a subagent that starts first does not see their tools).
   */
  beforeFirst?: () => Promise<void>;
}

export interface FakeModel {
  url: string;
  port: number;
  close(): Promise<void>;
  /** Number of POST /v1/messages requests answered. */
  requests: number;
  /** Per marker: the text of every Bash tool_result that subagent received, in order. */
  toolResults: Map<string, string[]>;
  /** Every tool_result text the parent received (e.g. "Async agent launched…"), in order. */
  parentTexts: string[];
  /** The text of every Bash tool_result of the parent's own commands (FakeScript.parentCommands), in order. */
  parentBashResults: string[];
  /** Anything unexpected: unknown paths, bad bodies, unknown markers. Tests should assert it is empty. */
  errors: string[];
  /**
   * marker → the CLI's agent id (the `agent_id` of SubagentStart/PreToolUse/SubagentStop hook
   * payloads), read from the parent's "agentId: …" tool_results and task notifications.
   * Lets a test tie hook-log lines to the scripted subagent.
   */
  agentIds: Map<string, string>;
  /** Task-notification texts the parent received (background agents), in order. */
  notifications: string[];
  /** One entry per answered request, in arrival order; handy when a test fails. */
  log: FakeRequestLog[];
}

export interface FakeRequestLog {
  kind: 'parent' | 'subagent';
  marker?: string;
  /** parent: 0 = the first request (agents launched), 1 = any later one; subagent: the step. */
  step: number;
  /** What was answered: a tool name ("Agent"×n / "Bash") or "text". */
  answer: string;
}

/** The tag put into each subagent prompt; the marker is captured by group 1. */
export const markerTag = (marker: string): string => `[[pgx-e2e:${marker}]]`;
const MARKER_RE = /\[\[pgx-e2e:([A-Za-z0-9_.-]+)\]\]/;

// --- Minimal shapes of the request body we read (everything else is ignored). ---
interface ContentBlock {
  type?: string;
  text?: string;
  name?: string;
  id?: string;
  tool_use_id?: string;
  content?: unknown;
  input?: unknown;
}
interface Message {
  role?: string;
  content?: unknown;
}
interface MessagesRequest {
  model?: string;
  stream?: boolean;
  system?: unknown;
  messages?: Message[];
}

/** Content of a message or tool_result as a block array (a plain string becomes one text block). */
function blocks(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content)) return content.filter((b): b is ContentBlock => typeof b === 'object' && b !== null);
  return [];
}

/** All text of a content value (string, or text blocks; non-text blocks skipped). */
function textOf(content: unknown): string {
  return blocks(content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

/** `system` may be a string or an array of text blocks. */
function systemText(system: unknown): string {
  return textOf(system);
}

interface ToolResult {
  id: string;
  text: string;
}

function toolResultsOf(messages: Message[]): ToolResult[] {
  const out: ToolResult[] = [];
  for (const m of messages) {
    for (const b of blocks(m.content)) {
      if (b.type === 'tool_result') out.push({ id: String(b.tool_use_id ?? ''), text: textOf(b.content) });
    }
  }
  return out;
}

function hasAssistantToolUse(messages: Message[], name?: string): boolean {
  return messages.some(
    (m) => m.role === 'assistant' && blocks(m.content).some((b) => b.type === 'tool_use' && (!name || b.name === name)),
  );
}

const isReminder = (text: string): boolean => text.trimStart().startsWith('<system-reminder>');

/**
 * Index of the message holding the latest real user prompt: user text that is not a
 * `<system-reminder>` (the CLI wraps attribution notes and task notifications in those).
 */
function lastPromptIndex(messages: Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    if (m.role !== 'user') continue;
    // A message carrying a tool_result is the tool's answer (ToolSearch adds the text "Tool loaded." to it), not a prompt.
    if (blocks(m.content).some((b) => b.type === 'tool_result')) continue;
    if (blocks(m.content).some((b) => b.type === 'text' && typeof b.text === 'string' && !isReminder(b.text))) return i;
  }
  return -1;
}

/** First marker in user-authored text (user/system roles; tool_results excluded), if any. */
function findMarker(messages: Message[]): string | undefined {
  for (const m of messages) {
    if (m.role === 'assistant') continue;
    const hit = MARKER_RE.exec(textOf(m.content));
    if (hit) return hit[1];
  }
  return undefined;
}

// --- Response construction ---
type OutBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

const toolId = (): string => `toolu_${randomBytes(12).toString('hex')}`;

/** A step as a tool_use block: a string is a Bash command. */
function stepBlock(step: Step, id: string, description: string): OutBlock {
  return typeof step === 'string'
    ? { type: 'tool_use', id, name: 'Bash', input: { command: step, description } }
    : { type: 'tool_use', id, name: step.tool, input: step.input };
}
const stepName = (step: Step): string => (typeof step === 'string' ? 'Bash' : step.tool);

/** Write one assistant message as Messages-API server-sent events. */
function writeSse(res: ServerResponse, model: string, content: OutBlock[], stopReason: 'tool_use' | 'end_turn'): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': `req_${randomBytes(8).toString('hex')}`,
  });
  const send = (event: string, data: unknown): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
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
      usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: block.text },
      });
    } else {
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 20 },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

/** Same message, non-streaming (the CLI always streams; this is only a fallback). */
function writeJson(res: ServerResponse, model: string, content: OutBlock[], stopReason: 'tool_use' | 'end_turn'): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: `msg_${randomBytes(12).toString('hex')}`,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 20 },
    }),
  );
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeModel(script: FakeScript): Promise<FakeModel> {
  const byMarker = new Map<string, SubagentScript>();
  for (const s of script.subagents) {
    if (!/^[A-Za-z0-9_.-]+$/.test(s.marker)) throw new Error(`bad marker ${JSON.stringify(s.marker)}`);
    if (byMarker.has(s.marker)) throw new Error(`duplicate marker ${s.marker}`);
    byMarker.set(s.marker, s);
  }
  const background = script.background ?? true;

  const toolResults = new Map<string, string[]>(script.subagents.map((s) => [s.marker, []]));
  const parentTexts: string[] = [];
  const parentBashResults: string[] = [];
  const parentCommands = script.parentCommands ?? [];
  // Our parent Bash tool_use ids, to tell their results apart from Agent results.
  const parentBashIds = new Set<string>();
  const notifications: string[] = [];
  const agentIds = new Map<string, string>();
  // Our Agent tool_use id → marker, to map "agentId: …" tool_results back to a subagent.
  const agentToolUse = new Map<string, string>();
  const errors: string[] = [];
  const log: FakeRequestLog[] = [];
  // Each request resends the whole history; remember which tool_results/notifications were
  // already recorded so that every one is recorded once, in arrival order.
  const seenToolResults = new Set<string>();
  const seenNotifications = new Set<string>();

  const agentToolId = (marker: string): string => {
    const id = toolId();
    agentToolUse.set(id, marker);
    return id;
  };

  const record = (target: string[], results: ToolResult[]): void => {
    for (const r of results) {
      const key = r.id || r.text;
      if (seenToolResults.has(key)) continue;
      seenToolResults.add(key);
      target.push(r.text);
    }
  };

  /** Decide the assistant reply for one request body. */
  const answer = (body: MessagesRequest): { content: OutBlock[]; stop: 'tool_use' | 'end_turn' } => {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const isSubagentSystem = systemText(body.system).includes('cc_is_subagent=true');
    // A conversation that launched agents is the parent, whatever markers its history holds.
    const marker = hasAssistantToolUse(messages, 'Agent') ? undefined : findMarker(messages);

    if (marker !== undefined || isSubagentSystem) {
      const sub = marker !== undefined ? byMarker.get(marker) : undefined;
      if (!sub) {
        errors.push(`subagent request with ${marker ? `unknown marker ${marker}` : 'no marker'}`);
        return { content: [{ type: 'text', text: 'unknown subagent' }], stop: 'end_turn' };
      }
      const results = toolResultsOf(messages);
      record(toolResults.get(sub.marker) as string[], results);
      const step = results.length;
      if (step < sub.commands.length) {
        log.push({ kind: 'subagent', marker: sub.marker, step, answer: stepName(sub.commands[step]!) });
        return { content: [stepBlock(sub.commands[step]!, toolId(), `step ${step}`)], stop: 'tool_use' };
      }
      log.push({ kind: 'subagent', marker: sub.marker, step, answer: 'text' });
      return { content: [{ type: 'text', text: `done ${sub.marker}` }], stop: 'end_turn' };
    }

    // Parent.
    const results = toolResultsOf(messages);
    for (const r of results) {
      if (parentBashIds.has(r.id) && !seenToolResults.has(r.id)) parentBashResults.push(r.text);
    }
    for (const r of results) {
      const marker = agentToolUse.get(r.id);
      const id = /agentId: ([A-Za-z0-9_-]+)/.exec(r.text)?.[1];
      if (marker && id) agentIds.set(marker, id);
    }
    record(parentTexts, results);
    for (const m of messages) {
      if (m.role !== 'user') continue;
      for (const b of blocks(m.content)) {
        const text = b.type === 'text' && typeof b.text === 'string' ? b.text : '';
        if (!text.includes('<task-notification>') || seenNotifications.has(text)) continue;
        seenNotifications.add(text);
        notifications.push(text);
        const marker = agentToolUse.get(/<tool-use-id>([^<]+)<\/tool-use-id>/.exec(text)?.[1] ?? '');
        const id = /<task-id>([^<]+)<\/task-id>/.exec(text)?.[1];
        if (marker && id && !agentIds.has(marker)) agentIds.set(marker, id);
      }
    }
    const prompt = lastPromptIndex(messages);
    // The parent's own steps: every tool call of its but the Agent launches.
    const ownCalls = (from: number) =>
      messages
        .slice(from)
        .filter((m) => m.role === 'assistant')
        .reduce((n, m) => n + blocks(m.content).filter((b) => b.type === 'tool_use' && b.name !== 'Agent').length, 0);
    const bashSincePrompt = ownCalls(prompt + 1);
    if (bashSincePrompt < parentCommands.length) {
      const id = toolId();
      parentBashIds.add(id);
      const step = parentCommands[bashSincePrompt]!;
      log.push({ kind: 'parent', step: 0, answer: stepName(step) });
      return { content: [stepBlock(step, id, `parent step ${bashSincePrompt}`)], stop: 'tool_use' };
    }
    const launched = messages
      .slice(prompt + 1)
      .some(
        (m) => m.role === 'assistant' && blocks(m.content).some((b) => b.type === 'tool_use' && b.name === 'Agent'),
      );
    const byAgent = script.subagents.filter((s) => !s.viaWorkflow);
    if (!launched && byAgent.length > 0) {
      log.push({ kind: 'parent', step: 0, answer: `Agent×${byAgent.length}` });
      return {
        content: byAgent.map((s) => ({
          type: 'tool_use' as const,
          id: agentToolId(s.marker),
          name: 'Agent',
          input: {
            description: s.description ?? `e2e ${s.marker}`,
            prompt: `${markerTag(s.marker)} Run the scripted commands for ${s.marker}.`,
            subagent_type: s.subagentType ?? 'general-purpose',
            ...(background ? {} : { run_in_background: false }),
          },
        })),
        stop: 'tool_use',
      };
    }
    const after = script.parentCommandsAfter ?? [];
    if (launched && after.length) {
      const lastAgent = messages
        .map((m, i) =>
          m.role === 'assistant' && blocks(m.content).some((b) => b.type === 'tool_use' && b.name === 'Agent') ? i : -1,
        )
        .reduce((a, b) => Math.max(a, b), -1);
      const bashAfter = ownCalls(lastAgent + 1);
      if (bashAfter < after.length) {
        const id = toolId();
        parentBashIds.add(id);
        const step = after[bashAfter]!;
        log.push({ kind: 'parent', step: 2, answer: stepName(step) });
        return { content: [stepBlock(step, id, `parent after ${bashAfter}`)], stop: 'tool_use' };
      }
    }
    log.push({ kind: 'parent', step: 1, answer: 'text' });
    return { content: [{ type: 'text', text: 'All subagents finished.' }], stop: 'end_turn' };
  };

  const model: FakeModel = {
    url: '',
    port: 0,
    requests: 0,
    toolResults,
    parentTexts,
    parentBashResults,
    errors,
    agentIds,
    notifications,
    log,
    close: () => Promise.resolve(),
  };

  let waitedFirst: Promise<void> | undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    // Connectivity probes (HEAD/GET on the root) are harmless: answer them without noise.
    if ((method === 'HEAD' || method === 'GET') && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(method === 'HEAD' ? undefined : 'fake model');
      return;
    }
    if (method !== 'POST' || url.pathname !== '/v1/messages') {
      errors.push(`unexpected ${method} ${req.url ?? ''}`);
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not found' } }));
      return;
    }
    readBody(req)
      .then(async (raw) => {
        if (script.beforeFirst) {
          waitedFirst ??= script.beforeFirst();
          await waitedFirst;
        }
        let body: MessagesRequest;
        try {
          body = JSON.parse(raw) as MessagesRequest;
        } catch {
          errors.push(`invalid JSON body: ${raw.slice(0, 200)}`);
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad json' } }));
          return;
        }
        model.requests++;
        const { content, stop } = answer(body);
        if (script.dumpDir) {
          mkdirSync(script.dumpDir, { recursive: true });
          const last = log[log.length - 1];
          const tag = last ? `${last.kind}${last.marker ? `-${last.marker}` : ''}-${last.step}` : 'unknown';
          writeFileSync(join(script.dumpDir, `${String(model.requests).padStart(3, '0')}-${tag}.json`), raw);
        }
        const name = typeof body.model === 'string' ? body.model : 'claude-fake';
        if (body.stream === false) writeJson(res, name, content, stop);
        else writeSse(res, name, content, stop);
      })
      .catch((err: unknown) => {
        errors.push(`request failed: ${String(err)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  model.port = port;
  model.url = `http://127.0.0.1:${port}`;
  model.close = () =>
    new Promise<void>((resolve) => {
      // The CLI keeps connections alive; drop them so close() does not hang on a killed client.
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return model;
}

/** Poll `cond` every 25 ms until it is true; reject after `timeoutMs` with `what` in the message. */
export async function waitFor(cond: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
