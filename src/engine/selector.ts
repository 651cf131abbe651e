// Which branch records a command means: a Target (the identity a hook or `agent exec` carries) or a Selector
// (`--agent`, `--id`, `--session` or its prefix, `--branch`), and the refusals when a command that changes a branch
// in place names none, or more than one. Apart from api.ts, the facade, and command-targets.ts, which ask it for every
// such command.
import { PgxError } from '../lib/errors.js';
import { identityKey, type Identity } from './identity.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import type { EngineContext } from './context.js';
import { fullSessionId } from './session-prefix.js';

/** Which branch a command means, within the configured project and host. */
export interface Target {
  agentId?: string;
  execId?: string;
  sessionId?: string;
}

/** What `down` and `retire` act on. `branch` is a database name (any project); the others are this project's. */
export type Selector =
  { agent: string } | { id: string } | { session: string } | { branch: string } | { target: Target };

export function identityOf(ctx: EngineContext, t: Target): Identity {
  return {
    project: ctx.config.project,
    host: ctx.config.host,
    sessionId: t.sessionId,
    agentId: t.agentId,
    execId: t.execId,
  };
}

/** The one record a selector names for a command that changes a branch in place (exit 5 / 6 / 2). */
export async function oneRecord(ctx: EngineContext, sel: Selector, verb: string): Promise<BranchRecord> {
  const recs = await resolveSelector(ctx, sel);
  const what = Object.entries(sel)
    .map(([k, v]) => (typeof v === 'string' ? `--${k} ${v}` : `--${k}`))
    .join(' ');
  if (!recs.length) {
    if ('branch' in sel) await explainMissingBranch(ctx, sel.branch);
    throw new PgxError(
      'NOT_FOUND',
      `No pgx branch matches ${what} in project "${ctx.config.project}".`,
      'See `pgx agent ls` (or --all for every project).',
    );
  }
  // --session names the session's branch and its subagents': reset means the session's own.
  const mine = 'session' in sel ? recs.filter((r) => r.kind === 'session') : recs;
  if (mine.length !== 1)
    throw new PgxError(
      'USAGE',
      `${what} names ${mine.length} branches; ${verb} takes one.`,
      'Name it with --branch <name> (see `pgx agent ls`).',
    );
  return mine[0]!;
}

export async function resolveSelector(ctx: EngineContext, sel: Selector): Promise<BranchRecord[]> {
  const { config, registry } = ctx;
  if ('branch' in sel) return records.findRecords(registry, { name: sel.branch });
  if ('target' in sel) {
    const rec = await records.findByIdentity(registry, identityKey(identityOf(ctx, sel.target)));
    const s = sel.target.sessionId;
    if (rec || s === undefined) return rec ? [rec] : [];
    const full = await fullSessionId(registry, config.project, s); // ls shows 8 characters (session-prefix.ts)
    return full === s ? [] : resolveSelector(ctx, { target: { ...sel.target, sessionId: full } });
  }
  if ('agent' in sel)
    return (await records.findRecords(registry, { project: config.project, agentId: sel.agent })).filter(
      (r) => r.kind === 'subagent',
    );
  if ('id' in sel)
    return (await records.findRecords(registry, { project: config.project, execId: sel.id })).filter(
      (r) => r.kind === 'exec',
    );
  const recs = await records.findRecords(registry, {
    project: config.project,
    sessionId: sel.session,
    includeSubagents: true,
  });
  const full = recs.length ? sel.session : await fullSessionId(registry, config.project, sel.session);
  return full === sel.session
    ? recs
    : records.findRecords(registry, { project: config.project, sessionId: full, includeSubagents: true });
}

/** `down --branch` of a database without a record: say whether it exists, and refuse anything pgx did not stamp. */
export async function explainMissingBranch(ctx: EngineContext, name: string): Promise<never> {
  const info = await catalog.databaseInfo(ctx.registry, name);
  if (!info.exists) throw new PgxError('NOT_FOUND', `No database named "${name}".`, 'See `pgx agent ls --all`.');
  await catalog.assertBranchStamp(ctx.registry, name);
  throw new PgxError(
    'NOT_FOUND',
    `"${name}" carries a pgx branch stamp but has no registry record, so pgx cannot prove it made it (a stamp can be copied); pgx leaves it alone.`,
    '`pgx agent doctor` lists such databases; if you know it is a leftover of yours, drop it yourself after checking what it holds.',
  );
}

/**
 * The target an ensure creates or attaches: an agent id without a session id resolves to the one session its
 * branches on this host are in (none: NOT_FOUND, more than one: refused rather than guessed); no id at all is refused.
 */
export async function ensureTarget(ctx: EngineContext, t: Target): Promise<Target> {
  const { config, registry } = ctx;
  if (t.agentId !== undefined && t.sessionId === undefined) {
    const recs = (await records.findRecords(registry, { project: config.project, agentId: t.agentId })).filter(
      (r) => r.kind === 'subagent' && r.host === config.host,
    );
    const sessions = new Set(recs.map((r) => r.session_id));
    if (recs.length === 0) {
      throw new PgxError(
        'NOT_FOUND',
        `No branch for agent ${t.agentId} in project "${config.project}".`,
        'Pass --session <id> (or run inside Claude Code, which sets CLAUDE_CODE_SESSION_ID) so pgx can create it.',
      );
    }
    if (sessions.size > 1) {
      throw new PgxError(
        'USAGE',
        `Agent ${t.agentId} has branches in ${sessions.size} sessions of project "${config.project}".`,
        'Pass --session <id> (Claude Code sets CLAUDE_CODE_SESSION_ID for its Bash commands).',
      );
    }
    t = { ...t, sessionId: recs[0]!.session_id ?? undefined };
  }
  if (t.agentId === undefined && t.execId === undefined && t.sessionId === undefined) {
    throw new PgxError(
      'USAGE',
      'Say which branch: --agent <id>, --id <id> or --session <id>.',
      'e.g. `pgx agent exec --id demo -- psql -c "select 1"`.',
    );
  }
  return t;
}
