// The warm pool's health: members ready against the target, stale members waiting for gc, pool-stamped databases
// without a record, and the last background filler's outcome (<PGX_HOME>/agent/pool-fill.log). Reads only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clockTime } from '../lib/output.js';
import { fixStatement, inspectPool, msSinceLastBranch, stampedDatabases, templateName } from '../engine/inspect.js';
import { sqlFix } from './sql-fix.js';
import { ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

/**
 * This project's last background fill: the log is the pgx home's, shared by every project (the demo's fills are in
 * it too), and another project's fill said nothing of this one's pool (issue 30). A line without a project (older
 * pgx) is nobody's.
 */
function lastFill(home: string, project: string): { outcome?: string; error?: string; time?: string } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(home, 'agent', 'pool-fill.log'), 'utf8')
      .trim()
      .split('\n');
  } catch {
    return undefined;
  }
  for (const raw of lines.reverse()) {
    try {
      const l = JSON.parse(raw) as { outcome?: string; error?: string; time?: string; project?: string };
      if (l.project === project) return l;
    } catch {
      // a torn line
    }
  }
  return undefined;
}

export async function poolCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('pool', ctx);
  const config = ctx.config;
  const reg = await ctx.registry();
  const pool = await inspectPool(config, s.admin, reg);
  if (!reg || !pool)
    return ok(
      'pool',
      config.pool.size
        ? `empty: never filled yet (size ${config.pool.size}; SessionStart starts the filler)`
        : 'off ([agent] pool = 0)',
    );
  const { status: st, recorded } = pool;
  const prefix = `${templateName(config.project, config.source).replace(/^pgx_tpl_/, 'pgx_pool_')}_`;
  const unrecorded = (await stampedDatabases(s.db, 'pool')).filter((d) => d.startsWith(prefix) && !recorded.has(d));
  const detail =
    `${st.ready}/${st.target} ready for ${templateName(config.project, config.source)} (bound: ${st.bound}; ` +
    `size ${st.size}, peak ${st.peak}, max ${st.pool_max})`;
  if (unrecorded.length) {
    // No drop is suggested: without a record nothing proves pgx made them (a stamp is text anyone can copy).
    return warn(
      'pool',
      `${unrecorded.length} pool-stamped database(s) with no record: ${unrecorded.slice(0, 5).join(', ')} (a ` +
        `registry that was dropped?); pgx cannot prove they are its own, so it never drops them: check what each ` +
        `holds, and drop it yourself only if you know it is a leftover`,
      unrecorded
        .slice(0, 5)
        .map((d) => sqlFix(config, s.admin, fixStatement.describeDatabase(d)))
        .join(' && '),
    );
  }
  if (st.size === 0)
    return st.ready
      ? warn('pool', `off, but ${st.ready} member(s) are left`, 'pgx agent pool drain')
      : ok('pool', 'off ([agent] pool = 0)');
  const last = lastFill(config.home, config.project);
  if (last?.outcome === 'error')
    return warn(
      'pool',
      `${detail}; the last background fill failed (${last.time ? clockTime(last.time) : 'time not logged'}): ${last.error}`,
      'pgx agent pool fill',
    );
  if (last?.outcome === 'disk_reserve' && st.ready < st.target)
    return warn(
      'pool',
      `${detail}; the last background fill stopped short for the disk budget (${last.time ? clockTime(last.time) : 'time not logged'}): ${last.error}`,
      "free space on the server's file system (pgx agent gc), or lower [disk] reserve; then: pgx agent pool fill",
    );
  if (st.stale)
    return warn(
      'pool',
      `${detail}; ${st.stale} stale member(s) (an older template build, other guards, or a dead filler's)`,
      'pgx agent gc',
    );
  // Right after install nothing has filled the pool yet: no template build, or no branch of it and no background
  // fill ever logged. That is how it starts, not a fault: the first SessionStart starts the filler (decision 137).
  const fresh =
    st.ready === 0 &&
    st.filling === 0 &&
    !st.stale &&
    !st.filler_running &&
    last === undefined &&
    (st.generation === null || (await msSinceLastBranch(reg, st.template)) === null);
  if (fresh)
    return ok(
      'pool',
      `${detail}: not filled yet; the pool fills at the first session (SessionStart starts the filler)`,
    );
  if (st.ready < st.target && !st.filler_running)
    return warn('pool', `${detail}: below target, and no filler is running`, 'pgx agent pool fill');
  return ok('pool', `${detail}${st.filler_running ? ', filler running' : ''}`);
}
