// The front's message routing: Claude Code talks to one MCP server per session and shares it with every subagent; pgx's
// front is that server, and behind it runs a copy of the user's own server per branch. Each `tools/call` goes to the
// copy of the branch of the agent that made it (calls.ts: the hook's record, found by `_meta["claudecode/toolUseId"]`);
// everything else (initialize, the tool list, resources, prompts, pings) to the session's copy, the parent's.
//
// Ids are rewritten both ways: a request forwarded to a copy gets the copy's own next id, a copy's request to the client
// (roots/list, elicitation) a front id, and the answers go back under the id their asker used. A `tools/call` pgx
// can't route (no record, no branch, a copy that can't start) is answered by the front itself with an error result
// the model reads (isError: true), so it knows why and what to do; it never reaches any database.
import type { JsonRpc } from './child-server.js';
import type { CallRecord } from './calls.js';

/** One running copy of the user's server, for one branch. */
export interface Copy {
  readonly branch: string;
  readonly startedAt: number;
  send(msg: JsonRpc): void;
}

/** Whose branch a call goes to: a subagent's, or (agent_id null) the session's own, the parent's. */
export type Whose = Pick<CallRecord, 'session_id' | 'agent_id'>;

export interface RelayDeps {
  toClient(msg: JsonRpc): void;
  /** The running copy for the session's branch, or a new one (started and initialised with `init`). */
  sessionCopy(init: unknown): Promise<Copy>;
  /** The running copy for this agent's branch, or a new one. */
  copyFor(whose: Whose, init: unknown): Promise<Copy>;
  /** The hook's record of a tool call, taken. */
  takeCall(toolUseId: unknown): CallRecord | undefined;
  /** This front's server name, and its project: a record for another is not this front's. */
  server: string;
  projectDir: string;
  log(line: string): void;
}

type Id = string | number;
const idKey = (id: Id) => `${typeof id}:${id}`;
const isId = (v: unknown): v is Id => typeof v === 'string' || typeof v === 'number';

/** A tool result the model reads as an error, with pgx's reason. */
export function errorResult(id: Id, text: string): JsonRpc {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } };
}

/** Marks the answer made up for a request its copy never answered. */
const GONE = 'pgx:gone';

const rpcError = (id: Id, code: number, message: string): JsonRpc => ({ jsonrpc: '2.0', id, error: { code, message } });

/** Notifications only the session's copy passes on (every copy lists the same tools; one voice is enough). */
const SESSION_ONLY = /^notifications\/(tools|resources|prompts)\/list_changed$|^notifications\/resources\/updated$/;

export class Relay {
  private init: unknown;
  private readonly nextId = new WeakMap<Copy, number>();
  /** Per copy: its request id → what to do with the answer. */
  private readonly awaiting = new Map<Copy, Map<Id, (msg: JsonRpc) => void>>();
  /** The client's request id → where it went (for notifications/cancelled). */
  private readonly forwarded = new Map<string, { copy: Copy; id: Id }>();
  /** A copy's request to the client, by the front id it was sent under. */
  private readonly asked = new Map<string, { copy: Copy; id: Id }>();
  private frontIds = 0;
  private readonly copies = new Set<Copy>();
  private readonly initAnswers = new WeakMap<Copy, JsonRpc>();

  constructor(private readonly deps: RelayDeps) {}

  /** A message from Claude Code. */
  async fromClient(msg: JsonRpc): Promise<void> {
    const { id, method } = msg;
    if (typeof method !== 'string') {
      // the client's answer to a copy's request
      const to = isId(id) ? this.asked.get(idKey(id)) : undefined;
      if (to) {
        this.asked.delete(idKey(id as Id));
        to.copy.send({ ...msg, id: to.id });
      }
      return;
    }
    if (!isId(id)) return this.notification(method, msg);
    try {
      if (method === 'initialize') {
        this.init = msg.params;
        // The session's copy was initialised with these very parameters when it started: its answer is the front's.
        const copy = await this.deps.sessionCopy(this.init);
        const answer = this.initAnswers.get(copy);
        return this.deps.toClient(
          answer ? { ...answer, id } : rpcError(id, -32603, 'the server gave no initialize answer'),
        );
      }
      if (this.init === undefined)
        return this.deps.toClient(rpcError(id, -32601, `no method ${method} before initialize`));
      if (method === 'tools/call') return await this.toolCall(msg, id);
      return this.forward(await this.deps.sessionCopy(this.init), msg, id);
    } catch (e) {
      const why = (e as Error).message;
      this.deps.log(`${method}: ${why}`);
      this.deps.toClient(method === 'tools/call' ? errorResult(id, why) : rpcError(id, -32603, why));
    }
  }

