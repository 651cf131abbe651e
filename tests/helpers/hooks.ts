// Running `pgx agent hook <event>` (the BUILT CLI) the way Claude Code does, and running the rewritten command the
// way Claude Code's Bash tool does (`bash -c "<command>"`). Every hook run goes through `hook()`, which enforces the
// suite-wide invariants on every single output: exit 0, stdout empty or exactly one JSON object, never a
// permissionDecision "allow", and never a known password (in stdout or stderr).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { expect } from 'vitest';
import { LAUNCHER, pgInfo, runPgxAsync, sql, type RunResult } from './pgx.js';
import { preToolUseBash, type SessionCtx } from './hook-payloads.js';
import { withPsql } from './psql-stand-in.js';

export type HookEvent =
  'session-start' | 'user-prompt-submit' | 'pre-tool-use' | 'subagent-start' | 'subagent-stop' | 'session-end';

export interface Project {
  dir: string;
  cwd: string;
  name: string;
  home: string;
  env: NodeJS.ProcessEnv;
}

export interface HookRun extends RunResult {
  /** The parsed JSON object, or undefined when the hook printed nothing. */
  json?: any;
  elapsedMs: number;
}

const secrets = new Set<string>();
/** Passwords that must never show up in any hook output (the test server's is always registered). */
export function registerSecret(s: string): void {
  if (s) secrets.add(s);
}
export function knownSecrets(): string[] {
  registerSecret(pgInfo().password);
  return [...secrets];
}

/** Every hook run of this test file, for after-the-fact sweeps. */
export const hookRuns: { event: HookEvent; run: HookRun }[] = [];

const ALLOW_RE = /"permissionDecision"\s*:\s*"allow"/;

/** Checks every hook output must pass, whatever the test. */
export function assertHookInvariants(event: HookEvent, r: HookRun): void {
  expect(r.signal, `${event} killed by signal; stderr=${r.stderr}`).toBeNull();
  expect(r.status, `${event} exit status; stderr=${r.stderr}`).toBe(0);
  if (r.stdout !== '') {
    expect(r.stdout.startsWith('{'), `${event} stdout must start with "{": ${r.stdout}`).toBe(true);
    expect(r.stdout.trimEnd().includes('\n'), `${event} stdout must be ONE JSON object: ${r.stdout}`).toBe(false);
  }
  expect(ALLOW_RE.test(r.stdout), `${event} printed an "allow" decision: ${r.stdout}`).toBe(false);
  expect(r.json?.hookSpecificOutput?.permissionDecision).not.toBe('allow');
  for (const s of knownSecrets()) {
    expect(r.stdout.includes(s), `${event} stdout contains a password`).toBe(false);
    expect(r.stderr.includes(s), `${event} stderr contains a password`).toBe(false);
  }
}

/** The environment Claude Code gives a hook process (CLAUDE_PROJECT_DIR, CLAUDE_CODE_SESSION_ID, CLAUDECODE=1). */
export function hookEnv(
  p: Project,
  payload: { session_id?: unknown },
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  // AI_AGENT: how Claude Code 2.1.328 tells a hook its version (hooks/claude/claude-version.ts).
  const env: NodeJS.ProcessEnv = {
    ...p.env,
    SHELL: '/bin/bash',
    CLAUDECODE: '1',
    CLAUDE_PROJECT_DIR: p.dir,
    AI_AGENT: 'claude-code_2-1-328_harness',
  };
  if (typeof payload.session_id === 'string') env.CLAUDE_CODE_SESSION_ID = payload.session_id;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Runs `pgx agent hook <event>` with the payload on stdin. `env` entries set to undefined are removed. */
/** A payload given as a string is sent as-is (malformed input). */
export async function hook(
  event: HookEvent,
  payload: Record<string, unknown> | string,
  p: Project,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<HookRun> {
  const t0 = performance.now();
  const input = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const env = hookEnv(p, typeof payload === 'string' ? {} : payload, opts.env);
  if (env.PGX_DATABASE_URL) registerSecret(decodeURIComponent(new URL(env.PGX_DATABASE_URL).password)); // whatever server it points at
  const r = await runPgxAsync(['agent', 'hook', event], { cwd: opts.cwd ?? p.dir, env, input });
  const run: HookRun = { ...r, elapsedMs: Math.round(performance.now() - t0) };
  if (r.stdout.trim()) {
    try {
      run.json = JSON.parse(r.stdout);
    } catch {
      throw new Error(`${event}: stdout is not JSON: ${r.stdout}`);
    }
  }
  hookRuns.push({ event, run });
  assertHookInvariants(event, run);
  return run;
}

/** The branch named in a SubagentStart / SessionStart additionalContext. */
export function branchFromContext(r: HookRun): string {
  const ctx: string | undefined = r.json?.hookSpecificOutput?.additionalContext;
  const m = ctx ? /branch "([^"]+)"/.exec(ctx) : null;
  if (!m) throw new Error(`no branch in the hook output: ${r.stdout} ${r.stderr}`);
  return m[1]!;
}

export interface Rewrite {
  command: string;
  branch: string;
  updatedInput: Record<string, unknown>;
}

/** The PreToolUse rewrite, or a thrown error showing what came out instead. */
export function rewriteOf(r: HookRun): Rewrite {
  const o = r.json?.hookSpecificOutput;
  const command = o?.updatedInput?.command;
  if (o?.hookEventName !== 'PreToolUse' || typeof command !== 'string')
    throw new Error(`not a rewrite: ${r.stdout} ${r.stderr}`);
  const m = /; exit # pgx-routed (\S+)\n/.exec(command);
  if (!m) throw new Error(`rewrite has no routing marker: ${command}`);
  return { command, branch: m[1]!, updatedInput: o.updatedInput };
}

