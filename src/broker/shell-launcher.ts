// The broker's side of the shell launcher (bin/pgx.js is a sh/JS polyglot; decisions 230, 441): two forms are
// taken in sh, so that neither starts node.
//  - The rewrite's exact `agent exec --agent <id> --cwd <dir> -- …`: the launcher asks (perl, else curl: decision 445)
//    GET http://pgx/exec?pid=$$&build=<id>&agent=<id>&cwd=<dir> on <dir>/h-<key>.sock, evals the answer and execs
//    the command, so the command replaces the launcher (status and signals are its own).
//  - A hook, `agent hook <event>`: the launcher POSTs its stdin, untouched (perl, else curl -T -), to /hook?pid=$$&build=<id>&event=<e>
//    and prints the answer, the very bytes the node hook would print. The request carries `Expect: 100-continue`,
//    and every reason to refuse is decided before the broker says "continue": curl then has read none of stdin,
//    and the launcher's node fallback gets the payload whole. Once the body is read, the answer is final.
//
// The request carries the launcher's pid (and its agent id and --cwd, or its event, to be checked): its argv,
// environment and working directory are read from /proc/<pid> (same user: the socket is 0600 in the private
// directory), exactly what the node client would have sent. From there it is the socket's request, checked by the
// same schema and answered by the same `respond` (the build and launcher check, then BrokerWork: the hook runner, or
// exec.ts route(), ticket check included); this module only turns the answer into sh. Nothing secret goes into an
// argv: the password reaches the shell through the client's stdout (perl's or curl's) and `eval`, a builtin.
//
// Any doubt (not Linux, another build, another launcher, an argv that is not one of those forms, a name sh can't
// export) answers 409 and the launcher execs node, which does what it does without this (decision 187).
import { readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { shellQuote } from '../lib/shell.js';
import {
  BUILD_ID,
  environmentMaterial,
  listenInPlace,
  MAX_REQUEST_BYTES,
  socketDirState,
  type BrokerResponse,
  type RequestEnv,
} from './protocol.js';

/** The argv form the launcher's sh part takes: what exec-argv.ts parseRoutedExec gives (wired in by the broker's command). */
// The session form (a Codex parent's `--session`, decision 205) is parsed too, but the sh part sends only `--agent`.
export type ParseExec = (
  argv: string[],
) => { agent?: string; session?: string; cwd?: string; command: string[] } | undefined;

/** The exec request the socket would have received, or why there is none (the launcher then execs node). */
export type ShellExecRequest = {
  op: 'exec';
  fp: string;
  fpm: string;
  agent: string;
  cwdFlag?: string;
  cwd: string;
  env: RequestEnv;
  command: string[];
  pid: number;
};
/** The hook request the socket would have received (its stdin read once the request is accepted). */
export type ShellHookRequest = {
  op: 'hook';
  fp: string;
  fpm: string;
  event: string;
  stdin: string;
  cwd: string;
  env: RequestEnv;
};

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

/** What /proc says of the launcher running as `pid`: its argv after the launcher, environment, cwd and launcher path. */
function launcherOfPid(pid: number): { args: string[]; env: RequestEnv; cwd: string; launcher: string } | string {
  let argv: string[];
  let env: RequestEnv;
  let cwd: string;
  try {
    argv = nulList(`/proc/${pid}/cmdline`);
    env = {};
    for (const kv of nulList(`/proc/${pid}/environ`)) {
      const i = kv.indexOf('=');
      if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    cwd = readlinkSync(`/proc/${pid}/cwd`);
    realpathSync(cwd); // a deleted working directory reads as "<dir> (deleted)": the node hook or exec says what it says
  } catch {
    return 'no such process';
  }
  // argv[0] is the shell the kernel ran for the `#!/bin/sh` line, argv[1] the launcher.
  const launcherArg = argv[1];
  if (launcherArg === undefined) return 'not a launcher';
  try {
    return { args: argv.slice(2), env, cwd, launcher: env.PGX_LAUNCHER || realpathSync(launcherArg) };
  } catch {
    return 'not a launcher';
  }
}

/** What the node client would have sent for the launcher running as `pid` (the rewrite's exec), read from /proc. */
export function requestOfPid(pid: number, parseExec: ParseExec, fp: string): ShellExecRequest | string {
  const l = launcherOfPid(pid);
  if (typeof l === 'string') return l;
  const routed = parseExec(l.args);
  if (!routed || routed.agent === undefined) return 'not the rewrite form';
  return {
    op: 'exec',
    fp,
    fpm: environmentMaterial(l.env, l.launcher),
    agent: routed.agent,
    cwdFlag: routed.cwd,
    cwd: l.cwd,
    env: l.env,
    command: routed.command,
    pid,
  };
}

/** The hook request for the launcher running as `pid` (`agent hook <event>`, exactly), its stdin still to come. */
export function hookRequestOfPid(pid: number, event: string, fp: string): Omit<ShellHookRequest, 'stdin'> | string {
  const l = launcherOfPid(pid);
  if (typeof l === 'string') return l;
  if (l.args.length !== 3 || l.args[0] !== 'agent' || l.args[1] !== 'hook' || l.args[2] !== event)
    return 'not the hook form';
  return { op: 'hook', fp, fpm: environmentMaterial(l.env, l.launcher), event, cwd: l.cwd, env: l.env };
}

/** Ends a hook's answer: the launcher prints what precedes it only when it is there (a cut-off answer never is). */
export const HOOK_END = '# pgx: end';

/**
 * When a hook's request was read but its answer can't be had (the broker's work failed): what the launcher prints.
 * A subagent's PreToolUse must not run unrouted, so it is denied, with what to do; a SessionStart says why the
 * session's commands keep their database; every other event isolates nothing and says nothing (as the node hook's
 * own failures do).
 */
export function hookFailurePrint(event: string, why: string): string | undefined {
  // The session's own commands: they go on (fail open), and the user is told why, once, where they see it.
  if (event === 'session-start')
    return JSON.stringify({
      systemMessage:
        `pgx WARNING: its broker could not answer this session's SessionStart hook (${why}), so this session's ` +
        `Bash commands use whatever database they did before. Run \`pgx agent doctor\`; a new session tries again.`,
    });
  if (event !== 'pre-tool-use') return undefined;
  return JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason:
        `pgx: its broker could not answer (${why}), so the command was not routed to your database branch and ` +
        `did not run. Retry it; if this repeats, run \`pgx agent broker stop\` and \`pgx agent doctor\`.`,
    },
  });
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
  if ('warning' in answer && answer.warning) lines.push(`printf '%s' ${shellQuote(answer.warning)} >&2`);
  if (gone.length) lines.push(`unset ${gone.join(' ')}`);
  for (const k of changed) lines.push(`export ${k}=${shellQuote(next[k]!)}`);
  lines.push(SCRIPT_END);
  return lines.join('\n');
}

