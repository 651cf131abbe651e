// Which Claude Code runs a session, recorded by its SessionStart command hook for the hooks that cannot say. A hook
// process learns the version from AI_AGENT (claude-version.ts); an HTTP hook's request carries no AI_AGENT (Claude
// Code's own environment has none, and SessionStart never fires over HTTP), so the SessionStart command hook, which
// always runs as a process, writes the version it saw under the session's id and the broker reads it back by the
// payload's session_id (decision 222). A session with no record is an unknown version: pgx then asks (stricter), never
// trusts more. One 0600 file per session beside its marker (PGX_HOME/agent/sessions/<hash>.claude-code, purged with
// them), removed at SessionEnd, and bounded: a record older than RECORD_TTL_MS is dropped, and at most MAX_RECORDS
// are kept (the oldest go first).
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { idSchema } from '../../engine/identity.js';
import { writeFileAtomic } from '../../lib/fsutil.js';

/** A week from the session's last SessionStart (resume, clear and compact record it again). */
export const RECORD_TTL_MS = 7 * 24 * 3_600_000;
/** More sessions than one user runs in a week; past it the oldest records go. */
export const MAX_RECORDS = 512;

const VERSION_RE = /^\d{1,6}\.\d{1,6}\.\d{1,6}$/;
const SUFFIX = '.claude-code';
const RECORD_NAME = /^[0-9a-f]{24}\.claude-code$/;

const sessionsDir = (home: string) => join(home, 'agent', 'sessions');

/** The record's file for a session id pgx accepts (idSchema), else undefined: an id pgx refuses names no file. */
export function sessionRecordPath(home: string, sessionId: unknown): string | undefined {
  if (!idSchema.safeParse(sessionId).success) return undefined;
  // The same hash as the session's marker (run.ts), so the two sit side by side.
  return join(
    sessionsDir(home),
    createHash('sha256')
      .update(sessionId as string)
      .digest('hex')
      .slice(0, 24) + SUFFIX,
  );
}

/** SessionStart: this session runs Claude Code `version` (a version that isn't one, or an id pgx refuses: nothing). */
export function recordSessionClaudeCode(home: string, sessionId: unknown, version: string): void {
  const file = sessionRecordPath(home, sessionId);
  if (!file || !VERSION_RE.test(version)) return;
  writeFileAtomic(file, version + '\n', 0o600);
  pruneSessionRecords(home);
}

/**
 * The version recorded for the session, or undefined (no record, an id pgx refuses, a record that is not a regular
 * small file holding one version, or one past its TTL): a file anyone with the account can edit is read, not trusted.
 */
export function recordedClaudeCode(home: string, sessionId: unknown, now = Date.now()): string | undefined {
  const file = sessionRecordPath(home, sessionId);
  if (!file) return undefined;
  try {
    const st = lstatSync(file);
    if (!st.isFile() || st.size > 32 || now - st.mtimeMs > RECORD_TTL_MS) return undefined;
    const v = readFileSync(file, 'utf8').trim();
    return VERSION_RE.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** SessionEnd: the session's record goes with its marker. */
export function dropSessionRecord(home: string, sessionId: unknown): void {
  const file = sessionRecordPath(home, sessionId);
  if (file) rmSync(file, { force: true });
}

/** Drops records past their TTL, then the oldest past MAX_RECORDS. Returns how many went (`agent gc` says it). */
export function pruneSessionRecords(home: string, now = Date.now(), max = MAX_RECORDS): number {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(home)).filter((n) => RECORD_NAME.test(n));
  } catch {
    return 0;
  }
  const live: { file: string; at: number }[] = [];
  let dropped = 0;
  for (const n of names) {
    const file = join(sessionsDir(home), n);
    try {
      const at = lstatSync(file).mtimeMs;
      if (now - at > RECORD_TTL_MS) {
        rmSync(file, { force: true });
        dropped++;
      } else live.push({ file, at });
    } catch {
      // gone meanwhile
    }
  }
  if (live.length > max) {
    live.sort((a, b) => a.at - b.at);
    for (const { file } of live.slice(0, live.length - max)) {
      rmSync(file, { force: true });
      dropped++;
    }
  }
  return dropped;
}
