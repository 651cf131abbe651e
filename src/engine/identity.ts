// Identity → branch name. The identity is (project, host, session_id, agent_id), or (project, host, exec id).
// The short, readable name is a convenience; the registry keys branches by the identity's hash, so the same
// identity always maps to the same branch and a name taken by another identity falls back to a hash name.
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import '../lib/zod-locale.js';
import { PgxError } from '../lib/errors.js';
import type { BranchKind } from '../registry/records.js';

/**
 * Agent, session and exec ids come from hook stdin or flags: untrusted. Printable, 1..256 characters. No lone
 * surrogate (`\ud800`): PostgreSQL stores one as U+FFFD, so two such ids would share one registry agent_id while
 * their identity hashes differ (found by the hostile hook corpus, decision 211).
 */
export const idSchema = z
  .string()
  .check(
    z.minLength(1, 'must not be empty'),
    z.maxLength(256, 'must be at most 256 characters'),
    z.regex(/^[^\u0000-\u001f\u007f]+$/u, 'must not contain control characters'),
    z.regex(/^\P{Cs}*$/u, 'must not contain a lone surrogate (text that is not valid Unicode)'),
  );

export interface Identity {
  project: string;
  host: string;
  sessionId?: string;
  agentId?: string;
  execId?: string;
}

export function validateId(what: string, value: string): string {
  const r = idSchema.safeParse(value);
  if (!r.success) {
    throw new PgxError(
      'INVALID_INPUT',
      `${what} ${r.error.issues[0]!.message}`,
      `Pass a ${what} of 1 to 256 printable characters.`,
    );
  }
  return value;
}

/** The ids a command names a branch by (--agent, --id, --session): engine/api.ts's Target. */
export interface TargetOpts {
  agent?: string;
  id?: string;
  session?: string;
}

/** The flags as a target, validated; a subagent's session comes from CLAUDE_CODE_SESSION_ID when not given. */
export function targetFrom(
  opts: TargetOpts,
  env: NodeJS.ProcessEnv = process.env,
): { agentId?: string; execId?: string; sessionId?: string } {
  if (opts.agent !== undefined && opts.id !== undefined)
    throw new PgxError(
      'USAGE',
      '--agent and --id name different branches; pass one.',
      'Use --agent for a Claude Code subagent, --id for your own name.',
    );
  if (opts.id !== undefined && opts.session !== undefined)
    throw new PgxError(
      'USAGE',
      '--id names a branch on its own; --session does not apply to it.',
      'Use --id alone, or --session (with --agent for a subagent).',
    );
  const session = opts.session ?? (opts.agent !== undefined ? env.CLAUDE_CODE_SESSION_ID || undefined : undefined);
  return {
    agentId: opts.agent !== undefined ? validateId('--agent', opts.agent) : undefined,
    execId: opts.id !== undefined ? validateId('--id', opts.id) : undefined,
    sessionId: session !== undefined ? validateId('--session', session) : undefined,
  };
}

export function kindOf(id: Identity): BranchKind {
  if (id.execId !== undefined) return 'exec';
  if (id.agentId !== undefined) return 'subagent';
  if (id.sessionId !== undefined) return 'session';
  throw new PgxError(
    'USAGE',
    'An identity needs a session id, an agent id or an exec id.',
    'Pass --agent <id>, --id <id> or --session <id>.',
  );
}

/** A stable hex digest of the full identity (never of a truncated part). */
export function identityKey(id: Identity): string {
  const kind = kindOf(id);
  const parts = [
    'pgx-identity-v1',
    id.project,
    id.host,
    kind,
    id.sessionId ?? '',
    kind === 'subagent' ? id.agentId! : '',
    id.execId ?? '',
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

function slug(value: string, max: number): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, max);
}

/**
 * Readable name: agent_<host>_<session8>, agent_<host>_<session8>_<agent8>, exec_<host>_<id≤24>.
 * Names use "_" (not "-") so they are valid unquoted identifiers: `psql -d`, `\c` and SQL work without quotes.
 * Returns undefined when the ids have nothing name-safe left (e.g. all punctuation or non-Latin): hash name then.
 */
export function shortBranchName(id: Identity): string | undefined {
  const kind = kindOf(id);
  const host = slug(id.host, 16) || 'host';
  if (kind === 'exec') {
    const e = slug(id.execId!, 24);
    return e ? `exec_${host}_${e}` : undefined;
  }
  const s = slug(id.sessionId ?? '', 8);
  if (!s) return undefined;
  if (kind === 'session') return `agent_${host}_${s}`;
  const a = slug(id.agentId!, 8);
  return a ? `agent_${host}_${s}_${a}` : undefined;
}

/** Collision fallback: a 16-hex hash of the full identity. Always ≤ 63 bytes. */
export function hashBranchName(id: Identity): string {
  const prefix = kindOf(id) === 'exec' ? 'exec' : 'agent';
  return `${prefix}_${slug(id.host, 16) || 'host'}_${identityKey(id).slice(0, 16)}`;
}

/** The shape of every branch name pgx makes (asserted by the identity tests; the stamp, not the name, is what pgx trusts). */
export const BRANCH_NAME_RE = /^(agent|exec)_[a-z0-9]{1,16}_[a-z0-9_]{1,40}$/;
