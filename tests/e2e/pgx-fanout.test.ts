/**
 * Fan-out with the real Claude Code CLI: twenty subagents in one message, with pgx's hooks (the warm pool filled
 * ahead) against the same session with trivial hooks (`cat > /dev/null` for the same six events) and with node hooks
 * that do nothing, alternated twice. pgx runs twice per round: with command hooks (the default transport) and with the
 * hooks `install --transport http` writes, answered by the HTTP broker (decisions 221/222: no hook process for
 * PreToolUse, SubagentStart or SubagentStop). It asserts what pgx must do (20 own branches, every command
 * routed to its own one) for both; the wall-clock ratios are figures for the bench record
 * (.tmp/pgx-e2e-figures.jsonl), never asserted: the machines are 2 noisy cores.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { procCmdline } from '../helpers/hooks.js';
import { LAUNCHER } from '../helpers/pgx.js';
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
  recordFigures,
  runScenario,
  warnIfSkipped,
  type E2eProject,
  type Source,
} from './pgx-harness.js';

warnIfSkipped();
afterAll(cleanupRoots);

const LIST = `select 'db=' || current_database();`;
const command = `psql -X -At -v ON_ERROR_STOP=1 -c "${LIST}"`;
const markers = Array.from({ length: 20 }, (_, i) => `f${String(i).padStart(2, '0')}`);
const script = { subagents: markers.map((marker) => ({ marker, commands: [command] })) };

/** A node hook that does nothing but read its payload: the baseline for one hook event. */
const NODE_NOTHING = `node -e "require('fs').readFileSync(0)"`;

/** The same six hook entries, each doing nothing but reading its payload (`cat > /dev/null`, or `command`). */
function useTrivialHooks(p: E2eProject, command = 'cat > /dev/null'): void {
  const file = join(p.cwd, '.claude', 'settings.json');
  const settings = JSON.parse(readFileSync(file, 'utf8')) as { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]> };
  for (const entries of Object.values(settings.hooks)) for (const e of entries) for (const h of e.hooks) h.command = command;
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

/**
 * A project whose hooks `pgx agent install claude --transport http` wrote: PreToolUse, SubagentStart and SubagentStop
 * as HTTP entries to the user's HTTP broker, in settings.local.json with the secret in its `env`, and the sh keepers
 * beside them (decisions 221/222). Its runtime dir is its own (a private XDG_RUNTIME_DIR, so the port and secret are
 * this project's). The broker is started ahead, as the SessionStart keeper would have by then; the returned stop
 * ends it, and any broker a keeper started in its place.
 */
