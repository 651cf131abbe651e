// The text `pgx agent ls | down | gc` print around their tables: the frozen copies, what stopped subagents changed,
// the records left alone, the retiring branches gc waits for. Their own module so agent-branches.ts stays registration.
import type { FrozenCopySummary } from '../engine/api.js';
import { clockTime, paint } from '../lib/output.js';

/** The frozen copies forks clone (one per state of a parent branch): what each is a copy of, its size, its state. */
export function frozenLines(frozen: FrozenCopySummary[]): string {
  return frozen
    .map((f) => {
      const what =
        f.state === 'making'
          ? "in the making (or a killed maker's: the next fork or gc drops it)"
          : `${f.method}, ${Math.round((f.bytes ?? 0) / 1048576)} MB${f.reusable ? '' : ', not reusable'}` +
            (f.kept_by ? `, kept as the fork point of ${f.kept_by} branch(es) not yet merged` : '');
      return `\nfrozen copy ${f.name} of ${f.parent}: ${what}`;
    })
    .join('');
}

/** "2026-12-05 10:42:13 (in 9m 58s)": a deadline as a date and time and how far off it is. */
export function untilText(deadline: string | null | undefined): string {
  return deadline ? clockTime(deadline) : 'its deadline';
}

/** gc found nothing to drop: say when the retiring branches will be, and how to drop them now. */
export function gcNothing(retiring: { name: string; deadline: string }[]): string {
  if (!retiring.length) return 'nothing past its deadline';
  const soonest = [...retiring].sort((a, b) => a.deadline.localeCompare(b.deadline));
  const shown = soonest
    .slice(0, 5)
    .map((b) => `  ${b.name}  until ${untilText(b.deadline)}`)
    .join('\n');
  return (
    `nothing past its deadline; ${retiring.length} retiring branch(es) wait for their grace period to end:\n` +
    `${shown}${retiring.length > 5 ? '\n  …' : ''}\nTo ` +
    `drop them now: pgx agent down --project --now (or --id/--agent/--branch … --now for one)`
  );
}

/** Under the table: what each stopped subagent changed (its SubagentStop summary), for the parent's review. */
export function changeNotes(
  branches: {
    name: string;
    changes: { changed: boolean | null; lines: string[]; error?: string } | null;
    merged_into?: string | null;
  }[],
): string {
  return branches
    .filter((b) => (b.changes && b.changes.changed !== false) || b.merged_into)
    .map(
      (b) =>
        `\n${b.name} ` +
        (!b.changes || b.changes.changed === false
          ? ''
          : b.changes.changed === null
            ? `(change summary failed: ${b.changes.error}; \`pgx agent diff --branch ${b.name}\`)`
            : `changed: ${b.changes.lines.join('; ')}`) +
        (b.merged_into ? paint(`${b.changes?.changed ? '; ' : ''}merged into ${b.merged_into}`, 'green') : ''),
    )
    .join('');
}

/** Records left alone because their database is not pgx's: said, with the command that clears each. */
export function foreignNotes(results: { name: string; action: string; fix?: string }[]): string {
  return results
    .filter((r) => r.action === 'foreign')
    .map(
      (r) =>
        `\n${r.name}: its database is not the one pgx made, so pgx left it alone. To forget pgx's record of it (only the record): ${r.fix}`,
    )
    .join('');
}

export function stateColor(state: string, exists: boolean | null): string {
  if (exists === false) return paint(`${state} (missing)`, 'red');
  return state === 'active' ? paint(state, 'green') : state === 'retiring' ? paint(state, 'yellow') : state;
}
