// The warm pool's health: members ready against the target, stale members waiting for gc, pool-stamped databases
// without a record, and the last background filler's outcome (<PGX_HOME>/agent/pool-fill.log). Reads only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { poolStatus } from '../engine/pool.js';
import { templateName } from '../engine/template.js';
import { stampedDatabases } from '../server/catalog.js';
import { ok, skip, warn, type Check, type DoctorContext } from './types.js';

function lastFill(home: string): { outcome?: string; error?: string; time?: string } | undefined {
  try {
    const lines = readFileSync(join(home, 'agent', 'pool-fill.log'), 'utf8').trim().split('\n');
    return JSON.parse(lines.at(-1)!) as { outcome?: string; error?: string; time?: string };
  } catch {
    return undefined;
  }
}

export async function poolCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skip('pool', 'server not reachable');
  const config = ctx.config;
  const reg = await ctx.registry();
  const [t] = reg ? await reg.query<{ exists: boolean }>("SELECT to_regclass('pgx_pool') IS NOT NULL AS exists") : [{ exists: false }];
  if (!reg || !t!.exists) return ok('pool', config.pool.size ? `empty: never filled yet (size ${config.pool.size}; SessionStart starts the filler)` : 'off ([agent] pool = 0)');
  const st = await poolStatus({ config, admin: s.admin, registry: reg });
  const recorded = new Set((await reg.query<{ name: string }>('SELECT name FROM pgx_pool')).map((r) => r.name));
  const prefix = `${templateName(config.project, config.source).replace(/^pgx_tpl_/, 'pgx_pool_')}_`;
  const unrecorded = (await stampedDatabases(s.db, 'pool')).filter((d) => d.startsWith(prefix) && !recorded.has(d));
  const detail = `${st.ready}/${st.target} ready for ${templateName(config.project, config.source)} (bound: ${st.bound}; size ${st.size}, peak ${st.peak}, max ${st.pool_max})`;
  if (unrecorded.length) {
    return warn('pool', `${unrecorded.length} pool-stamped database(s) with no record: ${unrecorded.slice(0, 5).join(', ')} (a registry that was dropped?)`, 'check them, then drop them with dropdb');
  }
  if (st.size === 0) return st.ready ? warn('pool', `off, but ${st.ready} member(s) are left`, 'pgx agent pool drain') : ok('pool', 'off ([agent] pool = 0)');
  const last = lastFill(config.home);
  if (last?.outcome === 'error') return warn('pool', `${detail}; the last background fill failed (${last.time}): ${last.error}`, 'pgx agent pool fill');
  if (st.stale) return warn('pool', `${detail}; ${st.stale} stale member(s) (an older template build, other guards, or a dead filler's)`, 'pgx agent gc');
  if (st.ready < st.target && !st.filler_running) return warn('pool', `${detail}: below target, and no filler is running`, 'pgx agent pool fill');
  return ok('pool', `${detail}${st.filler_running ? ', filler running' : ''}`);
}
