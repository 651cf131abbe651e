// `pgx agent hook <event>`: read the payload, decide scope, call the event's handler, print one JSON object or
// nothing, append one log line. Always exit 0: the decision (if any) is in the JSON.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { loadConfig, findConfigFile, pgxHome } from '../../config.js';
import { PgxError } from '../../errors.js';
import { findPgxHandlers, HOOK_EVENTS } from '../../install/hook-events.js';
import { isPlainObject, parseSettingsText } from '../../install/settings-file.js';
import { setStatementTimeout } from '../../server/db.js';
import { appendHookLog } from './log.js';
import { claudeCodeVersion } from './claude-version.js';
import { launcherPath } from './launcher.js';

export { launcherPath };
import { errorText, HANDLERS, invokesLauncherIn, launcherDeny, type HookName, type HookResult } from './handlers.js';

const MAX_STDIN = 1024 * 1024;

async function readStdin(): Promise<string> {
  // bin/pgx.js's fast path read it already (fast-path.ts) and passed it on.
  const handedOver = (globalThis as { __pgxHookStdin?: unknown }).__pgxHookStdin;
  if (typeof handedOver === 'string') return handedOver.length > MAX_STDIN ? Promise.reject(new Error('hook payload larger than 1 MiB')) : handedOver;
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of process.stdin) {
    size += (c as Buffer).length;
    if (size > MAX_STDIN) throw new Error('hook payload larger than 1 MiB');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}


/**
 * The inner shell of the rewrite: the user's $SHELL only when it parses the POSIX syntax Claude Code's Bash tool
 * writes (bash, zsh, sh, dash, ksh); fish or csh would re-parse the command differently (and source their own rc
 * files, which BASH_ENV pinning does not cover).
 */
export function userShell(): string {
  const s = process.env.SHELL;
  if (s && s.startsWith('/') && /^(bash|zsh|sh|dash|ksh|mksh)$/.test(basename(s)) && existsSync(s)) return s;
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/**
 * How long a hook may work before it answers anyway: 80% of the timeout `pgx agent install claude` gives it.
 * Claude Code runs a PreToolUse command whose hook timed out UNCHANGED (unrouted), so pgx must answer (deny) first.
 */
export function hookDeadlineMs(event: HookName): number {
  const override = Number(process.env.PGX_HOOK_DEADLINE_MS);
  if (Number.isFinite(override) && override > 0) return override;
  const timeout = HOOK_EVENTS.find((h) => h.cli === event)?.timeout ?? 30;
  return Math.round(timeout * 1000 * 0.8);
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new PgxError('BRANCH_FAILED', `pgx did not get the branch ready within ${Math.round(ms / 1000)} s (a lock held by another pgx process, a slow template build, or a slow server).`, 'Run `pgx agent doctor`; `pgx template refresh` builds the template ahead of time.')),
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

export async function runHook(event: HookName): Promise<HookResult & { print?: string }> {
  const t0 = performance.now();
  const handler = HANDLERS[event];
  let payload: Record<string, unknown> = {};
  let result: HookResult;
  let home = pgxHome();
  // A payload that is not a JSON object (empty, garbage, `null`, an array) is unreadable. It used to be denied before the
  // scope check (so an unrelated project could be denied), and `null` crashed the hook (exit 1: Claude Code fails open).
  let readError: string | undefined;
  try {
    const text = await readStdin();
    if (!text.trim()) throw new Error('stdin was empty');
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    payload = value as Record<string, unknown>;
  } catch (e) {
    readError = (e as Error).message;
  }
  {
    const cwd = typeof payload.cwd === 'string' ? payload.cwd : undefined;
    const projectDir = process.env.CLAUDE_PROJECT_DIR || cwd || process.cwd();
    const marker = sessionMarker(home, payload.session_id);
    if (marker && event === 'session-end') rmSync(marker, { force: true }); // whatever the config says now
    if (!findConfigFile(projectDir)) {
      if (!projectInstallsPgx(projectDir) && !(marker && existsSync(marker))) {
        // Out of scope (no .pgx.toml, no pgx install here, not a pgx session): an unrelated project is never denied,
        // except for invoking pgx's launcher, which a user-scope wrapper rule would approve here too.
        result = event === 'pre-tool-use' && invokesLauncherIn(payload, launcherPath()) ? launcherDeny() : { outcome: 'skipped:out-of-scope' };
        return finish();
      }
      result = handler.onError(
        `This project runs pgx's hooks (or this session started with pgx: ${join(home, 'agent', 'sessions')}), but no .pgx.toml was found from ${projectDir}. Restore it (e.g. \`git checkout -- .pgx.toml\`), or remove the hooks with \`pgx agent uninstall claude\` and start a new session.`,
        readError === undefined ? payload : undefined,
      );
      return finish();
    }
    if (readError !== undefined) {
      result = handler.onError(`The hook payload could not be read: ${readError}.`);
      return finish();
    }
    const parsed = handler.schema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      result = handler.onError(`The ${event} payload is invalid (${issue.path.join('.') || 'payload'}: ${issue.message}).`, payload);
      return finish();
    }
    const deadline = hookDeadlineMs(event);
    try {
      const config = loadConfig({ cwd: projectDir });
      home = config.home;
      if (marker && event !== 'session-end' && event !== 'user-prompt-submit' && !existsSync(marker)) {
        mkdirSync(join(home, 'agent', 'sessions'), { recursive: true, mode: 0o700 });
        writeFileSync(marker, '', { mode: 0o600 });
      }
      setStatementTimeout(deadline); // no statement outlives the hook (see setStatementTimeout)
      const work = (handler.run as (p: unknown, h: unknown) => Promise<HookResult>)(parsed.data, {
        config,
        launcher: launcherPath(),
        shell: userShell(),
        envFile: process.env.CLAUDE_ENV_FILE || undefined,
        claudeCode: claudeCodeVersion(),
      });
      result = await withDeadline(work, deadline);
    } catch (e) {
      result = handler.onError(errorText(e), payload);
    }
  }
  return finish();

  function finish() {
    const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 256) : null);
    appendHookLog(home, {
      time: new Date().toISOString(),
      event,
      session_id: str(payload.session_id),
      agent_id: str(payload.agent_id),
      branch: result.branch ?? null,
      outcome: result.outcome,
      elapsed_ms: Math.round(performance.now() - t0),
      claude_code: claudeCodeVersion() ?? null,
      permission_mode: str(payload.permission_mode),
      project_dir: process.env.CLAUDE_PROJECT_DIR || (typeof payload.cwd === 'string' ? payload.cwd : null), // doctor: this project's lines only
    });
    return { ...result, print: result.output ? JSON.stringify(result.output) : undefined };
  }
}
