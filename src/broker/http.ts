// The broker's HTTP side (opt-in: `pgx agent install claude --transport http`): Claude Code POSTs a hook's payload
// to 127.0.0.1 and no hook process starts at all. One per user, whatever the project or session: the port and the
// user's secret sit in `<socket dir>/http.json` (0600, in the 0700 directory of protocol.ts socketDir), and the
// settings' entries send the secret as `Authorization: Bearer $PGX_HOOK_SECRET` (Claude Code interpolates it from its
// own environment; decision 221). The answer is the very text `pgx agent hook <event>` prints, from the same
// function (the broker's `work.hook`); what varies per call comes from the request, never from this process.
// Anything it can't vouch for (no secret, a wrong one, a Host that isn't its own, a browser's Origin) gets a 401 and
// no work: with `onFailure: "block"`, Claude Code then blocks a PreToolUse (decision 222).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../lib/fsutil.js';
import { idSchema } from '../engine/identity.js';
import { KeptConnections } from './connections.js';
import { BUILD_ID, forwardedHeader, idleExitMs, MAX_REQUEST_BYTES, socketDir } from './protocol.js';
const REQUEST_VARS = ['CLAUDE_PROJECT_DIR', 'CLAUDE_CODE_SESSION_ID', 'CLAUDE_ENV_FILE', 'AI_AGENT', 'CLAUDECODE'] as const;
type RequestVars = Partial<Record<(typeof REQUEST_VARS)[number], string>>;
import { BROKER_CONNECT_TIMEOUT_MS, collectRequest, runAfterAnswer, watchBroker, type BrokerWork, type RequestContext } from './server.js';

/** The env variable the HTTP entries read the secret from (their `allowedEnvVars`). */
export const SECRET_VAR = 'PGX_HOOK_SECRET';

/**
 * pgx's variables an entry sends as headers (`x-pgx-env-pgx-home: $PGX_HOME`), because they may differ from one
 * session to the next while one broker serves them all; unset ones arrive empty and mean "unset". Not AI_AGENT:
 * Claude Code's own environment has none, or, when it was started from another Claude Code's Bash, that one's; the
 * version comes from what the session's SessionStart command hook recorded (hooks/claude/session-claude-code.ts).
 */
export const FORWARDED_VARS = ['PGX_HOME', 'PGX_HOST', 'PGX_DATABASE_URL', 'PGX_POOL', 'PGX_CONFIG'] as const;

const controlReplySchema = z.object({ pid: z.number(), build: z.string(), node: z.string() });

const stateSchema = z.object({ port: z.number(), secret: z.string().check(z.minLength(32)), pid: z.optional(z.number()), build: z.optional(z.string()), node: z.optional(z.string()) });
export type HttpState = z.infer<typeof stateSchema>;

export function httpStatePath(env: NodeJS.ProcessEnv = process.env, create = false): string | undefined {
  const dir = socketDir(env, create);
  return dir ? join(dir, 'http.json') : undefined;
}

