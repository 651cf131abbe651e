// The parent session's PreToolUse, answered before the CLI bundle loads. Every Bash command of the main thread
// runs this hook, and for it pgx has one job: refuse a typed launcher (rewrite.ts). Anything else gets no output
// whatever the project's config says (the parent's commands are not rewritten; a broken config fails open for
// them), so neither the config, the scope check, commander nor zod is needed. A payload this path is unsure about
// (a subagent's, unreadable, not Bash) goes to the full hook with its text.
import { appendHookLog } from './log.js';
import { claudeCodeVersion } from './claude-version.js';
import { launcherPath } from './launcher.js';
import { invokesLauncher } from './rewrite.js';
import { pgxHome } from '../../home.js';

/** Reads the payload; answers a parent's Bash (returns undefined) or returns the text for the full hook. */
export async function fastPreToolUse(): Promise<string | undefined> {
  const t0 = performance.now();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of process.stdin) {
    chunks.push(c as Buffer);
    if ((size += (c as Buffer).length) > 1024 * 1024) break; // the full hook refuses it
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return text;
  }
  const command = (p?.tool_input as Record<string, unknown> | undefined)?.command;
  if (typeof p !== 'object' || p === null || p.agent_id !== undefined || p.tool_name !== 'Bash' || typeof command !== 'string') return text;
  if (invokesLauncher(command, launcherPath())) return text; // the full hook denies it, with the log line and reason
  const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 256) : null);
  appendHookLog(pgxHome(), {
    time: new Date().toISOString(),
    event: 'pre-tool-use',
    session_id: str(p.session_id),
    agent_id: null,
    branch: null,
    outcome: 'skipped:not-subagent-bash',
    elapsed_ms: Math.round(performance.now() - t0),
    claude_code: claudeCodeVersion() ?? null,
    permission_mode: str(p.permission_mode),
    project_dir: process.env.CLAUDE_PROJECT_DIR || (typeof p.cwd === 'string' ? p.cwd : null), // doctor: this project's lines only
  });
  return undefined;
}
