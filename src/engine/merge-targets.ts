// What `pgx agent merge --agent <id>` acts on: the subagent's branch and its session's own branch on the same host
// (active: a merge into an ended session would be dropped with it, as an adopt would: decision 431).
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { clockTime } from '../lib/output.js';
import type { EngineContext } from './context.js';
import { oneRecord } from './selector.js';

export async function mergeTargets(
  e: EngineContext,
  agentId: string,
): Promise<{ agent: BranchRecord; session: BranchRecord }> {
  const agent = await oneRecord(e, { agent: agentId }, 'merge');
  if (agent.kind !== 'subagent' || !agent.session_id)
    throw new PgxError('USAGE', `"${agent.name}" is not a subagent's branch.`, 'See `pgx agent ls`.');
  const [session] = (
    await records.findRecords(e.registry, { project: e.config.project, sessionId: agent.session_id })
  ).filter((r) => r.host === agent.host);
  if (!session)
    throw new PgxError(
      'NOT_FOUND',
      `Agent ${agentId}'s session has no branch of its own to merge into.`,
      'A session branch exists when `[agent] session_branch` is on (the default); see `pgx agent ls`.',
    );
  if (session.state !== 'active')
    throw new PgxError(
      'REFUSED',
      `Agent ${agentId}'s session has ended: its branch "${session.name}" is retiring (gc drops it at ` +
        `${clockTime(session.deadline)}); a merge into it would go with it.`,
      `Make it active again first (\`pgx agent up --session ${session.session_id}\`), then merge. The subagent's ` +
        `branch "${agent.name}" is kept until ${clockTime(agent.deadline)}.`,
    );
  return { agent, session };
}
