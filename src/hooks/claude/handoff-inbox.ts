// The handoff inbox: the doorbell a subagent's SubagentStop rings for its parent session, until the parent's next hook
// that can speak to its model answers it (UserPromptSubmit, which background agents' task notifications fire, or the
// parent's next Bash PreToolUse). Claude Code 2.1.328 gives SubagentStop's own additionalContext to the SUBAGENT, as a
// further turn, never to the parent (decision 165).
//
// The inbox carries no text (decision 451). It is a file in pgx's agent directory, which every process of this Unix
// user can append to, a subagent's routed command included: text taken from it would be anyone's words delivered as
// pgx's. So a line only names a branch and the time of its summary ({branch, at}); the parent's hook reads that
// branch's summary from the registry (pgx_branch.changes, written by SubagentStop; pgx_registry admits only the
// admin role, never a branch role) and writes the words itself (handoff-text.ts). A forged line can at most repeat
// a summary pgx made for this session: anything else, and any line that is not exactly this shape, is dropped.
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { HandoffRef } from '../../engine/api.js';

/** At most this many doorbells are answered at once: 8 summaries of at most 4 lines of 200 characters stay under Claude
 * Code's 10,000-character cap on a hook's strings. The rest wait for the next hook. */
const MAX_REFS = 8;

function inboxPath(home: string, sessionId: string): string {
  return join(home, 'agent', 'handoffs', createHash('sha256').update(sessionId).digest('hex').slice(0, 24));
}

/** Rings the session's parent's doorbell for one summary (best effort: a handoff never fails a stop). */
export function postHandoff(home: string, sessionId: string, ref: HandoffRef): boolean {
  try {
    mkdirSync(join(home, 'agent', 'handoffs'), { recursive: true, mode: 0o700 });
    appendFileSync(inboxPath(home, sessionId), JSON.stringify({ branch: ref.branch, at: ref.at }) + '\n', {
      mode: 0o600,
    });
    return true;
  } catch {
    return false;
  }
}

/** engine/identity.ts BRANCH_NAME_RE, copied: the light hook entry loads this file, and identity.ts loads zod. */
const BRANCH_NAME_RE = /^(agent|exec)_[a-z0-9]{1,16}_[a-z0-9_]{1,40}$/;

/** One line as pgx writes it, or undefined: a branch name of pgx's shape and an ISO time, nothing else. */
function refOf(line: string): HandoffRef | undefined {
  try {
    const v = JSON.parse(line) as Record<string, unknown>;
    if (typeof v !== 'object' || v === null || Object.keys(v).length !== 2) return undefined;
    const { branch, at } = v;
    if (
      typeof branch !== 'string' ||
      !BRANCH_NAME_RE.test(branch) ||
      typeof at !== 'string' ||
      !/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(at)
    )
      return undefined;
    return { branch, at };
  } catch {
    return undefined;
  }
}

/** Is anything waiting for the session's parent? One stat: the parent's Bash fast path asks it. */
export function hasHandoff(home: string, sessionId: unknown): boolean {
  return typeof sessionId === 'string' && sessionId !== '' && existsSync(inboxPath(home, sessionId));
}

/**
 * Takes what waits for the session's parent, once: the file is renamed away first, so two hooks of the parent never
 * both answer a line. `dropped`: lines not in pgx's shape (never delivered). Refs past the cap stay for the next hook.
 */
export function takeHandoffs(home: string, sessionId: string): { refs: HandoffRef[]; dropped: number } {
  const path = inboxPath(home, sessionId);
  const taken = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, taken);
  } catch {
    return { refs: [], dropped: 0 }; // nothing waiting, or another hook took it
  }
  try {
    const lines = readFileSync(taken, 'utf8').split('\n').filter(Boolean);
    const refs = lines.map(refOf).filter((r): r is HandoffRef => r !== undefined);
    for (const rest of refs.slice(MAX_REFS)) postHandoff(home, sessionId, rest);
    return { refs: refs.slice(0, MAX_REFS), dropped: lines.length - refs.length };
  } catch {
    return { refs: [], dropped: 0 };
  } finally {
    rmSync(taken, { force: true });
  }
}

/** The sessions's inbox goes with the session (SessionEnd). */
export function dropHandoffs(home: string, sessionId: string): void {
  rmSync(inboxPath(home, sessionId), { force: true });
}
