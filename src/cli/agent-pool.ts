// pgx agent pool status | fill | drain: the warm pool of pre-cloned branches (src/engine/pool.ts).
import type { Command } from 'commander';
import { withEngine, type PoolStatus } from '../engine/api.js';
import { paint } from '../lib/output.js';
import { finishPoolFill } from '../hooks/claude/pool-fill.js';
import { action, configFor, withCommon, type CommonOpts } from './common.js';

/** The detached filler refills after a burst of SubagentStarts, not during it (engine/pool.ts waitForLull). */
const FILL_SETTLE_MS = 1500;

const mb = (n: number | null) => (n === null ? '?' : `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`);

/** The one-line summary `agent ls` prints under its table, and `pool status` prints whole. */
export function poolLine(s: PoolStatus): string {
  if (s.size === 0 && s.ready === 0) return paint('pool: off ([agent] pool = 0)', 'dim');
  const extra = [
    s.filling ? `${s.filling} filling` : '',
    s.stale ? `${s.stale} stale (gc drops them)` : '',
    s.filler_running ? 'filler running' : '',
  ].filter(Boolean);
  return (
    `pool: ${s.ready}/${s.target} ready (bound: ${s.bound}; peak ${s.peak}, max ${s.pool_max}, budget ${mb(s.pool_max_bytes)}, ` +
    `template ${mb(s.template_bytes)})${extra.length ? `, ${extra.join(', ')}` : ''}`
  );
}

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  const pool = agent
    .command('pool')
    .description('the warm pool: branches cloned ahead, claimed by SubagentStart in O(1)');

  withCommon(pool.command('status').description("the pool's members, target and what bounds it")).action(
    action<CommonOpts>(async (opts, out) => {
      const s = await withEngine(configFor(opts), (e) => e.poolStatus());
      out.result(s, () => poolLine(s));
    }),
  );

  withCommon(pool.command('fill').description('top the pool up to its target now (one filler at a time)'))
    .option('--background', 'quiet, logs to <PGX_HOME>/agent/pool-fill.log (what hooks start, detached)')
    .action(
      action<CommonOpts & { background?: boolean }>(async (opts, out) => {
        const config = configFor(opts);
        if (opts.background) {
          try {
            const r = await withEngine(config, (e) => e.fillPool(undefined, { settleMs: FILL_SETTLE_MS }), {
              quiet: true,
            });
            // 'disk_reserve': stopped short of the target for the disk budget (the doctor's pool line says so)
            finishPoolFill(config, {
              outcome: r.busy ? 'busy' : r.disk_note ? 'disk_reserve' : 'filled',
              created: r.created.length,
              swept: r.swept.length,
              ready: r.ready,
              target: r.target,
              elapsed_ms: r.elapsed_ms,
              ...(r.disk_note ? { error: r.disk_note } : {}),
            });
          } catch (err) {
            finishPoolFill(config, { outcome: 'error', error: (err as Error).message });
            return 7;
          }
          return;
        }
        const r = await withEngine(config, (e) => e.fillPool((m) => out.progress(m)));
        out.result(r, () =>
          r.busy
            ? 'another filler is running; it tops the pool up'
            : `pool: ${r.ready}/${r.target} ready (${r.created.length} cloned, ${r.swept.length} stale dropped) in ` +
              `${r.elapsed_ms} ms${r.disk_note ? `; stopped short: ${r.disk_note}` : ''}`,
        );
      }),
    );

  withCommon(
    pool
      .command('drain')
      .description("drop every member of this project's pool (set [agent] pool = 0 to keep it empty)"),
  ).action(
    action<CommonOpts>(async (opts, out) => {
      const r = await withEngine(configFor(opts), (e) => e.drainPool());
      out.result(r, () => `pool drained: ${r.dropped.length} member(s) dropped`);
    }),
  );
}
