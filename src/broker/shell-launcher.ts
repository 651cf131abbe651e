// The broker's side of the shell launcher (bin/pgx.js is a sh/JS polyglot; decision 230): for the rewrite's exact
// `agent exec --agent <id> --cwd <dir> -- …`, the `#!/bin/sh` part of bin/pgx.js asks the broker with
// `curl --unix-socket <dir>/h-<key>.sock http://pgx/exec?pid=$$&build=<id>&agent=<id>&cwd=<dir>` instead of starting node, evals the
// answer and execs the command, so the command replaces the launcher (status and signals are its own).
//
// The request carries the launcher's pid (and its agent id and --cwd, to be checked): its argv, environment and working directory are read from
// /proc/<pid> (same user: the socket is 0600 in the private directory), exactly what the node client would have
// sent. From there it is the socket's exec request, checked by the same schema and answered by the same `respond`
// (the environment-material check, then BrokerWork.exec: exec.ts route(), ticket check included); this module only
// turns the answer into sh. Nothing secret goes into an argv: the password reaches the shell through curl's stdout
// and `eval`, a builtin.
//
// Any doubt (not Linux, another build, another environment, an argv that is not the rewrite's form, a name sh can't
// export) answers 409 and the launcher execs node, which does what it does without this (decision 187).
import { readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { shellQuote } from '../lib/shell.js';
import { BUILD_ID, environmentMaterial, listenInPlace, requestVars, socketDirState, type BrokerResponse } from './protocol.js';

/** The argv form the launcher's sh part takes: what exec-argv.ts parseRoutedExec gives (wired in by the broker's command). */
// The session form (a Codex parent's `--session`, decision 205) is parsed too, but the sh part sends only `--agent`.
export type ParseExec = (argv: string[]) => { agent?: string; session?: string; cwd?: string; command: string[] } | undefined;

/** The exec request the socket would have received, or why there is none (the launcher then execs node). */
export type ShellExecRequest = { op: 'exec'; fp: string; fpm: string; agent: string; cwdFlag?: string; cwd: string; vars: Record<string, string>; env: Record<string, string>; command: string[]; pid: number };

/** `<dir>/h-<key>.sock`: the launcher tries every such socket of its socket directory (bin/pgx.js). */
export function shellSocketPath(dir: string, fp: string): string {
  return join(dir, `h-${fp}.sock`);
}

/** Marks the end of an answer: a cut-off answer is never evaluated (bin/pgx.js checks for it). */
export const SCRIPT_END = '# pgx: end';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function nulList(file: string): string[] {
  const parts = readFileSync(file, 'utf8').split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/** What the node client would have sent for the launcher running as `pid`, read from /proc. */
export function requestOfPid(pid: number, parseExec: ParseExec, fp: string): ShellExecRequest | string {
  let argv: string[];
  let env: Record<string, string>;
  let cwd: string;
  try {
    argv = nulList(`/proc/${pid}/cmdline`);
    env = {};
    for (const kv of nulList(`/proc/${pid}/environ`)) {
      const i = kv.indexOf('=');
      if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    cwd = readlinkSync(`/proc/${pid}/cwd`);
    realpathSync(cwd); // a deleted working directory reads as "<dir> (deleted)": the node exec says what it says
  } catch {
    return 'no such process';
  }
  // argv[0] is the shell the kernel ran for the `#!/bin/sh` line, argv[1] the launcher.
  const launcherArg = argv[1];
  if (launcherArg === undefined) return 'not a launcher';
  const routed = parseExec(argv.slice(2));
  if (!routed || routed.agent === undefined) return 'not the rewrite form';
  let launcher: string;
  try {
    launcher = env.PGX_LAUNCHER || realpathSync(launcherArg);
  } catch {
    return 'not a launcher';
  }
  return { op: 'exec', fp, fpm: environmentMaterial(env, launcher), agent: routed.agent, cwdFlag: routed.cwd, cwd, vars: requestVars(env), env, command: routed.command, pid };
}

/**
 * The sh the launcher evaluates: the variables to unset and export so that its environment becomes exactly `next`,
 * or the refusal's text and exit code. Undefined when sh can't express it (a variable name it can't export).
 */
export function answerScript(answer: BrokerResponse, from: Record<string, string>): string | undefined {
  if (!('ok' in answer)) return undefined;
  if (!answer.ok) return `printf '%s' ${shellQuote(answer.stderr)} >&2\nexit ${answer.exitCode}\n${SCRIPT_END}`;
  if (!('env' in answer)) return undefined;
  const next = answer.env;
  const lines: string[] = [];
  const gone = Object.keys(from).filter((k) => !(k in next));
  const changed = Object.keys(next).filter((k) => from[k] !== next[k]);
  if (![...gone, ...changed].every((k) => NAME.test(k))) return undefined;
  if (gone.length) lines.push(`unset ${gone.join(' ')}`);
  for (const k of changed) lines.push(`export ${k}=${shellQuote(next[k]!)}`);
  lines.push(SCRIPT_END);
  return lines.join('\n');
}

/**
 * Listens for the launcher on `path` (bound under a temporary name and renamed into place, 0600, like the socket)
 * and answers each request through `respond`, the broker's own.
 */
export async function serveShellLauncher(opts: { path: string; fp: string; parseExec: ParseExec; respond: (req: ShellExecRequest) => Promise<BrokerResponse> }): Promise<{ close(): Promise<void> }> {
  const refuse = (res: ServerResponse, why: string) => {
    res.writeHead(409, { 'content-type': 'text/plain' });
    res.end(`${why}\n`);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://pgx');
    const pid = Number(url.searchParams.get('pid'));
    if (req.method !== 'GET' || url.pathname !== '/exec' || !Number.isSafeInteger(pid) || pid <= 1) return refuse(res, 'not a launcher request');
    if (url.searchParams.get('build') !== BUILD_ID) return refuse(res, 'another build');
    // The launcher checks only that the directory and the socket are the user's (sh can't read a mode without a
    // process); a directory others may enter is refused here, as the node client refuses it (protocol.ts).
    if (socketDirState(dirname(opts.path)) !== 'private') return refuse(res, 'socket directory not private');
    const request = requestOfPid(pid, opts.parseExec, opts.fp);
    if (typeof request === 'string') return refuse(res, request);
    // The launcher's own view of its argv: a pid of another process (another pid namespace) is never answered for it.
    if (request.agent !== url.searchParams.get('agent') || request.cwdFlag !== url.searchParams.get('cwd')) return refuse(res, 'not this launcher');
    const answer = await opts.respond(request);
    const script = answerScript(answer, request.env);
    if (script === undefined) return refuse(res, 'fallback' in answer ? answer.fallback : 'not expressible in sh');
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(script) });
    res.end(script);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => (res.headersSent ? res.destroy() : refuse(res, 'broker error')));
  });
  const ours = await listenInPlace(server, opts.path);
  return {
    close: () =>
      new Promise<void>((res) => {
        server.close(() => res());
        server.closeAllConnections();
        if (ours()) rmSync(opts.path, { force: true }); // not a newer broker's
      }),
  };
}
