// What a CLI branch command acts on where the selector's answer (selector.ts) is not the whole of it: down's and
// forget's refusal when nothing matches, adopt's two branches, the one branch freeze copies, the database source scan
// reads. The facade (api.ts) loads it on demand: no hook runs these, so the hot-path bundles carry a stub instead.
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import type { ConnParams } from '../server/conn-params.js';
import type { EngineContext } from './context.js';
import { explainMissingBranch, oneRecord, resolveSelector, type Selector } from './selector.js';
import { endedSession } from './session-end.js';

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
