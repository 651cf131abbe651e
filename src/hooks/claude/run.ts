// `pgx agent hook <event>`: read the payload, decide scope, call the event's handler, print one JSON object or
// nothing, append one log line. Always exit 0: the decision (if any) is in the JSON.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, findConfigFile, pgxHome } from '../../project/config.js';
import { freezeElsewhere } from './freeze-elsewhere.js';
import { PgxError } from '../../lib/errors.js';
import { findPgxHandlers } from './settings-entries.js';
import { hookDeadlineMs, type HookEvent } from './events.js';
import type { ConnectionReuse } from '../../engine/api.js';
import { isPlainObject, parseSettingsText } from '../../lib/settings-file.js';
import { claudeCodeShell } from '../../lib/shell.js';
import { appendHookLog, hookLogLine } from './log.js';
import { readHookStdin, withinLimit } from './stdin.js';
import type * as z from 'zod/mini';
import { claudeCodeVersion } from './claude-version.js';
import { dropSessionRecord, recordedClaudeCode } from './session-claude-code.js';
import { launcherPath } from './launcher.js';
import { HANDLERS } from './handlers.js';
import { errorText, type Handler, type HookResult } from './hook-handler.js';
import { invokesLauncherIn, launcherDeny } from './bash-plan.js';

/** Where a hook runs: its own process (the defaults), or the broker on behalf of one (broker/server.ts). */
export interface HookContext {
  /** The payload, when the caller read it already. */
  stdin?: string;
  /** The hook process's environment. */
  env: NodeJS.ProcessEnv;
  /** The hook process's working directory. */
  cwd: string;
  /** The broker's kept registry connections. */
  reuse?: ConnectionReuse;
  /** The broker: how long its connection attempts may wait, in place of the hook's deadline. */
  connectWaitMs?: number;
  /** Logged: the broker answered for the hook process. */
  via?: 'broker';
  /** The broker: work to run once the answer is sent (HookEnv.afterAnswer). */
  afterAnswer?: (fn: () => void) => void;
  /** Another runtime's hook layer (src/hooks/codex/, src/hooks/copilot/): its handlers, and how a project installs them. */
  runtime?: HookRuntime;
}

/** What differs for another agent runtime: the handlers by event, and whether a project's own config runs them. */
export interface HookRuntime {
  name: 'codex' | 'copilot';
  handlers: Record<string, AnyHandler>;
  projectInstalls(projectDir: string): boolean;
  /** The shell its shell tool runs (the routed command's inner shell); absent: the one Claude Code would pick. */
  shell?: string;
}

/** The hook's own process (process.cwd() throws in a deleted directory: inside the runner, whose caller catches it). */
const ownProcess = (stdin?: string): HookContext => ({ stdin, env: process.env, cwd: process.cwd() });

async function readStdin(given: string | undefined): Promise<string> {
  // The light entry read it already (entries/hook-fast.ts) and bin/pgx.js passed it on, or the broker got it in the request.
  return withinLimit(given ?? (await readHookStdin({ emptyOnTty: true })));
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new PgxError(
            'BRANCH_FAILED',
            `pgx did not get the branch ready within ${Math.round(ms / 1000)} s (a lock held by another pgx process, ` +
              `a slow template build, or a slow server).`,
            'Run `pgx agent doctor`; `pgx template refresh` builds the template ahead of time.',
          ),
        ),
      ms,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Sessions that started in scope: a hook that later finds no .pgx.toml (deleted, checked out) must not fail open. */
function sessionMarker(home: string, sessionId: unknown): string | undefined {
  if (typeof sessionId !== 'string' || !sessionId) return undefined;
  return join(home, 'agent', 'sessions', createHash('sha256').update(sessionId).digest('hex').slice(0, 24));
}

