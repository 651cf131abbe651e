// UserPromptSubmit: the parent's prompt brings its subagents' waiting handoffs, and keeps the session's branch alive
// (a heartbeat, at most one per idle period: heartbeats.ts).
import { withEngine } from '../../engine/api.js';
import * as P from './payloads.js';
import { sessionTarget, type Handler } from './hook-handler.js';
import { noteHeartbeat, recentHeartbeat } from './heartbeats.js';
import { handoffsFor } from './parent-handoffs.js';

export const userPromptSubmit: Handler<typeof P.userPromptSubmitSchema> = {
  schema: P.userPromptSubmitSchema,
  async run(p, h) {
    if (p.agent_id !== undefined) return { outcome: 'skipped' };
    // What its subagents changed, if any is waiting: background agents' task notifications come in as prompts.
    const { context, tail } = await handoffsFor(h, p.session_id);
    const said = context
      ? { output: { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } } }
      : {};
    if (!h.config.sessionBranch) return { ...said, outcome: `skipped${tail}` };
    const key = JSON.stringify([
      h.config.serverUrl ?? null,
      h.config.home,
      h.config.project,
      h.config.host,
      p.session_id,
    ]);
    const recently = recentHeartbeat(key, h.config.idleTtlMs);
    if (recently) return { ...said, outcome: `heartbeat:recent${tail}`, branch: recently };
    const r = await withEngine(h.config, (e) => e.touch(sessionTarget(p)), h.engine);
    if (!r.branch) return { ...said, outcome: `no-branch${tail}` };
    if (r.heartbeat) noteHeartbeat(key, r.branch);
    return { ...said, outcome: `${r.heartbeat ? 'heartbeat' : `not-active:${r.state}`}${tail}`, branch: r.branch };
  },
  onError: () => ({ outcome: 'error' }), // never blocks a prompt
};