export function readHttpState(env: NodeJS.ProcessEnv = process.env): HttpState | undefined {
  const file = httpStatePath(env);
  if (!file) return undefined;
  try {
    const r = stateSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

function writeHttpState(file: string, state: HttpState): void {
  writeFileAtomic(file, JSON.stringify(state) + '\n', 0o600);
}

/** A free loopback port, as the kernel hands one out. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res, rej) => s.once('error', rej).listen(0, '127.0.0.1', () => res()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

/**
 * This user's port and secret, made once (install, or the first broker): the settings' URL names the port, so it
 * stays; `rotate` makes a new secret (the sessions started before then are refused until restarted).
 */
export async function ensureHttpState(env: NodeJS.ProcessEnv = process.env, rotate = false): Promise<HttpState | undefined> {
  const file = httpStatePath(env, true);
  if (!file) return undefined;
  const had = readHttpState(env);
  if (had && !rotate) return had;
  const state: HttpState = { port: had?.port ?? (await freePort()), secret: randomBytes(32).toString('hex') };
  writeHttpState(file, state);
  return state;
}

/**
 * The whole request must arrive within this: Claude Code writes it at once, on loopback. A client that trickles its
 * headers or body (slowloris) gets a 408 and the connection closed (node checks every second).
 */
export const BODY_TIMEOUT_MS = 10_000;

// The project dir install writes into the entry's URL: one absolute path, no NUL, of a sane length.
const projectSchema = z.string().check(z.minLength(2), z.maxLength(4096), z.regex(/^\/[^\0]*$/));

/**
 * `?project=`: absent, the payload's cwd decides (as for a command hook without CLAUDE_PROJECT_DIR); present, it must
 * be one absolute path, else 'invalid' (400, no work: install never writes anything else).
 */
function projectParam(url: URL): string | undefined | 'invalid' {
  const all = url.searchParams.getAll('project');
  if (all.length === 0) return undefined;
  const r = projectSchema.safeParse(all[0]);
  return all.length === 1 && r.success ? r.data : 'invalid';
}

function secretMatches(header: string | undefined, secret: string): boolean {
  const m = /^Bearer ([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The per-call environment: the broker's own, less everything a request says, plus what this request says. */
function requestEnv(base: NodeJS.ProcessEnv, req: IncomingMessage, payload: Record<string, unknown>, project: string | null): { env: NodeJS.ProcessEnv; vars: RequestVars; cwd: string } {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of FORWARDED_VARS) {
    const v = req.headers[forwardedHeader(k)];
    if (typeof v === 'string' && v !== '') env[k] = v;
  }
  // Claude Code interpolates headers from its own environment, which has no CLAUDE_PROJECT_DIR or session id (they
  // are set for hook processes only; measured, tests/e2e/pgx-http-headers.test.ts): a project's entry names its
  // project in the URL (`?project=`, written by install), and the payload carries the rest.
  const cwd = typeof payload.cwd === 'string' ? payload.cwd : (project ?? '/');
  const vars: RequestVars = { CLAUDE_PROJECT_DIR: project ?? cwd, CLAUDECODE: '1' };
  // What a hook process would get from Claude Code: an id (a NUL can't be in an environment), else nothing.
  if (idSchema.safeParse(payload.session_id).success) vars.CLAUDE_CODE_SESSION_ID = payload.session_id as string;
  return { env: { ...env, ...vars }, vars, cwd };
}

/**
 * The uids listening on 127.0.0.1:<port> (or on every address), from /proc/net/tcp and tcp6 (Linux; elsewhere none
 * are found). The HTTP entries' URL names a fixed port: while this user's broker is down, another user can bind it
 * and would receive the secret (decision 225).
 */
export function portListeners(port: number): number[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const uids = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st … uid: st 0A is LISTEN
      if (f.length < 8 || f[3] !== '0A') continue;
      const [addr, p] = f[1]!.split(':');
      if (p !== hex) continue;
      if (/^(0100007F|00000000|0{32}|0{24}0100007F|0{20}FFFF0000(0100007F|00000000))$/.test(addr!)) uids.add(Number(f[7]));
    }
  }
  return [...uids];
}

export interface Squatted {
  squatted: { port: number; uids: number[]; newPort: number };
}

export interface HttpBrokerHandle {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves this user's HTTP hooks until idle, or until http.json names another broker (a newer build took over).
 * 'running': one of this build and node answers already. A broker of another build or node is asked to stop and
 * replaced on the same port.
 */
export async function serveHttpBroker(opts: { work: Pick<BrokerWork, 'hook'>; onClose?: () => void; idleMs?: number }): Promise<HttpBrokerHandle | 'running' | 'unavailable' | Squatted> {
  const state = await ensureHttpState();
  const file = httpStatePath();
  if (!state || !file) return 'unavailable';
  const other = await askHttpBroker(state, 'status', 1000);
  if (other?.build === BUILD_ID && other.node === process.version) return 'running';
  if (other) await askHttpBroker(state, 'stop', 2000);
  // Someone else holds our port: whatever it received (the secret in every request's header) is burnt. A new port
  // and secret go into http.json, and this broker refuses to start: the installed entries still name the old port,
  // so they must be rewritten (install again), and the user must hear it (the CLI exits 1 with the fix).
  const foreign = portListeners(state.port).filter((u) => u !== process.getuid?.());
  if (foreign.length) {
    const fresh: HttpState = { port: await freePort(), secret: randomBytes(32).toString('hex') };
    writeHttpState(file, fresh);
    return { squatted: { port: state.port, uids: foreign, newPort: fresh.port } };
  }

  const kept = new KeptConnections();
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [...REQUEST_VARS, ...FORWARDED_VARS, SECRET_VAR]) delete base[k];
  const idleMs = opts.idleMs ?? idleExitMs();
  let lastRequest = Date.now();
  let inFlight = 0;
  const host = `127.0.0.1:${state.port}`;

  const send = (res: ServerResponse, code: number, body: string, close = false) => {
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(close ? { connection: 'close' } : {}) });
    res.end(body);
  };
  /** Answered before the body is read, and the connection closed: a request nobody vouches for costs no buffering. */
  const refuse = (req: IncomingMessage, res: ServerResponse, code: number) => {
    send(res, code, '', true);
    res.once('finish', () => req.socket.destroy());
  };

  // A browser page can POST to 127.0.0.1 (and a rebinding DNS name can resolve to it): it sends an Origin, or a Host
  // that isn't this one. Claude Code (axios) sends neither.
  const vouched = (req: IncomingMessage) => req.method === 'POST' && req.headers.host === host && req.headers.origin === undefined && secretMatches(req.headers.authorization, state!.secret);

  async function hook(req: IncomingMessage, res: ServerResponse, event: string, project: string | undefined, body: string): Promise<void> {
    let payload: Record<string, unknown> = {};
    try {
      const p: unknown = JSON.parse(body);
      if (typeof p === 'object' && p !== null && !Array.isArray(p)) payload = p as Record<string, unknown>;
    } catch {
      // not JSON: the hook's own parser says what it says (the same answer a command hook gives)
    }
    const { env, cwd } = requestEnv(base, req, payload, project ?? null);
    const later: (() => void)[] = [];
    const ctx: RequestContext = { env, reuse: kept, connectWaitMs: BROKER_CONNECT_TIMEOUT_MS, afterAnswer: (fn) => void later.push(fn) };
    const answer = await opts.work.hook({ op: 'hook', fp: '', fpm: '', event, stdin: body, cwd, env: env as Record<string, string> }, ctx);
    // A hook's answer, or nothing; a `fallback` (the broker can't do it) is a failure, so PreToolUse blocks.
    if ('fallback' in answer || !('ok' in answer) || !answer.ok) send(res, 500, '');
    else send(res, 200, 'print' in answer && answer.print !== undefined ? answer.print : '');
    setImmediate(() => runAfterAnswer(later));
  }

  const server: Server = createServer({ requestTimeout: BODY_TIMEOUT_MS, headersTimeout: BODY_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, (req, res) => {
    req.on('error', () => {});
    if (!vouched(req)) return refuse(req, res, 401);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/status') return send(res, 200, JSON.stringify({ pid: process.pid, build: BUILD_ID, node: process.version, in_flight: inFlight }));
    if (url.pathname === '/stop') {
      send(res, 200, '{}');
      return void setImmediate(() => void close());
    }
    const m = /^\/hook\/([a-z-]+)$/.exec(url.pathname);
    // SessionStart is never sent over HTTP (Claude Code skips it); an unknown event is the work's to refuse (a 500).
    if (!m || m[1] === 'session-start') return refuse(req, res, 404);
    const project = projectParam(url);
    if (project === 'invalid') return refuse(req, res, 400);
    if (Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BYTES) return refuse(req, res, 413);
    collectRequest(
      req,
      (body) => {
        inFlight++;
        lastRequest = Date.now();
        hook(req, res, m[1]!, project, body.toString('utf8'))
          .catch(() => {
            if (!res.headersSent) send(res, 500, '');
          })
          .finally(() => {
            inFlight--;
            lastRequest = Date.now();
          });
      },
      () => refuse(req, res, 413),
    );
  });
  await new Promise<void>((res, rej) => server.once('error', rej).listen(state.port, '127.0.0.1', () => res()));
  writeHttpState(file, { ...state, pid: process.pid, build: BUILD_ID, node: process.version });

  let closing: Promise<void> | undefined;
  const ours = () => readHttpState()?.pid === process.pid;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      clearInterval(tick);
      server.closeAllConnections();
      await new Promise<void>((res) => server.close(() => res()));
      await kept.closeAll();
      opts.onClose?.();
    })());
  const tick = watchBroker({ kept, reachable: ours, idle: () => inFlight === 0 && Date.now() - lastRequest >= idleMs, idleMs, close });
  return { port: state.port, close };
}

/** One control request (status or stop) to the user's HTTP broker; undefined when none answers with our secret. */
export async function askHttpBroker(state: HttpState, what: 'status' | 'stop', timeoutMs: number): Promise<{ pid: number; build: string; node: string } | undefined> {
  try {
    const r = await fetch(`http://127.0.0.1:${state.port}/${what}`, { method: 'POST', headers: { authorization: `Bearer ${state.secret}` }, signal: AbortSignal.timeout(timeoutMs) });
    if (r.status !== 200) return undefined;
    const reply = controlReplySchema.safeParse(await r.json());
    return reply.success ? reply.data : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the state file (uninstall): the next broker or install makes a new port and secret. */
export function forgetHttpState(env: NodeJS.ProcessEnv = process.env): void {
  const file = httpStatePath(env);
  if (file) rmSync(file, { force: true });
}
