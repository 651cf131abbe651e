// 100 subagents of one session at once, through the HTTP broker (`pgx agent broker serve-http`, decisions 221/222):
// the way Claude Code runs pgx's hooks with `install --transport http`. No hook process starts: each event is a POST
// of the payload to 127.0.0.1 with the user's secret, and each routed command is a `bash -c` of the rewrite. Every
// agent's chain (SubagentStart → PreToolUse(Bash) → the routed command → SubagentStop) runs concurrently with the 99
// others against the real test server: 0 failures (every POST answered 200, no 500 that `onFailure: "block"` would
// turn into a blocked call), every rewrite names its own agent's branch, every command lands on it, every branch is
// created and retired, and nothing is left. The socket-broker version is hooks-broker-fanout.test.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart, subagentStop } from '../helpers/hook-payloads.js';
import { assertHookInvariants, bash, bashEnv, branchFromContext, hook, hookEnv, pollUntil, rewriteOf, type HookEvent, type HookRun } from '../helpers/hooks.js';
import { expectFanOutRetiredAndLeftNothing } from '../helpers/fanout.js';
import { LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';
import { FORWARDED_VARS } from '../../src/broker/http.js';

const AGENTS = 100;
const p = makeProject();
const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
// The routed `agent exec` goes through the socket broker, as it does for users (the HTTP transport changes the
// hooks only); both brokers' files sit in this runtime dir.
Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '600000', XDG_RUNTIME_DIR: runtime });
let broker: ChildProcess;
let state: { port: number; secret: string; pid?: number };

beforeAll(async () => {
  // The HTTP broker's own environment says nothing per call (one per user): the requests carry the project and
  // session, and the headers pgx's variables.
  const env = { ...hookEnv(p, {}), CLAUDE_PROJECT_DIR: undefined, CLAUDECODE: undefined, AI_AGENT: undefined };
  broker = spawn(process.execPath, [LAUNCHER, 'agent', 'broker', 'serve-http'], { cwd: runtime, env: env as NodeJS.ProcessEnv, stdio: 'ignore' });
  const file = join(runtime, 'pgx', 'http.json');
  await pollUntil(async () => existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).pid === broker.pid, 15_000);
  state = JSON.parse(readFileSync(file, 'utf8'));
}, 30_000);

afterAll(async () => {
  runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: hookEnv(p, {}) });
  if (broker && broker.exitCode === null && broker.signalCode === null) {
    const exited = new Promise((res) => broker.once('exit', res));
    broker.kill('SIGTERM');
    await exited;
  }
});

/**
 * The headers an installed entry adds (`x-pgx-env-<name>: $<NAME>`, FORWARDED_VARS of broker/http.ts), as Claude Code
 * interpolates them from its own environment: the user's, which has pgx's variables and no AI_AGENT (decision 222).
 * PGX_HOST among them: without it the broker names branches with its own host label and the routed command, which
 * has the user's, looks for another one.
 */
const forwarded = Object.fromEntries(FORWARDED_VARS.map((k) => [`x-pgx-env-${k.toLowerCase().replaceAll('_', '-')}`, p.env[k] ?? '']));

/**
 * One hook event as Claude Code's HTTP entry sends it: the payload POSTed to the entry's URL with the secret and
 * pgx's forwarded variables, read back as a hook run (a 200 is exit 0), held to the same invariants as every
 * command hook's output (one JSON object or nothing, never "allow", no password).
 */
async function post(event: HookEvent, payload: Record<string, unknown>): Promise<HookRun & { httpStatus: number }> {
  const t0 = performance.now();
  const r = await fetch(`http://127.0.0.1:${state.port}/hook/${event}?project=${encodeURIComponent(p.dir)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${state.secret}`, ...forwarded },
    body: JSON.stringify(payload),
  });
  const stdout = await r.text();
  const run: HookRun & { httpStatus: number } = { status: r.status === 200 ? 0 : r.status, signal: null, stdout, stderr: '', elapsedMs: Math.round(performance.now() - t0), httpStatus: r.status };
  if (stdout.trim()) run.json = JSON.parse(stdout);
  assertHookInvariants(event, run);
  return run;
}

