// The hook audit log: one JSON line per invocation in ~/.pgx/agent/hooks.log (0600). Ids and outcomes only:
// never a command, a URL or a password.
import { appendFileSync, chmodSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface HookLogLine {
  time: string;
  event: string;
  session_id: string | null;
  agent_id: string | null;
  branch: string | null;
  outcome: string;
  elapsed_ms: number;
  /** The Claude Code version that ran the hook (from AI_AGENT), when it says: the doctor checks it is verified. */
  claude_code?: string | null;
  /** The payload's permission_mode (PreToolUse, UserPromptSubmit): the doctor reports the mode last seen. */
  permission_mode?: string | null;
  /** The project directory the hook ran for (CLAUDE_PROJECT_DIR, else the payload's cwd): the doctor filters by it. */
  project_dir?: string | null;
  /** SubagentStop: what the subagent's branch changed (engine/handoff.ts): counts and object names, never row contents. */
  changes?: unknown;
  /** "broker": the resident broker ran it for the hook process (broker/server.ts). */
  via?: 'broker';
  /** PreToolUse of a tool other than Bash (Monitor, an MCP tool, a resource tool): its name. */
  tool?: string;
  /** "codex": a Codex CLI hook (src/hooks/codex/); "copilot": a GitHub Copilot CLI hook (src/hooks/copilot/); absent for Claude Code. */
  runtime?: 'codex' | 'copilot';
}

/** A payload field as logged: a string, capped at 256 characters, else null. */
const logged = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, 256) : null);

/** The one log line of a hook, whichever entry answered it: the payload's ids, what was done, how long it took. */
export function hookLogLine(
  event: string,
  payload: Record<string, unknown>,
  r: {
    t0: number;
    outcome: string;
    branch?: string | null;
    claudeCode: string | undefined;
    runtime?: 'codex' | 'copilot';
    projectDir: string | null;
    changes?: unknown;
    via?: 'broker';
  },
): HookLogLine {
  return {
    time: new Date().toISOString(),
    event,
    session_id: logged(payload.session_id),
    agent_id: logged(payload.agent_id),
    branch: r.branch ?? null,
    outcome: r.outcome,
    elapsed_ms: Math.round(performance.now() - r.t0),
    claude_code: r.claudeCode ?? null,
    ...(r.runtime ? { runtime: r.runtime } : {}),
    permission_mode: logged(payload.permission_mode),
    project_dir: r.projectDir, // doctor: this project's lines only
    ...(r.changes ? { changes: r.changes } : {}),
    ...(r.via ? { via: r.via } : {}),
    ...(typeof payload.tool_name === 'string' && payload.tool_name !== 'Bash'
      ? { tool: logged(payload.tool_name)! }
      : {}),
  };
}

export function hookLogPath(home: string): string {
  return join(home, 'agent', 'hooks.log');
}

/** One line is ~200 bytes: 5 MiB is ~25,000 hook calls. One rotated file (hooks.log.1) is kept. */
export const HOOK_LOG_MAX_BYTES = 5 * 1024 * 1024;

export function appendHookLog(home: string, line: HookLogLine, maxBytes = HOOK_LOG_MAX_BYTES): void {
  try {
    const path = hookLogPath(home);
    mkdirSync(join(home, 'agent'), { recursive: true, mode: 0o700 });
    try {
      if (statSync(path).size >= maxBytes) renameSync(path, `${path}.1`);
    } catch {
      // no log yet
    }
    appendFileSync(path, JSON.stringify(line) + '\n', { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch {
    // the log is best effort: a hook never fails because its log could not be written
  }
}
