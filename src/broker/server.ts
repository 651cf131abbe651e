// The broker's server side: `pgx agent broker serve`, started detached by SessionStart or by the first hook that
// finds none (client.ts). It carries requests: it reads them, checks they come from its own build and launcher, and hands
// a hook or a routed exec to the work its command wires in (entries/broker-work.ts: the very code a hook process or a
// routed `agent exec` runs in-process), with the requester's per-call variables and the registry connections it
// keeps open between requests. It imports no hook, CLI or exec code. It holds no state a request depends on:
// killed at any moment, the next hook finds no broker and does the work itself.
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import * as z from 'zod/mini';
import type { ConnectionReuse } from '../engine/api.js';
import { describeError } from '../lib/errors.js';
import { idSchema } from '../engine/identity.js';
import { brokerAddress, askBroker, startingMarker, type BrokerAddress } from './client.js';
import { KeptConnections } from './connections.js';
import {
  BUILD_ID,
  idleExitMs,
  listenInPlace,
  MAX_REQUEST_BYTES,
  type BrokerResponse,
  type BrokerStatus,
  type RequestEnv,
} from './protocol.js';
import { serveShellLauncher, shellSocketPath, type ParseExec } from './shell-launcher.js';

/** How long a connection attempt may wait for the server's accept (a burst of SubagentStarts); each hook's own
 * deadline still bounds its whole answer. PGX_CONNECT_TIMEOUT_MS or a URL's connect_timeout win over it. */
export const BROKER_CONNECT_TIMEOUT_MS = 15_000;

/**
 * A request's bytes, up to MAX_REQUEST_BYTES: past it `onTooBig` runs (the HTTP side answers 413), else the stream
 * is destroyed; either way `onEnd` never runs.
 */
export function collectRequest(
  stream: NodeJS.ReadableStream & { destroy(): void },
  onEnd: (body: Buffer) => void,
  onTooBig: () => void = () => stream.destroy(),
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  stream.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > MAX_REQUEST_BYTES) {
      over = true;
      chunks.length = 0;
      onTooBig();
    } else chunks.push(c);
  });
  stream.on('end', () => {
    if (!over) onEnd(Buffer.concat(chunks));
  });
}

/** Work a hook need not wait for (starting the pool filler), run once its answer is sent: best effort, as in a hook process. */
export function runAfterAnswer(fns: readonly (() => void)[]): void {
  for (const fn of fns) {
    try {
      fn();
    } catch {
      // best effort, as in a hook process
    }
  }
}

/**
 * A broker's watch: sweeps its kept connections, and closes it once nobody can reach it (`reachable` false: replaced)
 * or once it has been idle for idleMs. Returns the timer, for close() to clear.
 */
export function watchBroker(w: {
  kept: KeptConnections;
  reachable: () => boolean;
  idle: () => boolean;
  idleMs: number;
  close: () => Promise<void>;
}): NodeJS.Timeout {
  return setInterval(
    () => {
      w.kept.sweep();
      if (!w.reachable()) void w.close();
      else if (w.idle()) void w.close();
    },
    Math.max(50, Math.min(w.idleMs / 4, 15_000)),
  );
}

const env = z.record(z.string(), z.string());
const id = { fp: z.string(), fpm: z.string() };
const requestSchema = z.union([
  z.object({ op: z.literal('hook'), ...id, event: z.string(), stdin: z.string(), cwd: z.string(), env }),
  // a subagent's routed exec (agent) or a Codex session's own (session): exactly one of them
  // pid: the launcher asking, whose process tree the routing judges and records (exec/routed-ancestry.ts)
  z.object({
    op: z.literal('exec'),
    ...id,
    agent: idSchema,
    cwdFlag: z.optional(z.string()),
    cwd: z.string(),
    env,
    command: z.array(z.string()).check(z.minLength(1)),
    pid: z.optional(z.number()),
  }),
  z.object({
    op: z.literal('exec'),
    ...id,
    session: idSchema,
    cwdFlag: z.optional(z.string()),
    cwd: z.string(),
    env,
    command: z.array(z.string()).check(z.minLength(1)),
    pid: z.optional(z.number()),
  }),
  // Anyone of this user may ask any of its brokers how it is, or stop it (`agent broker status|stop` from a terminal
  // whose environment differs from the hooks'): the socket's name is enough.
  z.object({ op: z.literal('status'), fp: z.string(), fpm: z.optional(z.string()) }),
  z.object({ op: z.literal('stop'), fp: z.string(), fpm: z.optional(z.string()) }),
]);
type Request = z.infer<typeof requestSchema>;
export type HookRequest = Extract<Request, { op: 'hook' }>;
export type ExecRequest = Extract<Request, { op: 'exec' }>;

/** What a request runs with: the requester's environment, the kept connections, and the broker's connect wait. */
export interface RequestContext {
  env: NodeJS.ProcessEnv;
  reuse: ConnectionReuse;
  /** How long a connection attempt may wait (ConnParams.connectWaitMs). */
  connectWaitMs: number;
  /** Work a hook need not wait for: run once its answer is sent. */
  afterAnswer(fn: () => void): void;
}

/** The work the broker hands requests to, wired in by its command. */
export interface BrokerWork {
  hook(req: HookRequest, ctx: RequestContext): Promise<BrokerResponse>;
  exec(req: ExecRequest, ctx: RequestContext): Promise<BrokerResponse>;
  /** The rewrite's `agent exec --agent …` argv form (exec-argv.ts), for the shell launcher's requests (shell-launcher.ts). */
  parseExec: ParseExec;
  /**
   * May the launcher running as `pid` speak for a hook? No inside a routed command (a forged SubagentStop would retire
   * another agent's branch: exec/routed-ancestry.ts); refused, its node fallback says why and exits 6.
   */
  hookAllowed(pid: number): boolean;
}

