// `pgx agent hook <event>`: read the payload, decide scope, call the event's handler, print one JSON object or
// nothing, append one log line. Always exit 0: the decision (if any) is in the JSON.
import { existsSync, realpathSync } from 'node:fs';
import { loadConfig, findConfigFile, pgxHome } from '../../config.js';
import { appendHookLog } from './log.js';
import { errorText, HANDLERS, type HookName, type HookResult } from './handlers.js';

const MAX_STDIN = 1024 * 1024;

async function readStdin(): Promise<string> {
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

export function launcherPath(): string {
  if (process.env.PGX_LAUNCHER) return process.env.PGX_LAUNCHER;
  try {
    return realpathSync(process.argv[1]!);
  } catch {
    return process.argv[1]!;
  }
}

export function userShell(): string {
  const s = process.env.SHELL;
  if (s && s.startsWith('/') && existsSync(s)) return s;
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
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
    if (!findConfigFile(projectDir)) {
      // Out of scope (no .pgx.toml): an unrelated project is never denied or slowed down.
      result = { outcome: 'skipped:out-of-scope' };
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
    try {
      const config = loadConfig({ cwd: projectDir });
      home = config.home;
      result = await (handler.run as (p: unknown, h: unknown) => Promise<HookResult>)(parsed.data, {
        config,
        launcher: launcherPath(),
        shell: userShell(),
        envFile: process.env.CLAUDE_ENV_FILE || undefined,
      });
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
    });
    return { ...result, print: result.output ? JSON.stringify(result.output) : undefined };
  }
}
