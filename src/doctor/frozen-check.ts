// The frozen copies forks clone (engine/freeze.ts, decision 400): how many, how much disk, and what gc has to do:
// a killed maker's leftover, a copy whose parent is no longer an active branch, a frozen-stamped database with no
// record (never dropped by pgx: nothing proves it is its own). Reads only.
import { branchRecords, fixStatement, forkPointsKept, frozenCopies, stampedDatabases } from '../engine/inspect.js';
import { sqlFix } from './sql-fix.js';
import { ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

const MAKING_TOO_LONG_MS = 10 * 60_000;

export async function frozenCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('frozen-copies', ctx);
  const config = ctx.config;
  const reg = await ctx.registry();
  if (!reg) return ok('frozen-copies', 'none');
  const all = await frozenCopies(reg);
  const unrecorded = (await stampedDatabases(s.db, 'frozen')).filter((d) => !all.some((f) => f.name === d));
  if (unrecorded.length) {
    return warn(
      'frozen-copies',
      `${unrecorded.length} frozen-stamped database(s) with no record: ${unrecorded.slice(0, 5).join(', ')} ` +
        `(a registry that was dropped?); pgx cannot prove they are its own, so it never drops them: check what ` +
        `each holds, and drop it yourself only if you know it is a leftover`,
      unrecorded
        .slice(0, 5)
        .map((d) => sqlFix(config, s.admin, fixStatement.describeDatabase(d)))
        .join(' && '),
    );
  }
  const mine = all.filter((f) => f.project === config.project);
  if (!mine.length)
    return ok('frozen-copies', 'none for this project (made when subagents fork a changed session branch)');
  const active = new Set(
    (await branchRecords(reg, { project: config.project })).filter((r) => r.state === 'active').map((r) => r.name),
  );
  const bytes = mine.reduce((n, f) => n + Number(f.bytes ?? 0), 0);
  // Fork points (decision 500): kept while a subagent's branch made from them may still be merged; a full copy each
  // on a file system without copy-on-write, so counted here and against the disk reserve like any other copy.
  const keptBy = await forkPointsKept(reg);
  const kept = mine.filter((f) => keptBy.has(f.name));
  const keptBytes = kept.reduce((n, f) => n + Number(f.bytes ?? 0), 0);
  const detail =
    `${mine.length} for ${new Set(mine.map((f) => f.parent)).size} branch(es), ${Math.round(bytes / 1048576)} MB` +
    (kept.length
      ? `; ${kept.length} of them (${Math.round(keptBytes / 1048576)} MB) kept as fork points of subagents' branches not yet merged`
      : '');
  const stuck = mine.filter(
    (f) => f.state === 'making' && Date.now() - new Date(f.started_at).getTime() > MAKING_TOO_LONG_MS,
  );
  const orphaned = mine.filter((f) => f.state === 'ready' && !active.has(f.parent) && !keptBy.has(f.name));
  if (stuck.length)
    return warn(
      'frozen-copies',
      `${detail}; ${stuck.length} in the making for over 10 min (a killed maker's): ${stuck.map((f) => f.name).join(', ')}`,
      'pgx agent gc',
    );
  if (orphaned.length)
    return warn(
      'frozen-copies',
      `${detail}; ${orphaned.length} of a branch no longer active: ${orphaned.map((f) => f.name).join(', ')}`,
      'pgx agent gc',
    );
  return ok('frozen-copies', detail);
}