/** The launcher as the hook names it (realpath of bin/pgx.js). */
export const launcherReal = (): string => realpathSync(LAUNCHER);

/**
 * The environment of a Bash command in a Claude Code session. Claude Code 2.1.328 exports CLAUDE_CODE_SESSION_ID and
 * CLAUDECODE=1 to its Bash tool's shell (read from the binary: the shell env is built with the session id), and
 * `agent exec --agent` uses that session id to pick the branch.
 */
export function bashEnv(p: Project, s: SessionCtx | undefined, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...p.env, SHELL: '/bin/bash', CLAUDECODE: '1', CLAUDE_PROJECT_DIR: p.dir };
  if (s) env.CLAUDE_CODE_SESSION_ID = s.sessionId;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface BashResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `bash -c <command>` as Claude Code's Bash tool runs it; on a machine with no psql, its psql is the stand-in. */
export function startBash(command: string, opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string }) {
  // stdin is /dev/null unless input is given: Node's 'pipe' is a socketpair, and bash -c with a socket on stdin takes
  // itself for an rshd/sshd shell (sources ~/.bashrc, skips BASH_ENV), which Claude Code's Bash tool is not.
  const child = spawn('bash', ['-c', command], {
    cwd: opts.cwd,
    env: withPsql(opts.env),
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  if (child.stdin) {
    child.stdin.on('error', () => {}); // a command that never reads stdin may exit before we finish writing it
    child.stdin.end(opts.input);
  }
  const done = new Promise<BashResult>((res) =>
    child.on('close', (status, signal) => res({ status, signal, stdout, stderr })),
  );
  return { child, done };
}

export const bash = (
  command: string,
  opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string },
): Promise<BashResult> => startBash(command, opts).done;

/** PreToolUse(Bash) from a subagent, asserting a rewrite; then the rewritten command run by `bash -c`. */
export async function routeAndRun(
  p: Project,
  s: SessionCtx,
  agentId: string,
  command: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
) {
  const r = await hook('pre-tool-use', preToolUseBash(s, command, { agentId }), p);
  const rw = rewriteOf(r);
  const run = await bash(rw.command, { cwd: opts.cwd ?? p.dir, env: bashEnv(p, s, opts.env) });
  return { rewrite: rw, run };
}

/** Runs fn over items with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export { pollUntil, sleep } from './poll.js';

// ---- the test's own view of the database (admin connection, independent of pgx) ----

export async function dbState(name: string): Promise<{ exists: boolean; allowConn: boolean | null }> {
  const rows = await sql<{ datallowconn: boolean }>('SELECT datallowconn FROM pg_database WHERE datname = $1', [name]);
  return { exists: rows.length === 1, allowConn: rows[0]?.datallowconn ?? null };
}

/** Tables in a database's public schema, sorted. */
export async function publicTables(database: string): Promise<string[]> {
  const rows = await sql<{ t: string }>(
    "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    [],
    database,
  );
  return rows.map((r) => r.t);
}

export interface RegistryRow {
  name: string;
  kind: string;
  project: string;
  host: string;
  session_id: string | null;
  agent_id: string | null;
  state: string;
  last_seen_at: Date;
  deadline: Date;
  nonce?: string | null;
  role: string | null;
  identity_key: string;
  /** Lineage (engine/fork.ts) and a reset in flight (engine/reset.ts). */
  parent?: string | null;
  swap_nonce?: string | null;
}

/** pgx creates its registry database on first use: before that, there are no records at all. */
export async function registryExists(): Promise<boolean> {
  return (await sql("SELECT 1 FROM pg_database WHERE datname = 'pgx_registry'")).length === 1;
}

export async function registryRows(project: string): Promise<RegistryRow[]> {
  if (!(await registryExists())) return [];
  return sql<RegistryRow>('SELECT * FROM pgx_branch WHERE project = $1 ORDER BY name', [project], 'pgx_registry');
}

/** `pgx agent ls --json` for the project. */
export async function lsBranches(p: Project, env: NodeJS.ProcessEnv = p.env): Promise<any[]> {
  const r = await runPgxAsync(['agent', 'ls', '--json'], { cwd: p.dir, env });
  if (r.status !== 0) throw new Error(`ls failed: ${r.stdout} ${r.stderr}`);
  return JSON.parse(r.stdout).branches;
}

/** Backends connected to a database (other than the caller's). */
/**
 * The client sessions on a database (what retiring a branch terminates). Not the server's own workers: an autovacuum
 * worker ANALYZEs a fresh branch whenever it likes (seen once in CI, 100 branches at once), and is no agent's.
 */
export async function backendsOn(database: string): Promise<{ pid: number; query: string; state: string | null }[]> {
  return sql(
    "SELECT pid, query, state FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    [database],
  );
}

// ---- processes ----

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

export function procCmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

export function allPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** Processes below `root` whose argv[0] ends with `name`. */
export function descendantsNamed(root: number, name: string): number[] {
  const found: number[] = [];
  for (const pid of allPids()) {
    const argv0 = procCmdline(pid)?.[0];
    if (!argv0 || !(argv0 === name || argv0.endsWith(`/${name}`))) continue;
    for (let p: number | undefined = pid, depth = 0; p && p > 1 && depth < 20; p = parentOf(p), depth++) {
      if (p === root) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}