  private async toolCall(msg: JsonRpc, id: Id): Promise<void> {
    const params = (msg.params ?? {}) as { _meta?: Record<string, unknown>; name?: unknown };
    const toolUseId = params._meta?.['claudecode/toolUseId'];
    const rec = this.deps.takeCall(toolUseId);
    if (!rec || rec.server !== this.deps.server || rec.project_dir !== this.deps.projectDir) {
      this.deps.log(`tools/call ${String(params.name)}: no record for ${String(toolUseId)}: refused`);
      return this.deps.toClient(
        errorResult(
          id,
          `pgx refused this call to the MCP server "${this.deps.server}": its PreToolUse hook did not record which ` +
            `agent made it, so pgx can't tell whose database branch it belongs on (a call it can't place reaches no ` +
            `database). Check that pgx's hooks are installed (\`pgx agent doctor\`); meanwhile use Bash, where psql ` +
            `reaches your own branch.`,
        ),
      );
    }
    const copy = await this.deps.copyFor(rec, this.init);
    this.forward(copy, msg, id);
  }

  private notification(method: string, msg: JsonRpc): void {
    if (method === 'notifications/initialized') return; // each copy got its own, after its own initialize
    if (method === 'notifications/cancelled') {
      const rid = (msg.params as { requestId?: unknown } | undefined)?.requestId;
      const to = isId(rid) ? this.forwarded.get(idKey(rid)) : undefined;
      if (to) to.copy.send({ ...msg, params: { ...(msg.params as object), requestId: to.id } });
      return;
    }
    for (const copy of this.copies) copy.send(msg);
  }

  /**
   * Sends a client request to `copy` under the copy's own id; its answer goes back under the client's. A copy that
   * ended first answers a tool call with an error result (the model reads why), anything else with a JSON-RPC error.
   */
  private forward(copy: Copy, msg: JsonRpc, clientId: Id): void {
    const copyId = this.request(copy, msg, (answer) => {
      this.forwarded.delete(idKey(clientId));
      const gone = answer[GONE];
      if (typeof gone === 'string' && msg.method === 'tools/call')
        return this.deps.toClient(
          errorResult(
            clientId,
            `pgx: the copy of "${this.deps.server}" for branch ${copy.branch} ${gone}; retry the call.`,
          ),
        );
      const { [GONE]: _, ...rest } = answer;
      this.deps.toClient({ ...rest, id: clientId });
    });
    this.forwarded.set(idKey(clientId), { copy, id: copyId });
  }

  private request(copy: Copy, msg: JsonRpc, onAnswer: (msg: JsonRpc) => void): Id {
    const copyId = this.nextId.get(copy) ?? 1;
    this.nextId.set(copy, copyId + 1);
    this.awaiting.get(copy)!.set(copyId, onAnswer);
    copy.send({ ...msg, id: copyId });
    return copyId;
  }

  /** A new copy: its initialize (the client's own parameters), then its initialized notification. */
  async handshake(copy: Copy, init: unknown): Promise<JsonRpc> {
    this.copies.add(copy);
    this.awaiting.set(copy, new Map());
    const answer = await new Promise<JsonRpc>((res) =>
      this.request(copy, { jsonrpc: '2.0', method: 'initialize', params: init }, res),
    );
    if (answer.error) throw new Error(`its initialize failed: ${JSON.stringify(answer.error).slice(0, 300)}`);
    copy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    this.initAnswers.set(copy, answer);
    return answer;
  }

  /** A message from a copy. */
  fromCopy(copy: Copy, msg: JsonRpc, isSession: boolean): void {
    const { id, method } = msg;
    if (typeof method !== 'string') {
      const waiting = isId(id) ? this.awaiting.get(copy)?.get(id) : undefined;
      if (waiting) {
        this.awaiting.get(copy)!.delete(id as Id);
        waiting(msg);
      }
      return;
    }
    if (isId(id)) {
      // the copy asks the client (roots/list, elicitation, ping): under a front id, answered back to it
      const frontId = `pgx-${++this.frontIds}`;
      this.asked.set(idKey(frontId), { copy, id });
      return this.deps.toClient({ ...msg, id: frontId });
    }
    if (SESSION_ONLY.test(method) && !isSession) return;
    if (method === 'notifications/cancelled') {
      const rid = (msg.params as { requestId?: unknown } | undefined)?.requestId;
      const front = [...this.asked].find(([, v]) => v.copy === copy && v.id === rid)?.[0];
      if (front === undefined) return;
      return this.deps.toClient({
        ...msg,
        params: { ...(msg.params as object), requestId: front.slice(front.indexOf(':') + 1) },
      });
    }
    this.deps.toClient(msg);
  }

  /** A copy that ended (retired, crashed): what it still owed is answered with the reason. */
  copyGone(copy: Copy, why: string): void {
    this.copies.delete(copy);
    const waiting = this.awaiting.get(copy);
    this.awaiting.delete(copy);
    for (const [id, answer] of waiting ?? [])
      answer({ jsonrpc: '2.0', id, error: { code: -32000, message: `pgx: the server ${why}` }, [GONE]: why });
    for (const [k, v] of this.asked) if (v.copy === copy) this.asked.delete(k);
  }
}
