// The handoff inbox: change summaries a subagent's SubagentStop left for its parent session, until the parent's next
// hook that can speak to its model takes them (UserPromptSubmit, which background agents' task notifications fire, or
// the parent's next Bash PreToolUse). A file per session in pgx's 0700 agent directory, 0600: the summaries are names
// and counts, and the parent's hooks read them with no server round trip. Claude Code 2.1.328 gives SubagentStop's
// own additionalContext to the SUBAGENT, as a further turn, never to the parent (decision 165).
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Claude Code caps a hook's strings at 10,000 characters: what is taken at once stays under it. */
const MAX_TEXT = 8_000;

function inboxPath(home: string, sessionId: string): string {
  return join(home, 'agent', 'handoffs', createHash('sha256').update(sessionId).digest('hex').slice(0, 24));
}

/** Leaves one line for the session's parent (best effort: a handoff never fails a stop). */
export function postHandoff(home: string, sessionId: string, text: string): boolean {
  try {
    mkdirSync(join(home, 'agent', 'handoffs'), { recursive: true, mode: 0o700 });
    appendFileSync(inboxPath(home, sessionId), JSON.stringify(text.replace(/\s+/g, ' ')) + '\n', { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/** Is anything waiting for the session's parent? One stat: the parent's Bash fast path asks it. */
export function hasHandoff(home: string, sessionId: unknown): boolean {
  return typeof sessionId === 'string' && sessionId !== '' && existsSync(inboxPath(home, sessionId));
}

/**
 * Takes what waits for the session's parent, once: the file is renamed away first, so two hooks of the parent
 * never both deliver a line. Lines past the cap stay for the next hook.
 */
export function takeHandoffs(home: string, sessionId: string): string[] {
  const path = inboxPath(home, sessionId);
  const taken = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, taken);
  } catch {
    return []; // nothing waiting, or another hook took it
  }
  try {
    const lines = readFileSync(taken, 'utf8').split('\n').filter(Boolean).map((l) => {
      try {
        const v: unknown = JSON.parse(l);
        return typeof v === 'string' ? v : '';
      } catch {
        return '';
      }
    }).filter(Boolean);
    const out: string[] = [];
    let size = 0;
    for (const [i, l] of lines.entries()) {
      if (size + l.length > MAX_TEXT && out.length) {
        for (const rest of lines.slice(i)) appendFileSync(path, JSON.stringify(rest) + '\n', { mode: 0o600 });
        break;
      }
      out.push(l.slice(0, MAX_TEXT));
      size += l.length;
    }
    return out;
  } finally {
    rmSync(taken, { force: true });
  }
}

/** The sessions's inbox goes with the session (SessionEnd). */
export function dropHandoffs(home: string, sessionId: string): void {
  rmSync(inboxPath(home, sessionId), { force: true });
}