async function makeHttpProject(source: Source, toml: string): Promise<{ p: E2eProject; httpEvents: string[]; stop: () => Promise<void> }> {
  const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
  const p = makeE2eProject({ source, toml, env: { XDG_RUNTIME_DIR: runtime }, installArgs: ['--transport', 'http'] });
  const local = JSON.parse(readFileSync(join(p.cwd, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, { hooks: { type: string }[] }[]> };
  const httpEvents = Object.entries(local.hooks).filter(([, groups]) => groups.some((g) => g.hooks.some((h) => h.type === 'http'))).map(([event]) => event);
  const stateFile = join(runtime, 'pgx', 'http.json');
  const pidIn = (): number | undefined => (existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { pid?: number }).pid : undefined);
  const broker = spawn(process.execPath, [LAUNCHER, 'agent', 'broker', 'serve-http'], { cwd: runtime, env: p.env, stdio: 'ignore' });
  await pollUntil(async () => pidIn() === broker.pid, 15_000);
  const stop = async () => {
    const other = pidIn();
    if (other !== undefined && other !== broker.pid && procCmdline(other)?.includes('serve-http')) process.kill(other, 'SIGTERM');
    if (broker.exitCode === null && broker.signalCode === null) {
      const exited = new Promise((res) => broker.once('exit', res));
      broker.kill('SIGTERM');
      await exited;
    }
    rmSync(runtime, { recursive: true, force: true });
  };
  return { p, httpEvents, stop };
}

/** Hook processes Claude Code started in a run, per event (its debug log's "finished" lines of command hooks). */
function commandHooksRun(debugFile: string): Record<string, number> {
  const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
  const n: Record<string, number> = {};
  for (const m of text.matchAll(/Hooks: ([A-Za-z]+)(?::[^ ]+)? \[.*?\] finished with status/g)) n[m[1]!] = (n[m[1]!] ?? 0) + 1;
  return n;
}

/** The mean of a command hook's durations as Claude Code logged them ("finished with status 0 (Nms)"). */
function ccCommandMeanMs(debugFile: string, event: string): number | null {
  const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
  const ms = [...text.matchAll(/Hooks: ([A-Za-z]+)(?::[^ ]+)? \[.*?\] finished with status \d+ \((\d+)ms\)/g)].filter((m) => m[1] === event).map((m) => Number(m[2]));
  return ms.length ? Math.round(ms.reduce((a, b) => a + b) / ms.length) : null;
}

/**
 * An HTTP hook's round trip as Claude Code saw it: its debug log has no duration for HTTP hooks, only a timestamped
 * "HTTP hook POST to <url>" and, for PreToolUse, "Hook PreToolUse (<url>) modified tool input keys" once the answer
 * is applied. Answers come back out of order, so single pairs are unknown, but the mean is exact (the sum of the ends
 * less the sum of the starts).
 */
function ccHttpPreToolUseMeanMs(debugFile: string): { n: number; mean_ms: number | null } {
  const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '';
  const at = (re: RegExp) => [...text.matchAll(re)].map((m) => Date.parse(m[1]!));
  const starts = at(/^(\S+) \[DEBUG\] Hooks: HTTP hook POST to \S+\/hook\/pre-tool-use/gm);
  const ends = at(/^(\S+) \[DEBUG\] Hook PreToolUse \(http:\S+\) modified tool input keys/gm);
  if (!starts.length || starts.length !== ends.length) return { n: ends.length, mean_ms: null };
  return { n: ends.length, mean_ms: Math.round((ends.reduce((a, b) => a + b) - starts.reduce((a, b) => a + b)) / ends.length) };
}

describe.skipIf(!claudeBin)('fan-out: 20 subagents, pgx (command and HTTP hooks) vs trivial hooks (real Claude Code)', () => {
  it('every subagent gets its own branch (claimed from the warm pool) and every command runs in it, over command and HTTP hooks; wall times recorded', async () => {
    const source = await makeSource();
    const withPgx = makeE2eProject({ source, toml: '[agent]\npool_max = 20\n' });
    const http = await makeHttpProject(source, '[agent]\npool_max = 20\n');
    const overHttp = http.p;
    for (const p of [withPgx, overHttp]) for (const env of [p.env, p.claudeEnv]) env.PGX_POOL = '20';
    const trivial = makeE2eProject({ source });
    useTrivialHooks(trivial);
    const nodeNothing = makeE2eProject({ source });
    useTrivialHooks(nodeNothing, NODE_NOTHING);

    try {
      const walls: { pgx: number[]; http: number[]; trivial: number[]; node: number[] } = { pgx: [], http: [], trivial: [], node: [] };
      const claims = { pgx: 0, http: 0 };
      const figures: Record<string, unknown> = {};
      for (let round = 0; round < 2; round++) {
        const t = Date.now();
        const base = await runScenario(trivial, script, { allowedTools: PSQL_ALLOWED });
        walls.trivial.push(Date.now() - t);
        console.log(`[pgx-e2e] fan-out round ${round}: trivial hooks ${walls.trivial[round]} ms`);
        expect(base.out.code, describeRun(base)).toBe(0);
        const t1 = Date.now();
        const nothing = await runScenario(nodeNothing, script, { allowedTools: PSQL_ALLOWED });
        walls.node.push(Date.now() - t1);
        expect(nothing.out.code, describeRun(nothing)).toBe(0);
        if (round === 1) {
          figures.node_nothing_ratio = Number((walls.node.reduce((a, b) => a + b) / walls.trivial.reduce((a, b) => a + b)).toFixed(2));
          figures.node_nothing_cc_pre_tool_use_ms = ccHookLatency(nothing.debugFile, 'PreToolUse');
          figures.node_nothing_cc_pre_tool_use_mean_ms = ccCommandMeanMs(nothing.debugFile, 'PreToolUse');
        }

        for (const [kind, p] of [['pgx', withPgx], ['http', overHttp]] as const) {
          // Filled ahead, outside the measurement, as SessionStart's background filler would have by then.
          expect(pgx(p, ['agent', 'pool', 'fill']).status).toBe(0);
          const before = hookLog(p).length;
          const t0 = Date.now();
          const run = await runScenario(p, script, { allowedTools: PSQL_ALLOWED });
          walls[kind].push(Date.now() - t0);
          console.log(`[pgx-e2e] fan-out round ${round}: pgx over ${kind === 'pgx' ? 'command' : 'HTTP'} hooks ${walls[kind][round]} ms`);
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
          // Over HTTP the three subagent events were answered in the HTTP broker, none by a hook process.
          if (kind === 'http') expect(lines.filter((l) => l.agent_id !== null && l.via !== 'broker'), 'http: answered outside the broker').toEqual([]);
          // pgx's own time per hook (from its log) and how many a broker answered: against Claude Code's measured
          // latency, what is left is the process start and the wait for a CPU (none over HTTP).
          const own = (event: string) => {
            const ls = lines.filter((l) => l.event === event && l.agent_id !== null);
            const ms = ls.map((l) => l.elapsed_ms).sort((a, b) => a - b);
            return { n: ls.length, via_broker: ls.filter((l) => l.via === 'broker').length, p50_ms: ms[Math.floor(ms.length / 2)] ?? null, max_ms: ms.at(-1) ?? null };
          };
          if (round === 1) {
            const sum = (xs: number[]) => xs.reduce((a, b) => a + b);
            Object.assign(figures, {
              [`${kind}_ratio`]: Number((sum(walls[kind]) / sum(walls.trivial)).toFixed(2)),
              [`${kind}_subagent_starts_claimed`]: `${claims[kind]}/40`,
              // As Claude Code measured each hook (its debug log): process start included for a command hook, the
              // POST's round trip for an HTTP one.
              [`${kind}_cc_subagent_start_ms`]: ccHookLatency(run.debugFile, 'SubagentStart'),
              [`${kind}_cc_pre_tool_use_ms`]: ccHookLatency(run.debugFile, 'PreToolUse'),
              // Over HTTP Claude Code logs no duration: the mean from its timestamps (exact as a mean).
              ...(kind === 'http' ? { http_cc_pre_tool_use_round_trip: ccHttpPreToolUseMeanMs(run.debugFile) } : { pgx_cc_pre_tool_use_mean_ms: ccCommandMeanMs(run.debugFile, 'PreToolUse') }),
              // Hook processes Claude Code started in the whole run, by event (20 subagents, one Bash command each).
              [`${kind}_hook_processes`]: commandHooksRun(run.debugFile),
              [`${kind}_pgx_subagent_start`]: own('subagent-start'),
              [`${kind}_pgx_pre_tool_use`]: own('pre-tool-use'),
              [`${kind}_pgx_subagent_stop`]: own('subagent-stop'),
            });
          }
          expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
        }
      }
      // One PreToolUse as Claude Code saw it in the fan-out: HTTP round trip vs the do-nothing node hook (goal ≤ 0.3×).
      const httpMean = (figures.http_cc_pre_tool_use_round_trip as { mean_ms: number | null } | undefined)?.mean_ms;
      const nodeMean = figures.node_nothing_cc_pre_tool_use_mean_ms as number | null;
      if (httpMean != null && nodeMean) figures.http_pre_tool_use_vs_node_nothing = Number((httpMean / nodeMean).toFixed(2));
      recordFigures('3-fanout-vs-trivial-hooks', {
        wall_ms_pgx: walls.pgx,
        wall_ms_http: walls.http,
        wall_ms_trivial: walls.trivial,
        wall_ms_node_nothing: walls.node,
        // Which events went over HTTP (the rest stayed command hooks).
        http_events: http.httpEvents,
        // `ratio` stays the command transport's (the report's column); `http_ratio` beside it.
        ratio: figures.pgx_ratio,
        ...figures,
      });
      for (const p of [withPgx, overHttp]) expect(pgx(p, ['agent', 'pool', 'drain']).status).toBe(0);
    } finally {
      await http.stop();
    }
  }, 900_000);
});
