// What a branch command acts on where the selector's answer (selector.ts) is not the whole of it: ensure's agent id
// without a session, down's and forget's refusal when nothing matches, adopt's two branches, the one branch freeze
// copies, the database source scan reads. Apart from api.ts, the facade, whose methods of those names call these.
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import type { ConnParams } from '../server/conn-params.js';
import type { EngineContext } from './context.js';
import { explainMissingBranch, oneRecord, resolveSelector, type Selector, type Target } from './selector.js';
import { endedSession } from './session-end.js';

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

/** `pgx agent down`: the branches the selector matches; nothing matched is NOT_FOUND (a bare --branch says why). */
export async function downTargets(ctx: EngineContext, sel: Selector): Promise<BranchRecord[]> {
  const recs = await resolveSelector(ctx, sel);
  if (!recs.length) {
    if ('branch' in sel) await explainMissingBranch(ctx, sel.branch);
    const what = Object.entries(sel)
      .map(([k, v]) => (typeof v === 'string' ? `--${k} ${v}` : `--${k}`))
      .join(' ');
    throw new PgxError(
      'NOT_FOUND',
      `No pgx branch matches ${what} in project "${ctx.config.project}".`,
      'See `pgx agent ls` (or --all for every project).',
    );
  }
  return recs;
}

/** `pgx agent forget`: the records the selector matches; nothing matched is NOT_FOUND. */
export async function forgetTargets(ctx: EngineContext, sel: Selector): Promise<BranchRecord[]> {
  const recs = await resolveSelector(ctx, sel);
  if (!recs.length) {
    const what = Object.keys(sel)
      .map((k) => `--${k}`)
      .join(' ');
    throw new PgxError(
      'NOT_FOUND',
      `No pgx record matches ${what} in project "${ctx.config.project}".`,
      'See `pgx agent ls` (or --all for every project).',
    );
  }
  return recs;
}

/** `pgx agent adopt --agent`: the subagent's branch and its session's branch on the same host, still active. */
export async function adoptTargets(
  ctx: EngineContext,
  agentId: string,
): Promise<{ agent: BranchRecord; session: BranchRecord }> {
  const agent = await oneRecord(ctx, { agent: agentId }, 'adopt');
  const [session] = agent.session_id
    ? (
        await records.findRecords(ctx.registry, {
          project: ctx.config.project,
          sessionId: agent.session_id,
        })
      ).filter((r) => r.host === agent.host)
    : [];
  if (!session)
    throw new PgxError(
      'NOT_FOUND',
      `Agent ${agentId}'s session has no branch of its own to adopt into.`,
      'A session branch exists when `[agent] session_branch` is on (the default); see `pgx agent ls`.',
    );
  // An ended session's branch is retiring: an adopt would succeed and be dropped with it minutes later (decision 431).
  if (session.state === 'retiring') throw endedSession(agentId, session, agent.name, agent.deadline);
  return { agent, session };
}

/** `pgx agent freeze`: the one branch the selector names, and only a database pgx provably made for it. */
export async function freezeTarget(ctx: EngineContext, sel: Selector, afterTicket?: string): Promise<BranchRecord> {
  if (afterTicket !== undefined && !/^[0-9]{1,18}$/.test(afterTicket))
    throw new PgxError(
      'USAGE',
      `--after-ticket must be a number (got "${afterTicket}").`,
      'It is what a hook passes; leave it out.',
    );
  const rec = await oneRecord(ctx, sel, 'freeze');
  const info = await catalog.databaseInfo(ctx.registry, rec.name);
  if (!catalog.isOwnBranch(info, rec))
    throw new PgxError(
      'NOT_PGX_DATABASE',
      `Database "${rec.name}" is not the one pgx made for this branch; pgx will not copy it.`,
      'See `pgx agent doctor`.',
    );
  return rec;
}

/** `pgx source scan`: the origin's connection (`conn`), else [project] source on this server; neither is USAGE. */
export function scanTarget(ctx: EngineContext, conn: ConnParams | undefined): ConnParams {
  const { config, admin } = ctx;
  if (!conn && !config.source)
    throw new PgxError(
      'USAGE',
      'There is no [project] source to scan.',
      'Scan a database to import: `pgx source scan --from-env DATABASE_URL` (or --from <url>).',
    );
  return conn ?? { ...admin, database: config.source! };
}