/** Does this project's own Claude Code settings file run pgx's hooks? (a project- or local-scope install) */
function projectInstallsPgx(projectDir: string): boolean {
  // ~/.claude/settings.json is the USER settings file, not a project's: a user-scope install must keep ignoring
  // projects without .pgx.toml, even a session started in $HOME.
  const userFile = resolve(homedir(), '.claude', 'settings.json');
  for (const f of ['settings.json', 'settings.local.json']) {
    const file = resolve(projectDir, '.claude', f);
    if (file === userFile) continue;
    try {
      const root = parseSettingsText(readFileSync(file, 'utf8'), file);
      if (isPlainObject(root.hooks) && findPgxHandlers(root.hooks).length > 0) return true;
    } catch {
      // no such file, or not JSON: Claude Code would not run hooks from it either
    }
  }
  return false;
}

/** The payload as a JSON object, or why it is not one (empty, garbage, `null`, an array). */
async function readPayload(
  given: string | undefined,
): Promise<{ payload: Record<string, unknown>; readError?: string }> {
  try {
    const text = await readStdin(given);
    if (!text.trim()) throw new Error('stdin was empty');
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return { payload: value as Record<string, unknown> };
  } catch (e) {
    return { payload: {}, readError: (e as Error).message };
  }
}

export type AnyHandler = Handler<z.ZodMiniType>;

type Scope = { in: true } | { in: false; result: HookResult };

/**
 * Is this hook pgx's business? No .pgx.toml: out of scope (an unrelated project is never denied), unless this
 * project's own settings run pgx's hooks or the session started in scope; then the missing file is an error. An
 * unreadable payload is judged only after that, for the same reason.
 */
function scopeOf(
  event: HookEvent,
  handler: AnyHandler,
  projectDir: string,
  marker: string | undefined,
  home: string,
  read: { payload: Record<string, unknown>; readError?: string },
  runtime?: HookRuntime,
): Scope {
  if (!findConfigFile(projectDir)) {
    if (
      !(runtime ? runtime.projectInstalls(projectDir) : projectInstallsPgx(projectDir)) &&
      !(marker && existsSync(marker))
    ) {
      // Out of scope (no .pgx.toml, no pgx install here, not a pgx session): an unrelated project is never denied,
      // except for invoking pgx's launcher, which a user-scope wrapper rule would approve here too.
      return {
        in: false,
        result:
          event === 'pre-tool-use' && invokesLauncherIn(read.payload, launcherPath())
            ? launcherDeny()
            : { outcome: 'skipped:out-of-scope' },
      };
    }
    const message =
      `This project runs pgx's hooks (or this session started with pgx: ${join(home, 'agent', 'sessions')}), ` +
      `but no .pgx.toml was found from ${projectDir}. Restore it (e.g. \`git checkout -- .pgx.toml\`), or remove ` +
      `the hooks with \`pgx agent uninstall ${runtime?.name ?? 'claude'}\` and start a new session.`;
    return { in: false, result: handler.onError(message, read.readError === undefined ? read.payload : undefined) };
  }
  if (read.readError !== undefined)
    return { in: false, result: handler.onError(`The hook payload could not be read: ${read.readError}.`) };
  return { in: true };
}

/** Marks a session that started in scope (not at its end, and not for a mere prompt). */
function markSession(event: HookEvent, marker: string | undefined, home: string): void {
  if (!marker || event === 'session-end' || event === 'user-prompt-submit' || existsSync(marker)) return;
  mkdirSync(join(home, 'agent', 'sessions'), { recursive: true, mode: 0o700 });
  writeFileSync(marker, '', { mode: 0o600 });
}

