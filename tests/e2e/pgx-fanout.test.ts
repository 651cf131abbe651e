/**
 * Fan-out with the real Claude Code CLI: twenty subagents in one message, with pgx's hooks (the warm pool filled
 * ahead) against the same session with trivial hooks (`cat > /dev/null` for the same six events), alternated twice.
 * It asserts what pgx must do (20 own branches, every command routed to its own one); the wall-clock ratio is a
 * figure for the bench record (.tmp/pgx-e2e-figures.jsonl), never asserted: the machines are 2 noisy cores.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  PSQL_ALLOWED,
  branches,
  ccHookLatency,
  claudeBin,
  cleanupRoots,
  describeRun,
  hookLog,
  makeE2eProject,
  makeSource,
  pgx,
  recordFigures,
  runScenario,
  warnIfSkipped,
  type E2eProject,
} from './pgx-harness.js';

warnIfSkipped();
afterAll(cleanupRoots);

const LIST = `select 'db=' || current_database();`;
const command = `psql -X -At -v ON_ERROR_STOP=1 -c "${LIST}"`;
const markers = Array.from({ length: 20 }, (_, i) => `f${String(i).padStart(2, '0')}`);
const script = { subagents: markers.map((marker) => ({ marker, commands: [command] })) };

/** The same six hook entries, each doing nothing but reading its payload. */
function useTrivialHooks(p: E2eProject): void {
  const file = join(p.cwd, '.claude', 'settings.json');
  const settings = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]> };
  for (const entries of Object.values(settings.hooks)) for (const e of entries) for (const h of e.hooks) h.command = 'cat > /dev/null';
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

describe.skipIf(!claudeBin)('fan-out: 20 subagents, pgx vs trivial hooks (real Claude Code)', () => {
  it('every subagent gets its own branch (claimed from the warm pool) and every command runs in it; wall time recorded', async () => {
    const source = await makeSource();
    const withPgx = makeE2eProject({ source, toml: '[agent]\npool_max = 20\n' });
    for (const env of [withPgx.env, withPgx.claudeEnv]) env.PGX_POOL = '20';
    const trivial = makeE2eProject({ source });
    useTrivialHooks(trivial);

    const walls: { pgx: number[]; trivial: number[] } = { pgx: [], trivial: [] };
    let claims = 0;
    for (let round = 0; round < 2; round++) {
      const t = Date.now();
      const base = await runScenario(trivial, script, { allowedTools: PSQL_ALLOWED });
      walls.trivial.push(Date.now() - t);
      console.log(`[pgx-e2e] fan-out round ${round}: trivial hooks ${walls.trivial[round]} ms`);
      expect(base.out.code, describeRun(base)).toBe(0);

      // Filled ahead, outside the measurement, as SessionStart's background filler would have by then.
      expect(pgx(withPgx, ['agent', 'pool', 'fill']).status).toBe(0);
      const before = hookLog(withPgx).length;
      const t0 = Date.now();
      const run = await runScenario(withPgx, script, { allowedTools: PSQL_ALLOWED });
      walls.pgx.push(Date.now() - t0);
      console.log(`[pgx-e2e] fan-out round ${round}: pgx ${walls.pgx[round]} ms`);
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(run.fake.errors).toEqual([]);

      const subs = branches(withPgx).filter((b) => b.kind === 'subagent' && b.session_id === run.sessionId);
      expect(subs).toHaveLength(20);
      const byAgent = new Map(subs.map((b) => [b.agent_id, b.name]));
      for (const m of markers) {
        const own = byAgent.get(run.fake.agentIds.get(m) ?? '?');
        expect(own, m).toBeTruthy();
        expect(run.fake.toolResults.get(m)?.[0], m).toContain(`db=${own}`);
      }
      const lines = hookLog(withPgx).slice(before);
      claims += lines.filter((l) => l.event === 'subagent-start' && /claim/.test(l.outcome)).length;
      // pgx's own time per hook (from its log) and how many the broker answered: against Claude Code's measured
      // latency, what is left is the process start and the wait for a CPU.
      const own = (event: string) => {
        const ls = lines.filter((l) => l.event === event && l.agent_id !== null);
        const ms = ls.map((l) => l.elapsed_ms).sort((a, b) => a - b);
        return { n: ls.length, via_broker: ls.filter((l) => l.via === 'broker').length, p50_ms: ms[Math.floor(ms.length / 2)] ?? null, max_ms: ms.at(-1) ?? null };
      };
      if (round === 1) {
        recordFigures('3-fanout-vs-trivial-hooks', {
          wall_ms_pgx: walls.pgx,
          wall_ms_trivial: walls.trivial,
          ratio: Number((walls.pgx.reduce((a, b) => a + b) / walls.trivial.reduce((a, b) => a + b)).toFixed(2)),
          subagent_starts_claimed: `${claims}/40`,
          cc_subagent_start_ms: ccHookLatency(run.debugFile, 'SubagentStart'),
          cc_pre_tool_use_ms: ccHookLatency(run.debugFile, 'PreToolUse'),
          pgx_subagent_start: own('subagent-start'),
          pgx_pre_tool_use: own('pre-tool-use'),
          pgx_subagent_stop: own('subagent-stop'),
        });
      }
      expect(pgx(withPgx, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
    }
    expect(pgx(withPgx, ['agent', 'pool', 'drain']).status).toBe(0);
  }, 600_000);
});
