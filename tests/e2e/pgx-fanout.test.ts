/**
 * Fan-out with the real Claude Code CLI: twenty subagents in one message, with pgx's hooks (the warm pool filled
 * ahead) against the same session with trivial hooks (`cat > /dev/null` for the same six events) and with node hooks
 * that do nothing, alternated twice. pgx runs twice per round, with the hooks `install` writes: as they are (the
 * launcher's sh part hands each hook to the broker with curl, no node: decision 441) and with PGX_SHELL_LAUNCHER=0
 * (node starts for every hook and routed command, then asks the broker: the default before). It asserts what pgx must
 * do (20 own branches, every command routed to its own one) for both; the wall-clock ratios and the node processes
 * started are figures for the bench record (.tmp/pgx-e2e-figures.jsonl), never asserted: the machines are 2 noisy cores.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pollUntil } from '../helpers/poll.js';
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
  pgxJson,
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

/** A node hook that does nothing but read its payload: the issue's baseline for one hook event. */
const NODE_NOTHING = `node -e "require('fs').readFileSync(0)"`;

/** The same six hook entries, each doing nothing but reading its payload (`cat > /dev/null`, or `command`). */
function useTrivialHooks(p: E2eProject, command = 'cat > /dev/null'): void {
  const file = join(p.cwd, '.claude', 'settings.json');
  const settings = JSON.parse(readFileSync(file, 'utf8')) as {
    hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]>;
  };
  for (const entries of Object.values(settings.hooks))
    for (const e of entries) for (const h of e.hooks) h.command = command;
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

/** A `node` first on PATH that counts its starts (one line each) before it runs the real one: hooks that went to node. */
function countingNode(): { dir: string; starts: () => number; reset: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-nodecount-'));
  mkdirSync(join(dir, 'bin'));
  const count = join(dir, 'count');
  writeFileSync(join(dir, 'bin', 'node'), `#!/bin/sh\necho x >> '${count}'\nexec '${process.execPath}' "$@"\n`, {
    mode: 0o755,
  });
  return {
    dir,
    starts: () => (existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).length : 0),
    reset: () => rmSync(count, { force: true }),
  };
}

/** CPU time the whole machine spent (user, nice, system, irq, softirq), in ms: what a run cost beyond its wall time. */
function machineCpuMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]!) * 10; // USER_HZ is 100 on Linux
}

/** Hook processes Claude Code started in a run, per event (its debug log's "finished" lines of command hooks). */
function commandHooksRun(debugFile: string): Record<string, number> {
  const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
  const n: Record<string, number> = {};
  for (const m of text.matchAll(/Hooks: ([A-Za-z]+)(?::[^ ]+)? \[.*?\] finished with status/g))
    n[m[1]!] = (n[m[1]!] ?? 0) + 1;
  return n;
}

/** The mean of a command hook's durations as Claude Code logged them ("finished with status 0 (Nms)"). */
function ccCommandMeanMs(debugFile: string, event: string): number | null {
  const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
  const ms = [...text.matchAll(/Hooks: ([A-Za-z]+)(?::[^ ]+)? \[.*?\] finished with status \d+ \((\d+)ms\)/g)]
    .filter((m) => m[1] === event)
    .map((m) => Number(m[2]));
  return ms.length ? Math.round(ms.reduce((a, b) => a + b) / ms.length) : null;
}