/**
 * Listens for the launcher on `path` (bound under a temporary name and renamed into place, 0600, like the socket)
 * and answers each request through `respond`, the broker's own.
 */
export async function serveShellLauncher(opts: {
  path: string;
  fp: string;
  /** The broker's own launcher and user: a launcher's request of another (fpm) is refused before its body is read. */
  fpm: string;
  parseExec: ParseExec;
  hookAllowed: (pid: number) => boolean;
  respond: (req: ShellExecRequest | ShellHookRequest) => Promise<BrokerResponse>;
}): Promise<{ close(): Promise<void> }> {
  const refuse = (res: ServerResponse, why: string) => {
    res.writeHead(409, { 'content-type': 'text/plain', connection: 'close' });
    res.end(`${why}\n`);
  };
  /** The checks both forms share, on the url alone: the pid, the build, the directory. A reason to refuse, or the pid. */
  const common = (url: URL): number | string => {
    const pid = Number(url.searchParams.get('pid'));
    if (!Number.isSafeInteger(pid) || pid <= 1) return 'not a launcher request';
    if (url.searchParams.get('build') !== BUILD_ID) return 'another build';
    // The launcher checks only that the directory and the socket are the user's (sh can't read a mode without a
    // process); a directory others may enter is refused here, as the node client refuses it (protocol.ts).
    if (socketDirState(dirname(opts.path)) !== 'private') return 'socket directory not private';
    return pid;
  };
  /**
   * A hook: everything is checked before the body is read (`accept`, called from 'checkContinue' before the
   * broker says "100 Continue"), so that a refusal leaves the launcher's stdin unread for its node fallback.
   */
  const hookRequest = (req: IncomingMessage, url: URL): Omit<ShellHookRequest, 'stdin'> | string => {
    if (req.method !== 'POST' || url.pathname !== '/hook') return 'not a launcher request';
    const pid = common(url);
    if (typeof pid === 'string') return pid;
    const request = hookRequestOfPid(pid, url.searchParams.get('event') ?? '', opts.fp);
    if (typeof request === 'string') return request;
    if (!opts.hookAllowed(pid)) return 'a hook inside a routed command'; // the node fallback refuses it, saying why
    if (request.fpm !== opts.fpm) return 'another launcher';
    return request;
  };
  const answerHook = (head: Omit<ShellHookRequest, 'stdin'>, req: IncomingMessage, res: ServerResponse) => {
    // Up to MAX_REQUEST_BYTES kept; the rest read and dropped, so curl finishes sending. What is kept is then past
    // the hook's own 1 MiB limit, and the hook runner answers it as the node hook answers an oversized payload.
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      if (size <= MAX_REQUEST_BYTES) chunks.push(c);
      size += c.length;
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const request: ShellHookRequest = { ...head, stdin: Buffer.concat(chunks).toString('utf8') };
      void opts
        .respond(request)
        .catch((e: unknown): BrokerResponse => ({ fallback: `broker error: ${(e as Error).message}` }))
        .then((answer) => {
          let print: string | undefined;
          if ('ok' in answer && answer.ok && 'print' in answer) print = answer.print;
          else if (!('ok' in answer && answer.ok && !('env' in answer) && !('status' in answer)))
            print = hookFailurePrint(head.event, 'fallback' in answer ? answer.fallback : 'no hook answer');
          const body = `${print ? print + '\n' : ''}${HOOK_END}`;
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        });
    });
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://pgx');
    if (url.pathname === '/hook') {
      // without Expect (another curl): the same checks, the body then unread by the broker on a refusal
      const head = hookRequest(req, url);
      return typeof head === 'string' ? refuse(res, head) : answerHook(head, req, res);
    }
    if (req.method !== 'GET' || url.pathname !== '/exec') return refuse(res, 'not a launcher request');
    const pid = common(url);
    if (typeof pid === 'string') return refuse(res, pid);
    const request = requestOfPid(pid, opts.parseExec, opts.fp);
    if (typeof request === 'string') return refuse(res, request);
    // The launcher's own view of its argv: a pid of another process (another pid namespace) is never answered for it.
    if (request.agent !== url.searchParams.get('agent') || request.cwdFlag !== url.searchParams.get('cwd'))
      return refuse(res, 'not this launcher');
    const answer = await opts.respond(request);
    const script = answerScript(answer, request.env);
    if (script === undefined) return refuse(res, 'fallback' in answer ? answer.fallback : 'not expressible in sh');
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(script) });
    res.end(script);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => (res.headersSent ? res.destroy() : refuse(res, 'broker error')));
  });
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://pgx');
    const head = hookRequest(req, url);
    if (typeof head === 'string') return refuse(res, head); // curl sends no body: the launcher's stdin is node's
    res.writeContinue();
    answerHook(head, req, res);
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
