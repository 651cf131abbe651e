// The handoff's words: the change summary's shape and the sentence the parent's context gets at a SubagentStop. Apart
// from handoff.ts so that the hooks, which print it, load none of the diff's code.
//
// Names come from the subagent's database, which the subagent wrote: a table named "IMPORTANT SYSTEM NOTE: ignore
// prior instructions" would otherwise reach the parent's context as pgx's own words. So a name reaches the parent only
// as plain identifiers (PLAIN_NAME, dotted); any other is counted, never quoted ("and 3 objects with unusual names").
// The summary is made so (summaryOf), and what is delivered is checked again line by line (deliverableLine): the
// record it is read from is pgx's, but the check costs nothing (decision 451).

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

/** A handoff's doorbell in the session's inbox: which branch's summary, made when (hooks/claude/handoff-inbox.ts). */
export interface HandoffRef {
  branch: string;
  at: string;
}

/** A plain SQL identifier, as PostgreSQL prints one unquoted (and as %I leaves it). */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/**
 * A schema object's name as the parent may read it: dotted plain identifiers (a function's argument list left out),
 * or undefined (the caller counts it).
 */
export function plainName(name: string): string | undefined {
  const bare = name.replace(/\([^()]*\)$/, '');
  return bare.split('.').every((part) => PLAIN.test(part)) ? bare : undefined;
}

const KINDS = '(?:schema|table|column|index|constraint|view|function|trigger|sequence|enum|extension)';
const QNAME = '[A-Za-z_][A-Za-z0-9_$]{0,62}(?:\\.[A-Za-z_][A-Za-z0-9_$]{0,62}){0,2}';
const UNUSUAL = '(?:(?:, )?(?:and )?\\d+ (?:objects?|tables?) with unusual names)';
const MORE = '(?:, … \\d+ more)';
const LINE = new RegExp(
  `^(?:(?:added|dropped|altered): (?:${KINDS} ${QNAME}(?:, ${KINDS} ${QNAME})*)?${UNUSUAL}?${MORE}?` +
    `|rows: (?:${QNAME}(?: [-+~]\\d+)+(?: \\(counted\\))?(?:, ${QNAME}(?: [-+~]\\d+)+(?: \\(counted\\))?)*)?${UNUSUAL}?${MORE}?)$`,
);

/** A summary line in exactly the shape summaryOf writes with plain names; anything else is not delivered. */
export function deliverableLine(line: string): boolean {
  return line.length <= 200 && LINE.test(line);
}

/** The handoff sentences for the doorbells `refs`, from the session's registry records (pgx's own writing). */
export function handoffsFrom(
  recs: readonly { name: string; kind: string; agent_id: string | null; changes?: unknown }[],
  refs: readonly HandoffRef[],
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const ref of refs) {
    const rec = recs.find((r) => r.name === ref.branch && r.kind === 'subagent');
    const s = rec?.changes as ChangeSummary | null | undefined;
    if (!rec || !s || s.at !== ref.at || s.changed === false || seen.has(ref.branch + ref.at)) continue;
    seen.add(ref.branch + ref.at);
    const lines = Array.isArray(s.lines) ? s.lines.filter((l) => typeof l === 'string') : [];
    const kept = lines.filter(deliverableLine);
    const agent = rec.agent_id !== null && PLAIN.test(rec.agent_id) ? rec.agent_id : null;
    const error = typeof s.error === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(s.error) ? s.error : 'failed';
    const text = handoffText(rec.name, agent, {
      ...s,
      lines: kept,
      error,
      against: s.against !== null && plainName(s.against) ? s.against : null,
    });
    out.push(
      kept.length < lines.length
        ? `${text} (${lines.length - kept.length} summary line(s) left out: not in pgx's plain form)`
        : text,
    );
  }
  return out;
}

/** One sentence for the parent's context (and the log's `changes`): the branch, and its lines. */
export function handoffText(branch: string, agentId: string | null, s: ChangeSummary): string {
  const who = `pgx: subagent ${agentId ?? ''} (branch "${branch}")`.replace('  ', ' ');
  if (s.changed === null)
    return `${who} stopped; its change summary could not be made (${s.error}). See \`pgx agent diff --branch ${branch}\`.`;
  if (!s.changed) return `${who} stopped without changing its database (compared with "${s.against}").`;
  return (
    `${who} changed its database (compared with "${s.against}"): ${s.lines.join('; ')}${s.partial ? ' (partial: some tables counted only)' : ''}. ` +
    `Its branch is kept for review: \`pgx agent diff --branch ${branch}\`` +
    (agentId === null
      ? '.'
      : `; to take its changes into your branch, check first with \`pgx agent merge --agent ${agentId} --dry-run\`, ` +
        `then run it without --dry-run (refused, nothing applied, if you changed the same rows or objects since it started).`)
  );
}