export interface BrokerHandle {
  address: BrokerAddress;
  close(): Promise<void>;
  status(): BrokerStatus;
}

/**
 * Serves until idle (no request for PGX_BROKER_IDLE_MS), stopped, or replaced (another broker's socket took the
 * name). Resolves 'running' at once when a broker for this environment already answers, 'unavailable' when there is
 * no private socket directory.
 */
export async function serveBroker(opts: {
  launcher: string;
  work: BrokerWork;
  onClose?: () => void;
}): Promise<BrokerHandle | 'running' | 'unavailable'> {
  const found = brokerAddress(process.env, opts.launcher, true);
  if (!found) return 'unavailable';
  const address: BrokerAddress = found;
  if ((await askBroker(address, { op: 'status' }, 1000)).answer) {
    rmSync(startingMarker(address), { force: true });
    return 'running';
  }
  const kept = new KeptConnections();
  const startedAt = new Date();
  const idleMs = idleExitMs();
  let requests = 0;
  let inFlight = 0;
  let lastRequest = Date.now();
  let closing: Promise<void> | undefined;

  // Each request's environment is the requester's, whole, from the request alone: one broker serves every environment
  // of its user (PG*, PGX_HOME, PGX_DATABASE_URL…), and its own environment is only the one it happened to start in.
  const contextOf = (e: RequestEnv): RequestContext => ({
    env: { ...e },
    reuse: kept,
    connectWaitMs: BROKER_CONNECT_TIMEOUT_MS,
    afterAnswer: later,
  });

  const status = (): BrokerStatus => ({
    pid: process.pid,
    fingerprint: address.fp,
    build: BUILD_ID,
    started_at: startedAt.toISOString(),
    requests,
    in_flight: inFlight,
    idle_exit_ms: idleMs,
    pooled_connections: kept.size,
    pool_limit: kept.limit,
    pooled_servers: kept.servers,
    rss_bytes: process.memoryUsage.rss(),
  });

  // Work a hook need not wait for (starting the pool filler: a fork of this process): run once its answer is sent.
  let afterSend: (() => void)[] = [];
  const later = (fn: () => void) => void afterSend.push(fn);
  const runLater = () => {
    const fns = afterSend;
    afterSend = [];
    runAfterAnswer(fns);
  };

  async function respond(req: Request): Promise<BrokerResponse> {
    // status and stop: any client of this user may ask any broker in its socket directory (`broker stop`, uninstall)
    if (req.op !== 'status' && req.op !== 'stop' && (req.fp !== address.fp || req.fpm !== address.fpm))
      return { fallback: 'another build or launcher' };
    switch (req.op) {
      case 'status':
        return { ok: true, status: status() };
      case 'stop':
        setImmediate(() => void close());
        return { ok: true, status: status() };
      case 'hook':
        return opts.work.hook(req, contextOf(req.env));
      case 'exec':
        return opts.work.exec(req, contextOf(req.env));
    }
  }

  /** A request's answer, whichever socket it came in on. */
  const answerOf = (raw: unknown): Promise<BrokerResponse> => {
    const r = requestSchema.safeParse(raw);
    return (r.success ? respond(r.data) : Promise.resolve<BrokerResponse>({ fallback: 'unreadable request' })).catch(
      (e: unknown): BrokerResponse => ({ fallback: `broker error: ${describeError(e).message}` }),
    );
  };

  function onConnection(sock: Socket): void {
    sock.on('error', () => {}); // a client that went away: nothing to answer
    collectRequest(sock, (body) => {
      requests++;
      inFlight++;
      lastRequest = Date.now();
      let raw: unknown;
      try {
        raw = JSON.parse(body.toString('utf8'));
      } catch {
        // not JSON: unreadable, answered below
      }
      void answerOf(raw).then((a) => {
        inFlight--;
        lastRequest = Date.now();
        if (!sock.destroyed) sock.end(JSON.stringify(a) + '\n', () => setImmediate(runLater));
        else setImmediate(runLater);
      });
    });
  }

  // Half-open: the client ends its side after the request, and the answer still goes back on ours.
  const server: Server = createServer({ allowHalfOpen: true }, onConnection);
  const ours = await listenInPlace(server, address.path);
  // The shell launcher's socket (shell-launcher.ts): the same answers, asked by curl from bin/pgx.js's sh part.
  const shell = await serveShellLauncher({
    path: shellSocketPath(address.dir, address.fp),
    fp: address.fp,
    fpm: address.fpm,
    parseExec: opts.work.parseExec,
    hookAllowed: opts.work.hookAllowed,
    respond: (req) => {
      requests++;
      inFlight++;
      lastRequest = Date.now();
      return answerOf(req).finally(() => {
        inFlight--;
        lastRequest = Date.now();
        setImmediate(runLater);
      });
    },
  }).catch(() => undefined); // no shell socket: every launcher execs node, as before
  rmSync(startingMarker(address), { force: true });

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      clearInterval(tick);
      await Promise.all([new Promise<void>((res) => server.close(() => res())), shell?.close()]);
      if (ours()) rmSync(address.path, { force: true });
      await kept.closeAll();
      opts.onClose?.();
    })());
  // ours() false: replaced, or its socket removed: nobody can reach it any more.
  const tick = watchBroker({
    kept,
    reachable: ours,
    idle: () => inFlight === 0 && Date.now() - lastRequest >= idleMs,
    idleMs,
    close,
  });
  return { address, close, status };
}
