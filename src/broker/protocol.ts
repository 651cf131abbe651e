// The broker: one resident pgx process per user (decision 442), which the per-event hook processes and the routed
// `agent exec` hand their work to over a unix socket, so that each of those processes loads one small file instead
// of pg, zod, the config parser and the engine, and logs in to no server (docs/pgx/local-dev/decisions/187-broker.md).
//
// This module is what both sides share, and the client side loads it on every hook: node built-ins only.
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:net';
import { dirname, isAbsolute, join } from 'node:path';

declare const __PGX_BUILD_ID__: string | undefined;
/** Set by scripts/build.mjs; a client never talks to a broker of another build. */
export const BUILD_ID: string = typeof __PGX_BUILD_ID__ === 'string' ? __PGX_BUILD_ID__ : 'dev';

export function brokerDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(0|off|false|no)$/i.test(env.PGX_BROKER ?? '');
}

/**
 * What a broker must share with its client: the build, node, the launcher and the user. Nothing of the environment:
 * one broker serves every environment of its user (PG*, PGX_*, HOME…), and each request carries the requester's
 * whole environment, which the work reads instead of the broker's own (decision 442).
 */
export function environmentMaterial(_env: NodeJS.ProcessEnv, launcher: string): string {
  return JSON.stringify([BUILD_ID, process.version, launcher, process.getuid?.() ?? -1]);
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

/** The longest socket directory a broker's socket name (`b-<24 hex>.sock`) still fits under (MAX_SOCKET_PATH). */
export const MAX_SOCKET_DIR = 68;

/**
 * Where this user's broker sockets live (undefined: Windows), in this order (decision 443; bin/pgx.js's sh part
 * computes the same):
 *  - $XDG_RUNTIME_DIR/pgx: the login's own runtime directory, 0700, made by the system;
 *  - <$TMPDIR, $TMP or $TEMP>/pgx-<uid>, when one is set: the user chose that temporary directory;
 *  - $HOME/.pgx/run, when it fits a socket path: nobody else can create a file in a home directory first;
 *  - /tmp/pgx-<uid>: anyone may make that name first, and then it is refused loudly (socketDirState).
 */
export function socketDirPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined; // Windows: no unix sockets of this kind
  if (env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR)) return join(env.XDG_RUNTIME_DIR, 'pgx');
  const tmp = env.TMPDIR || env.TMP || env.TEMP;
  if (tmp && isAbsolute(tmp)) return join(tmp, `pgx-${uid}`);
  const home = env.HOME && isAbsolute(env.HOME) ? join(env.HOME, '.pgx', 'run') : undefined;
  if (home && Buffer.byteLength(home) <= MAX_SOCKET_DIR) return home;
  return `/tmp/pgx-${uid}`;
}

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

/**
 * Why this user's broker can't be used here, when the reason is one to say out loud: its socket directory exists
 * but is not private (another user made that name first, it is a link, or it is open to others). Undefined when the
 * broker is off, missing (made on first use) or fine.
 */
export function socketDirProblem(
  env: NodeJS.ProcessEnv = process.env,
): { dir: string; owner: number | undefined } | undefined {
  if (brokerDisabled(env)) return undefined;
  const dir = socketDirPath(env);
  if (!dir || socketDirState(dir) !== 'not-private') return undefined;
  let owner: number | undefined;
  try {
    owner = lstatSync(dir).uid;
  } catch {
    // gone since: its owner unknown
  }
  return { dir, owner };
}

/**
 * The exact command that gives this user's broker a directory nobody else can have made first, for the shell the
 * agent is started from (its hooks inherit the variable): when another user owns the socket directory. A fresh
 * `mktemp -d` directory is 0700 and named at random, so it can't be made first, and short enough for a socket path
 * whatever HOME is. "unset TMPDIR" is given only where it works: when $HOME/.pgx/run fits a socket path (decision 454).
 */
export function socketDirFix(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR))
    return 'export XDG_RUNTIME_DIR="$(mktemp -d /tmp/pgx-run.XXXXXX)"';
  const home = env.HOME && isAbsolute(env.HOME) ? join(env.HOME, '.pgx', 'run') : undefined;
  if ((env.TMPDIR || env.TMP || env.TEMP) && home && Buffer.byteLength(home) <= MAX_SOCKET_DIR)
    return 'unset TMPDIR TMP TEMP';
  return 'export TMPDIR="$(mktemp -d /tmp/pgx-run.XXXXXX)"';
}

/** What to say to a user whose socket directory another user owns: the command, where to run it, whom to tell. */
export function socketDirFixHint(owner: number | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const fix = socketDirFix(env);
  const then = fix.startsWith('unset') ? 'pgx then uses $HOME/.pgx/run' : 'a new private directory of yours';
  return (
    `In the shell you start your agent from, run \`${fix}\` (${then}), then start the agent again from it; ` +
    `tell whoever runs uid ${owner ?? '?'}.`
  );
}

/** The socket directory when it is private (made 0700 first with `create`), else undefined: no broker. */
export function socketDir(env: NodeJS.ProcessEnv = process.env, create = false): string | undefined {
  const dir = socketDirPath(env);
  if (!dir) return undefined;
  let state = socketDirState(dir);
  if (state === 'missing' && create) {
    try {
      // $HOME/.pgx/run: its parent (~/.pgx, PGX_HOME's default) is made 0700 too, as pgx makes it everywhere
      mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
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

/** A requester's environment, as it sends it: every variable, for the work to read instead of the broker's own. */
export type RequestEnv = Record<string, string>;

export function requestEnv(env: NodeJS.ProcessEnv): RequestEnv {
  const out: RequestEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** Every request carries the client's environment material (`fpm`), which the broker compares with its own. */
export type BrokerRequest =
  | { op: 'hook'; fp: string; fpm: string; event: string; stdin: string; cwd: string; env: RequestEnv }
  /** A routed exec: a subagent's (`agent`), or a Codex session's own (`session`, which fails open: decision 205). */
  | ({
      op: 'exec';
      fp: string;
      fpm: string;
      cwdFlag?: string;
      cwd: string;
      env: RequestEnv;
      command: string[];
      pid?: number;
    } & ({ agent: string; session?: undefined } | { session: string; agent?: undefined }))
  | { op: 'status'; fp: string; fpm: string }
  | { op: 'stop'; fp: string; fpm: string };

export type BrokerResponse =
  /** A hook's answer: what to print (nothing when undefined). */
  | { ok: true; print?: string }
  /**
   * An exec's: the command's whole environment (and a warning to print first: a branch made now with the template in
   * place of the session's state). A session's that could not be routed: its own, and the warning to print.
   */
  | { ok: true; env: Record<string, string>; branch: string; warning?: string }
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
  /** Server connections it keeps open now (KeptConnections), across every environment it serves. */
  pooled_connections: number;
  /** The most it keeps open at once (KEPT_LIMIT): past it, a request's connection closes after the request. */
  pool_limit: number;
  /** How many servers (host, port, role, database) those connections go to. */
  pooled_servers: number;
  /** Its resident memory, bytes (process.memoryUsage.rss). */
  rss_bytes: number;
}

/** A request bigger than this is not kept whole (a hook payload is at most 1 MiB; an environment a few KB). */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** Idle this long (no request), the broker exits. PGX_BROKER_IDLE_MS overrides. */
export function idleExitMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.PGX_BROKER_IDLE_MS);
  return Number.isFinite(v) && v > 0 ? v : 10 * 60 * 1000;
}
