// Which branch a command means: --agent (a subagent), --id (an explicit branch) or --session, resolved to an identity
// and ensured. Shared by `agent exec` and `agent up`.
import type { Config } from '../config.js';
import { PgxError } from '../errors.js';
import type { Identity } from '../identity.js';
import * as registry from '../registry.js';
import { ensureBranch, type EnsureResult } from './branch.js';
import type { Engine } from './context.js';

export interface Target {
  agentId?: string;
  execId?: string;
  sessionId?: string;
}

export function identityFor(config: Config, t: Target): Identity {
  return { project: config.project, host: config.host, sessionId: t.sessionId, agentId: t.agentId, execId: t.execId };
}

/**
 * Ensure the target's branch. `--agent` without a session id (the PreToolUse rewrite carries only the agent id;
 * Claude Code normally exports CLAUDE_CODE_SESSION_ID to Bash, which fills it in) attaches to the one branch the hook
 * made for that agent in this project on this host. It never creates one without the session, and when the agent
 * id has branches in more than one session it refuses rather than guess, so a command can't land on another's branch.
 */
export async function ensureTarget(e: Engine, t: Target): Promise<EnsureResult> {
  if (t.agentId !== undefined && t.sessionId === undefined) {
    const recs = (await registry.findRecords(e.db, { project: e.config.project, agentId: t.agentId })).filter((r) => r.kind === 'subagent' && r.host === e.config.host);
    const sessions = new Set(recs.map((r) => r.session_id));
    if (recs.length === 0) {
      throw new PgxError('NOT_FOUND', `No branch for agent ${t.agentId} in project "${e.config.project}".`, 'Pass --session <id> (or run inside Claude Code, which sets CLAUDE_CODE_SESSION_ID) so pgx can create it.');
    }
    if (sessions.size > 1) {
      throw new PgxError('USAGE', `Agent ${t.agentId} has branches in ${sessions.size} sessions of project "${e.config.project}".`, 'Pass --session <id> (Claude Code sets CLAUDE_CODE_SESSION_ID for its Bash commands).');
    }
    t = { ...t, sessionId: recs[0]!.session_id ?? undefined };
  }
  if (t.agentId === undefined && t.execId === undefined && t.sessionId === undefined) {
    throw new PgxError('USAGE', 'Say which branch: --agent <id>, --id <id> or --session <id>.', 'e.g. `pgx agent exec --id demo -- psql -c "select 1"`.');
  }
  return ensureBranch(e, identityFor(e.config, t));
}