describe.skipIf(!claudeBin)(
  'fan-out: 20 subagents, pgx (sh and node launcher) vs trivial hooks (real Claude Code)',
  () => {
    it('every subagent gets its own branch (claimed from the warm pool) and every command runs in it, through the sh launcher and through node; wall times and node starts recorded', async () => {
      const source = await makeSource();
      const node = countingNode();
      // node's own directory after the counter: the hooks' `exec node` finds the counter first
      const PATH = [
        join(node.dir, 'bin'),
        dirname(process.execPath),
        process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      ].join(':');
      const withPgx = makeE2eProject({ source, toml: '[agent]\npool_max = 20\n', env: { PATH } });
      const viaNode = makeE2eProject({ source, toml: '[agent]\npool_max = 20\n', env: { PGX_SHELL_LAUNCHER: '0' } });
      for (const p of [withPgx, viaNode]) for (const env of [p.env, p.claudeEnv]) env.PGX_POOL = '20';
      const trivial = makeE2eProject({ source });
      useTrivialHooks(trivial);
      const nodeNothing = makeE2eProject({ source });
      useTrivialHooks(nodeNothing, NODE_NOTHING);

      // A measured run must not share the two cores with the previous run's pool refill (a detached filler, after its
      // burst of SubagentStarts): each run starts once no filler of either pgx project is running (a pgx run's own
      // `pool fill` before it fills in the foreground, and leaves none).
      const settle = async () => {
        for (const p of [withPgx, viaNode])
          await pollUntil(
            async () =>
              pgxJson<{ filler_running: boolean }>(p, ['agent', 'pool', 'status']).filler_running ? undefined : true,
            180_000,
            500,
          );
      };
      const cpu = { pgx: 0, node_launcher: 0, trivial: 0, node: 0 };
      const measured = async <T>(kind: keyof typeof cpu, walls: number[], run: () => Promise<T>): Promise<T> => {
        const c0 = machineCpuMs();
        const t0 = Date.now();
        const r = await run();
        walls.push(Date.now() - t0);
        cpu[kind] += machineCpuMs() - c0;
        return r;
      };
      try {
        const walls: { pgx: number[]; node_launcher: number[]; trivial: number[]; node: number[] } = {
          pgx: [],
          node_launcher: [],
          trivial: [],
          node: [],
        };
        const claims = { pgx: 0, node_launcher: 0 };
        const figures: Record<string, unknown> = {};
        for (let round = 0; round < 2; round++) {
          await settle();
          const base = await measured('trivial', walls.trivial, () =>
            runScenario(trivial, script, { allowedTools: PSQL_ALLOWED }),
          );
          console.log(`[pgx-e2e] fan-out round ${round}: trivial hooks ${walls.trivial[round]} ms`);
          expect(base.out.code, describeRun(base)).toBe(0);
          await settle();
          const nothing = await measured('node', walls.node, () =>
            runScenario(nodeNothing, script, { allowedTools: PSQL_ALLOWED }),
          );
          expect(nothing.out.code, describeRun(nothing)).toBe(0);
          if (round === 1) {
            figures.node_nothing_ratio = Number(
              (walls.node.reduce((a, b) => a + b) / walls.trivial.reduce((a, b) => a + b)).toFixed(2),
            );
            figures.node_nothing_cc_pre_tool_use_ms = ccHookLatency(nothing.debugFile, 'PreToolUse');
            figures.node_nothing_cc_pre_tool_use_mean_ms = ccCommandMeanMs(nothing.debugFile, 'PreToolUse');
          }

          for (const [kind, p] of [
            ['pgx', withPgx],
            ['node_launcher', viaNode],
          ] as const) {
            // Filled ahead, outside the measurement, as SessionStart's background filler would have by then.
            await settle();
            expect(pgx(p, ['agent', 'pool', 'fill']).status).toBe(0);
            const before = hookLog(p).length;
            node.reset();
            const run = await measured(kind, walls[kind], () => runScenario(p, script, { allowedTools: PSQL_ALLOWED }));
            const nodeStarts = node.starts();
            console.log(
              `[pgx-e2e] fan-out round ${round}: pgx, ${kind === 'pgx' ? 'sh' : 'node'} launcher ${walls[kind][round]} ms${kind === 'pgx' ? `, ${nodeStarts} node start(s)` : ''}`,
            );
            expect(run.out.code, describeRun(run)).toBe(0);
            expect(run.fake.errors).toEqual([]);

            const subs = branches(p).filter((b) => b.kind === 'subagent' && b.session_id === run.sessionId);
            expect(subs, kind).toHaveLength(20);
            const byAgent = new Map(subs.map((b) => [b.agent_id, b.name]));
            for (const m of markers) {
              const own = byAgent.get(run.fake.agentIds.get(m) ?? '?');
              expect(own, `${kind} ${m}`).toBeTruthy();
              expect(run.fake.toolResults.get(m)?.[0], `${kind} ${m}`).toContain(`db=${own}`);
            }
            const lines = hookLog(p).slice(before);
            claims[kind] += lines.filter((l) => l.event === 'subagent-start' && /claim/.test(l.outcome)).length;
            // pgx's own time per hook (from its log) and how many a broker answered: against Claude Code's measured
            // latency, what is left is the process start and the wait for a CPU.
            const own = (event: string) => {
              const ls = lines.filter((l) => l.event === event && l.agent_id !== null);
              const ms = ls.map((l) => l.elapsed_ms).sort((a, b) => a - b);
              return {
                n: ls.length,
                via_broker: ls.filter((l) => l.via === 'broker').length,
                p50_ms: ms[Math.floor(ms.length / 2)] ?? null,
                max_ms: ms.at(-1) ?? null,
              };
            };
            if (round === 1) {
              const sum = (xs: number[]) => xs.reduce((a, b) => a + b);
              Object.assign(figures, {
                [`${kind}_ratio`]: Number((sum(walls[kind]) / sum(walls.trivial)).toFixed(2)),
                [`${kind}_subagent_starts_claimed`]: `${claims[kind]}/40`,
                // As Claude Code measured each hook (its debug log): process start included.
                [`${kind}_cc_subagent_start_ms`]: ccHookLatency(run.debugFile, 'SubagentStart'),
                [`${kind}_cc_pre_tool_use_ms`]: ccHookLatency(run.debugFile, 'PreToolUse'),
                [`${kind}_cc_pre_tool_use_mean_ms`]: ccCommandMeanMs(run.debugFile, 'PreToolUse'),
                // Hook processes Claude Code started in the whole run, by event (20 subagents, one Bash command each).
                [`${kind}_hook_processes`]: commandHooksRun(run.debugFile),
                [`${kind}_pgx_subagent_start`]: own('subagent-start'),
                [`${kind}_pgx_pre_tool_use`]: own('pre-tool-use'),
                [`${kind}_pgx_subagent_stop`]: own('subagent-stop'),
                // node processes the hooks and routed commands started (SessionStart's, when no broker runs yet: it starts one)
                ...(kind === 'pgx' ? { pgx_node_starts: nodeStarts } : {}),
              });
            }
            expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
          }
        }
        const pgxMean = figures.pgx_cc_pre_tool_use_mean_ms as number | null;
        const nodeMean = figures.node_nothing_cc_pre_tool_use_mean_ms as number | null;
        if (pgxMean != null && nodeMean)
          figures.pgx_pre_tool_use_vs_node_nothing = Number((pgxMean / nodeMean).toFixed(2));
        recordFigures('3-fanout-vs-trivial-hooks', {
          wall_ms_pgx: walls.pgx,
          wall_ms_node_launcher: walls.node_launcher,
          wall_ms_trivial: walls.trivial,
          wall_ms_node_nothing: walls.node,
          // the whole machine's CPU during the runs (sums of the rounds): pgx's work competes with Claude Code's own
          cpu_ms: cpu,
          // `ratio` stays the default install's (the report's column); `node_launcher_ratio` beside it (the default before).
          ratio: figures.pgx_ratio,
          ...figures,
        });
        for (const p of [withPgx, viaNode]) expect(pgx(p, ['agent', 'pool', 'drain']).status).toBe(0);
      } finally {
        rmSync(node.dir, { recursive: true, force: true });
      }
    }, 900_000);
  },
);