function spread(ms: number[]): string {
  const s = [...ms].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return `p50 ${at(0.5)} / p95 ${at(0.95)} / max ${s.at(-1)} ms`;
}

describe(`${AGENTS} concurrent subagents through the HTTP broker`, () => {
  it('SubagentStart → PreToolUse(Bash) → the routed command → SubagentStop over HTTP for each, all at once: 0 failures, own branches, all retired', async () => {
    const s = session(p.dir, p.dir);
    // SessionStart stays a command hook (Claude Code never sends it over HTTP).
    await hook('session-start', sessionStart(s), p);
    const agents = Array.from({ length: AGENTS }, () => newAgentId());
    const ms: Record<'start' | 'pre' | 'stop' | 'command', number[]> = { start: [], pre: [], stop: [], command: [] };

    const t0 = performance.now();
    const chains = await Promise.all(
      agents.map(async (a) => {
        const start = await post('subagent-start', subagentStart(s, a));
        ms.start.push(start.elapsedMs);
        const branch = branchFromContext(start);
        const pre = await post('pre-tool-use', preToolUseBash(s, "psql -X -Atc 'select current_database()'", { agentId: a }));
        ms.pre.push(pre.elapsedMs);
        const rewrite = rewriteOf(pre);
        const c0 = performance.now();
        const ran = await bash(rewrite.command, { cwd: p.dir, env: bashEnv(p, s) });
        ms.command.push(Math.round(performance.now() - c0));
        const stop = await post('subagent-stop', subagentStop(s, a));
        ms.stop.push(stop.elapsedMs);
        return { a, branch, rewrite, ran, statuses: [start.httpStatus, pre.httpStatus, stop.httpStatus] };
      }),
    );
    const wall = Math.round(performance.now() - t0);
    console.log(`${AGENTS} concurrent subagents through the HTTP broker: wall ${wall} ms; SubagentStart ${spread(ms.start)}; PreToolUse ${spread(ms.pre)}; routed psql ${spread(ms.command)}; SubagentStop ${spread(ms.stop)}`);

    // Every POST answered 200 (a 500 or a refused connection is a failure: PreToolUse would block), every rewrite
    // names the agent's own branch, and its command ran there.
    expect(chains.filter((c) => c.statuses.some((st) => st !== 200)).map((c) => `${c.a}: ${c.statuses.join(',')}`)).toEqual([]);
    for (const c of chains) {
      expect(c.rewrite.branch, c.a).toBe(c.branch);
      expect(c.ran.status, `${c.a}: ${c.ran.stderr}`).toBe(0);
      expect(c.ran.stdout.trim(), c.a).toBe(c.branch);
    }
    expect(new Set(chains.map((c) => c.branch)).size).toBe(AGENTS);

    // The HTTP broker answered all of them, in its own process (no hook process ran: the log says so), without one
    // error or denial; and it is still the broker that started.
    const log = readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { agent_id: string | null; via?: string; outcome: string; event: string });
    const ours = log.filter((l) => l.agent_id !== null && agents.includes(l.agent_id));
    expect(ours.length).toBe(3 * AGENTS);
    expect(ours.filter((l) => l.via !== 'broker'), 'answered outside a broker').toEqual([]);
    expect(ours.filter((l) => /^(error|denied)/.test(l.outcome)), 'errors').toEqual([]);
    expect(JSON.parse(readFileSync(join(runtime, 'pgx', 'http.json'), 'utf8')).pid).toBe(broker.pid);
    expect(broker.exitCode).toBeNull();

    await expectFanOutRetiredAndLeftNothing(p, s, chains.map((c) => c.branch), AGENTS);
  }, 300_000);
});
