// The broker: one resident pgx process per user and environment, which the per-event hook processes and the routed
// `agent exec` hand their work to over a unix socket, so that each of those processes loads one small file instead
// of pg, zod, the config parser and the engine, and logs in to no server (docs/pgx/local-dev/decisions/187-broker.md).
//
// This module is what both sides share, and the client side loads it on every hook: node built-ins only.
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

declare const __PGX_BUILD_ID__: string | undefined;
/** Set by scripts/build.mjs; a client never talks to a broker of another build. */
export const BUILD_ID: string = typeof __PGX_BUILD_ID__ === 'string' ? __PGX_BUILD_ID__ : 'dev';

/**
 * Variables a request carries, because they differ from one hook or command to the next within the same user's
 * environment (Claude Code gives hooks AI_AGENT=…_harness and Bash commands …_agent). The broker reads them from
 * the request and never from its own environment.
 */
export const REQUEST_VARS = ['CLAUDE_PROJECT_DIR', 'CLAUDE_CODE_SESSION_ID', 'CLAUDE_ENV_FILE', 'AI_AGENT', 'CLAUDECODE'] as const;

/**
 * Every other variable pgx's code reads, directly or through libraries: a broker serves only clients whose values
 * of all of them equal its own (they are in the socket's name), so the broker's process.env is theirs.
 */
const ENVIRONMENT_NAMES = new Set(['HOME', 'USER', 'LOGNAME', 'SHELL', 'CLAUDE_CODE_SHELL', 'PATH', 'TMPDIR', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'DEBUG', 'NO_COLOR', 'TERM', 'LANG']);
const ENVIRONMENT_PREFIXES = /^(PGX_|PG[A-Z]|XDG_|LC_)/;

export function brokerDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(0|off|false|no)$/i.test(env.PGX_BROKER ?? '');
}

/** What a broker must share with its client: the build, node, the launcher, the user and those variables. */
export function environmentMaterial(env: NodeJS.ProcessEnv, launcher: string): string {
  const vars = Object.keys(env)
    .filter((k) => ENVIRONMENT_NAMES.has(k) || ENVIRONMENT_PREFIXES.test(k))
    .sort()
    .map((k) => [k, env[k]]);
  return JSON.stringify([BUILD_ID, process.version, launcher, process.getuid?.() ?? -1, vars]);
}

/**
 * The socket's name for that material: 96 bits of three FNV-1a hashes (node:crypto alone costs a hook ~7 ms to
 * load). It only picks the socket: every request carries the material itself, and the broker serves only an exact
 * match, so a collision costs a fallback, never another environment's answer.
 */
export function socketKey(material: string): string {
  let out = '';
  for (const seed of [0x811c9dc5, 0x01000193, 0x9e3779b9]) {
    let h = seed >>> 0;
    for (let i = 0; i < material.length; i++) h = Math.imul(h ^ material.charCodeAt(i), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out;
}

/** Where this user's broker sockets live: $XDG_RUNTIME_DIR/pgx, else <tmpdir>/pgx-<uid> (undefined: Windows). */
export function socketDirPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined; // Windows: no unix sockets of this kind
  return env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? join(env.XDG_RUNTIME_DIR, 'pgx') : join(tmpdir(), `pgx-${uid}`);
}

/** The header an HTTP entry sends a forwarded variable in (`PGX_HOME` → `x-pgx-env-pgx-home`): install writes it, the HTTP broker reads it. */
export const forwardedHeader = (name: string): string => `x-pgx-env-${name.toLowerCase().replaceAll('_', '-')}`;

/**
 * Binds `server` (the broker's socket, or the shell launcher's) at `path` under a name of its own, then renames it
 * into place, mode 0600: a client never connects to a half-made socket, and a stale socket file left by a killed
 * broker is simply replaced. Returns whether the file at `path` is still this one (not a newer broker's, not removed).
 */
export async function listenInPlace(server: Server, path: string): Promise<() => boolean> {
  const tmp = `${path}.${process.pid}`;
  rmSync(tmp, { force: true });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(tmp, () => res());
  });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  const ino = statSync(path).ino;
  return () => {
    try {
      return statSync(path).ino === ino;
    } catch {
      return false;
    }
  };
}

/** Is that directory usable: a real directory (not a link) of this user's that no one else can enter? */
export function socketDirState(dir: string): 'private' | 'missing' | 'not-private' {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0 ? 'private' : 'not-private';
  } catch {
    return 'missing';
  }
}

/** The socket directory when it is private (made 0700 first with `create`), else undefined: no broker. */
export function socketDir(env: NodeJS.ProcessEnv = process.env, create = false): string | undefined {
  const dir = socketDirPath(env);
  if (!dir) return undefined;
  let state = socketDirState(dir);
  if (state === 'missing' && create) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch {
      // another process made it first: judged below like any other
    }
    state = socketDirState(dir);
  }
  return state === 'private' ? dir : undefined;
}

/** A unix socket path must fit sun_path (104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 100;

export function socketPath(dir: string, fp: string): string | undefined {
  const p = join(dir, `b-${fp}.sock`);
  return Buffer.byteLength(p) <= MAX_SOCKET_PATH ? p : undefined;
}

export type RequestVars = Partial<Record<(typeof REQUEST_VARS)[number], string>>;

export function requestVars(env: NodeJS.ProcessEnv): RequestVars {
  const vars: RequestVars = {};
  for (const k of REQUEST_VARS) if (env[k] !== undefined) vars[k] = env[k];
  return vars;
}

/** Every request carries the client's environment material (`fpm`), which the broker compares with its own. */
export type BrokerRequest =
  | { op: 'hook'; fp: string; fpm: string; event: string; stdin: string; cwd: string; vars: RequestVars }
  /** A routed exec: a subagent's (`agent`), or a Codex session's own (`session`, which fails open: decision 205). */
  | ({ op: 'exec'; fp: string; fpm: string; cwdFlag?: string; cwd: string; vars: RequestVars; env: Record<string, string>; command: string[]; pid?: number } & ({ agent: string; session?: undefined } | { session: string; agent?: undefined }))
  | { op: 'status'; fp: string; fpm: string }
  | { op: 'stop'; fp: string; fpm: string };

export type BrokerResponse =
  /** A hook's answer: what to print (nothing when undefined). */
  | { ok: true; print?: string }
  /** An exec's: the command's whole environment. A session's that could not be routed: its own, and the warning to print. */
  | { ok: true; env: Record<string, string>; branch: string }
  | { ok: true; env: Record<string, string>; branch: null; warning: string }
  /** An exec the CLI would refuse: its error text and exit code. */
  | { ok: false; stderr: string; exitCode: number }
  /** Not the broker's to answer (another build, a request it can't read): the client does the work itself. */
  | { fallback: string }
  | { ok: true; status: BrokerStatus };

export interface BrokerStatus {
  pid: number;
  /** The socket key (socketKey): named `fingerprint` in `agent broker status --json`, as cli.md documents. */
  fingerprint: string;
  build: string;
  started_at: string;
  requests: number;
  in_flight: number;
  idle_exit_ms: number;
  pooled_connections: number;
}

/** Idle this long (no request), the broker exits. PGX_BROKER_IDLE_MS overrides. */
export function idleExitMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.PGX_BROKER_IDLE_MS);
  return Number.isFinite(v) && v > 0 ? v : 10 * 60 * 1000;
}
