// A branch as `pgx agent ls` shows it (and `--json` prints it): its record in plain fields, dates as ISO text, never
// its role's password. Apart from api.ts, the facade, whose list() returns these.
import type { BranchRecord, BranchState } from '../registry/records.js';
import type { ChangeSummary } from './handoff-text.js';

export interface BranchSummary {
  name: string;
  project: string;
  host: string;
  kind: BranchRecord['kind'];
  session_id: string | null;
  agent_id: string | null;
  id: string | null;
  source: string | null;
  state: BranchState;
  exists: boolean | null;
  created_at: string;
  last_seen_at: string;
  deadline: string;
  deadline_kind: BranchRecord['deadline_kind'];
  /** The branch's own login role (null: its commands use the admin role). Never its password. */
  role: string | null;
  /** The database this branch was forked from (its session's branch, or another: engine/fork.ts); null: the template. */
  parent: string | null;
  forked_at: string | null;
  /** A subagent's change summary, recorded at its SubagentStop (null: none recorded). Names and counts only. */
  changes: ChangeSummary | null;
  /** The frozen copy it was cloned from, kept as its fork point (null: the template build, base_template, or none). */
  fork_point: string | null;
  /** `pgx agent merge` applied its changes to this branch (null: not merged), and when. */
  merged_into: string | null;
  merged_at: string | null;
}

export function summarize(r: BranchRecord): BranchSummary {
  return {
    name: r.name,
    project: r.project,
    host: r.host,
    kind: r.kind,
    session_id: r.session_id,
    agent_id: r.agent_id,
    id: r.exec_id,
    source: r.source,
    state: r.state,
    exists: r.db_exists ?? null,
    created_at: new Date(r.created_at).toISOString(),
    last_seen_at: new Date(r.last_seen_at).toISOString(),
    deadline: new Date(r.deadline).toISOString(),
    deadline_kind: r.deadline_kind,
    role: r.role ?? null,
    parent: r.parent ?? null,
    forked_at: r.forked_at ? new Date(r.forked_at).toISOString() : null,
    changes: (r.changes as ChangeSummary | null | undefined) ?? null,
    fork_point: r.fork_point ?? null,
    merged_into: r.merged_into ?? null,
    merged_at: r.merged_at ? new Date(r.merged_at).toISOString() : null,
  };
}
