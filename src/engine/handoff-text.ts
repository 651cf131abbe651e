// The handoff's words: the change summary's shape and the sentence the parent's context gets at a SubagentStop. Apart
// from handoff.ts so that the hooks, which print it, load none of the diff's code.

export interface ChangeSummary {
  /** Anything added, dropped, altered, or rows that differ; null: the summary failed (see `error`). */
  changed: boolean | null;
  /** The database compared against (the parent, or the template). */
  against: string | null;
  schema: { added: number; dropped: number; altered: number };
  tables_changed: number;
  rows: { added: number; removed: number; changed: number };
  /** Some tables were counted only (over the bound) or not reached (the time budget). */
  partial: boolean;
  /** A few lines for a reader: kinds and names, row counts per table. */
  lines: string[];
  /** Why there is no summary: `timeout`, or the SQLSTATE / pgx error code. Never a message (it could quote data). */
  error?: string;
  at: string;
}

/** One sentence for the parent's context (and the log's `changes`): the branch, and its lines. */
export function handoffText(branch: string, agentId: string | null, s: ChangeSummary): string {
  const who = `pgx: subagent ${agentId ?? ''} (branch "${branch}")`.replace('  ', ' ');
  if (s.changed === null) return `${who} stopped; its change summary could not be made (${s.error}). See \`pgx agent diff --branch ${branch}\`.`;
  if (!s.changed) return `${who} stopped without changing its database (compared with "${s.against}").`;
  return `${who} changed its database (compared with "${s.against}"): ${s.lines.join('; ')}${s.partial ? ' (partial: some tables counted only)' : ''}. Its branch is kept for review: \`pgx agent diff --branch ${branch}\`.`;
}
