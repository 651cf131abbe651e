// The subagents that did not get their session's state (engine/fork-miss.ts, decision 485), from the registry's
// record of each miss in the last 24 hours: what each got instead (nothing yet, or the template under
// `[agent] fork_fallback = "template"`), why, and what makes the copy possible. A miss a later try made good counts as
// history, not a problem. Reads only.
import { FALLBACK_SETTING, forkMisses, missFix, missReason, type ForkMissRow } from '../engine/inspect.js';
import { ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

const WINDOW_MS = 24 * 3_600_000;

export async function forkCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('session-forks', ctx);
  const reg = await ctx.registry();
  const all = reg ? await forkMisses(reg, ctx.config.project, WINDOW_MS) : [];
  const open = all.filter((m) => m.resolved_at === null);
  const later = all.length - open.length;
  const since = later ? ` (${later} that missed it got it on a later try)` : '';
  if (!open.length) return ok('session-forks', `every subagent of the last 24 h got its session's state${since}`);
  const latest = open[0]!;
  const lines = open.slice(0, 3).map(describe).join('; ');
  const fallback = ctx.config.forkFallback === 'template';
  return warn(
    'session-forks',
    `${open.length} subagent(s) of the last 24 h did NOT get a copy of their session's branch: ${lines}` +
      `${open.length > 3 ? `; … ${open.length - 3} more` : ''}${since}`,
    `${missFix(latest)}${fallback ? '' : `; or set ${FALLBACK_SETTING} in ${ctx.config.file ?? '.pgx.toml'} (the template instead, said to everyone)`}`,
  );
}

function describe(m: ForkMissRow): string {
  const got =
    m.fallback === 'template'
      ? `got the template instead (${FALLBACK_SETTING})`
      : `had no branch (refused ${m.misses} time(s); [agent] fork_fallback = "wait")`;
  return (
    `agent ${m.agent_id ?? '?'} (${m.branch}) at ${new Date(m.at).toISOString().slice(0, 19)}Z ${got}: ` +
    missReason({ ...m, waited_ms: m.waited_ms ?? 0 })
  );
}