/** Parse the payload, load the config, run the handler by the deadline; any failure is the handler's onError. */
async function runHandler(
  event: HookEvent,
  handler: AnyHandler,
  payload: Record<string, unknown>,
  projectDir: string,
  marker: string | undefined,
  ctx: HookContext,
): Promise<{ result: HookResult; home?: string; claudeCode?: string }> {
  const parsed = handler.schema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      result: handler.onError(
        `The ${event} payload is invalid (${issue.path.join('.') || 'payload'}: ${issue.message}).`,
        payload,
      ),
    };
  }
  const deadline = hookDeadlineMs(event, ctx.env);
  let home: string | undefined;
  let claudeCode: string | undefined;
  try {
    const config = loadConfig({ cwd: projectDir, env: ctx.env });
    home = config.home;
    markSession(event, marker, home);
    claudeCode = ctx.runtime ? undefined : claudeCodeOf(event, ctx.env, home, payload.session_id);
    // Connection attempts wait for the time the hook has left, not a fixed 3 s; in the broker, the wait it gives
    // every request instead (ConnParams.connectDeadlineAt, connectWaitMs).
    const limits =
      ctx.connectWaitMs !== undefined
        ? { connectWaitMs: ctx.connectWaitMs }
        : { connectDeadlineAt: Date.now() + deadline };
    // the shell Claude Code itself would have run the command in (src/lib/shell.ts)
    // A command hook's process ends at its deadline: a large frozen copy is made by a detached freezer (the broker
    // lives on, and makes it itself).
    const freezer = ctx.reuse ? {} : { freezeElsewhere: freezeElsewhere(config) };
    const env = {
      config,
      engine: { quiet: true, statementTimeoutMs: deadline, ...limits, reuse: ctx.reuse, ...freezer },
      launcher: launcherPath(),
      shell: ctx.runtime?.shell ?? claudeCodeShell(ctx.env),
      env: ctx.env,
      envFile: ctx.env.CLAUDE_ENV_FILE || undefined,
      claudeCode,
      afterAnswer: ctx.afterAnswer,
    };
    return { result: await withDeadline(handler.run(parsed.data, env), deadline), home, claudeCode };
  } catch (e) {
    return { result: handler.onError(errorText(e), payload), home, claudeCode };
  }
}

/**
 * The running Claude Code's version: AI_AGENT when the hook's environment has it (a command hook's always does);
 * else, but for SessionStart (which records it), what this session's SessionStart saw (an HTTP hook's request
 * carries no AI_AGENT: session-claude-code.ts). Neither: unknown, so a routed command asks.
 */
function claudeCodeOf(event: HookEvent, env: NodeJS.ProcessEnv, home: string, sessionId: unknown): string | undefined {
  const own = claudeCodeVersion(env);
  return own !== undefined || event === 'session-start' ? own : recordedClaudeCode(home, sessionId);
}

/** Runs the hook for `given`: a caller's context (the broker's), or this process with the payload already read, if so. */
export async function runHook(
  event: HookEvent,
  given: HookContext | { stdin?: string } = {},
): Promise<HookResult & { print?: string }> {
  const t0 = performance.now();
  const ctx = 'env' in given ? given : ownProcess(given.stdin);
  const handler = (ctx.runtime?.handlers[event] ?? HANDLERS[event]) as unknown as AnyHandler; // each handler's schema matches its run()
  const read = await readPayload(ctx.stdin);
  const { payload } = read;
  // Relative to the hook process's directory, not to this process's: the broker runs in its socket directory.
  const projectDir = resolve(
    ctx.cwd,
    ctx.env.CLAUDE_PROJECT_DIR || (typeof payload.cwd === 'string' ? payload.cwd : undefined) || '.',
  );
  let home = pgxHome(ctx.env);
  const marker = sessionMarker(home, payload.session_id);
  if (marker && event === 'session-end') {
    // whatever the config says now
    rmSync(marker, { force: true });
    dropSessionRecord(home, payload.session_id);
  }

  const scope = scopeOf(event, handler, projectDir, marker, home, read, ctx.runtime);
  let result: HookResult;
  let claudeCode = ctx.runtime ? undefined : claudeCodeVersion(ctx.env);
  if (scope.in) {
    const ran = await runHandler(event, handler, payload, projectDir, marker, ctx);
    result = ran.result;
    home = ran.home ?? home;
    claudeCode = ran.claudeCode ?? claudeCode;
  } else {
    result = scope.result;
  }

  appendHookLog(
    home,
    hookLogLine(event, payload, {
      t0,
      outcome: result.outcome,
      branch: result.branch,
      claudeCode,
      runtime: ctx.runtime?.name,
      projectDir,
      changes: result.changes,
      via: ctx.via,
    }),
  );
  return { ...result, print: result.output ? JSON.stringify(result.output) : undefined };
}
