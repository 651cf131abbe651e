// The hook audit log: one JSON line per invocation in ~/.pgx/agent/hooks.log (0600). Ids and outcomes only:
// never a command, a URL or a password.
import { appendFileSync, chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface HookLogLine {
  time: string;
  event: string;
  session_id: string | null;
  agent_id: string | null;
  branch: string | null;
  outcome: string;
  elapsed_ms: number;
}

export function hookLogPath(home: string): string {
  return join(home, 'agent', 'hooks.log');
}

export function appendHookLog(home: string, line: HookLogLine): void {
  try {
    const path = hookLogPath(home);
    mkdirSync(join(home, 'agent'), { recursive: true, mode: 0o700 });
    appendFileSync(path, JSON.stringify(line) + '\n', { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch {
    // the log is best effort: a hook never fails because its log could not be written
  }
}
