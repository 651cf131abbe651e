// The hostile hook corpus (tests/helpers/hostile-corpus.ts, decision 211) through today's two ways into the hook
// runner: the broker's work called in-process exactly as the broker calls it (every scenario), and the built
// `pgx agent hook <event>` spawned the way Claude Code spawns it, through the running broker (a deterministic third
// of them: a node start per step is what costs). Every answer passes the corpus's checks; the user's database and
// every other database not pgx's own are unchanged; the broker is the same process at the end; both transports give
// the same class of answer to the same scenario.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { FORWARDED_VARS } from '../../src/broker/http.js';
import { MAX_REQUEST_BYTES } from '../../src/broker/protocol.js';
import { recordedClaudeCode } from '../../src/hooks/claude/session-claude-code.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeptConnections } from '../../src/broker/connections.js';
import { requestEnv } from '../../src/broker/protocol.js';
import { brokerWork } from '../../src/cli/agent-broker.js';
import { claudeCodeShell } from '../../src/lib/shell.js';
import { loadConfig } from '../../src/project/config.js';
import { checkAnswer, SIX_EVENTS, databases, namedBranch, foreignChanges, hostileCorpus, victimContent, type Answer, type DatabaseRow, type Scenario, type Step, type World } from '../helpers/hostile-corpus.js';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';
import { hook, hookEnv, launcherReal, mapLimit, pollUntil, rewriteOf } from '../helpers/hooks.js';
import { jsonOf, LAUNCHER, makeProject, runPgx, runPgxAsync, sql } from '../helpers/pgx.js';

/** The corpus: this many scenarios (1-4 steps each) from this seed. PGX_TEST_HOSTILE_SEED explores others. */
const SEED = Number(process.env.PGX_TEST_HOSTILE_SEED) || 211;
const SIZE = Number(process.env.PGX_TEST_HOSTILE_SIZE) || 1100;
const spawned = (_: Scenario, i: number) => i % 3 === 0;
/** Over HTTP: every scenario (PGX_TEST_HOSTILE_HTTP=third runs a third, for a quick look). */
const overHttp = (_: Scenario, i: number) => process.env.PGX_TEST_HOSTILE_HTTP !== 'third' || i % 3 === 1;

const kept = new KeptConnections();
const worlds: World[] = [];
let victim = '';
let before: Map<string, DatabaseRow>;
let victimBefore = '';
/** Each scenario's answers' classes, by transport: the two must agree. */
const classes = new Map<string, string[]>();
const savedEnv = { PGX_LAUNCHER: process.env.PGX_LAUNCHER, PGX_BROKER: process.env.PGX_BROKER };

/** A project whose source is the user's database, with its own broker, two sessions and one started subagent. */
async function makeWorld(): Promise<World> {
  const p = makeProject({ source: victim });
  Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '600000', XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'pgx-run-')) });
  const a = session(p.dir, p.dir);
  const b = session(p.dir, p.dir);
  const started = jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
  expect(started.pid).toBeGreaterThan(0);
  for (const s of [a, b]) await hook('session-start', sessionStart(s), p);
  const a1 = newAgentId();
  await hook('subagent-start', subagentStart(a, a1), p);
  const env = hookEnv(p, {});
  const w: World = { p, a, b, a1, launcher: launcherReal(), projectDir: loadConfig({ cwd: p.dir, env }).projectDir, shell: claudeCodeShell(env), victim };
  worlds.push(w);
  return w;
}

const stepEnv = (w: World, st: Step) => hookEnv(w.p, {}, st.env);

/** The built CLI, as Claude Code runs a command hook: the payload on stdin, the project as cwd. */
const spawnTransport = async (w: World, st: Step): Promise<Answer> => runPgxAsync(['agent', 'hook', st.event], { cwd: w.p.dir, env: stepEnv(w, st), input: st.stdin });

/** The broker's work, called as broker/server.ts calls it for a hook request (the text as the hook process read it). */
async function inProcessTransport(w: World, st: Step): Promise<Answer> {
  const env = stepEnv(w, st);
  const req = { op: 'hook' as const, fp: '', fpm: '', event: st.event, stdin: st.stdin.toString('utf8'), cwd: w.p.dir, env: requestEnv(env) };
  try {
    const r = await brokerWork.hook(req, { env, reuse: kept, connectWaitMs: 15_000, afterAnswer: (fn) => fn() });
    if ('fallback' in r) return { status: 0, stdout: '', stderr: '', fallback: r.fallback };
    const print = 'print' in r ? r.print : undefined;
    return { status: 0, stdout: print ? print + '\n' : '', stderr: '' };
  } catch (e) {
    return { status: 1, stdout: '', stderr: (e as Error).stack ?? String(e) };
  }
}

/** The world's HTTP broker (`agent broker serve-http`, one per user: here per world's runtime dir), as installed entries reach it. */
const httpBrokers: { child: ChildProcess; port: number; secret: string; w: World }[] = [];
async function startHttpBroker(w: World) {
  const env = { ...hookEnv(w.p, {}), CLAUDE_PROJECT_DIR: undefined, CLAUDECODE: undefined, AI_AGENT: undefined, CLAUDE_CODE_SESSION_ID: undefined } as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [LAUNCHER, 'agent', 'broker', 'serve-http'], { cwd: w.p.env.XDG_RUNTIME_DIR, env, stdio: 'ignore' });
  const file = join(w.p.env.XDG_RUNTIME_DIR!, 'pgx', 'http.json');
  const st = await pollUntil(async () => { try { const j = JSON.parse(readFileSync(file, 'utf8')); return j.pid === child.pid ? j : undefined; } catch { return undefined; } }, 15_000); // prettier-ignore
  const b = { child, port: st.port as number, secret: st.secret as string, w };
  httpBrokers.push(b);
  return b;
}

/**
 * Claude Code's HTTP entry: POSTs the same bytes to /hook/<event>?project=<dir> with the secret and the forwarded
 * variables. SessionStart never goes over HTTP (Claude Code's command entry runs it), so it takes the in-process path.
 * A 200 is the hook's stdout; 404 (not an event pgx serves) is the usage error's counterpart; 413 (past the request
 * cap) is a failure Claude Code blocks on (onFailure "block"); any other status fails the check.
 */
async function httpTransport(w: World, st: Step): Promise<Answer> {
  if (st.event === 'session-start') return inProcessTransport(w, st);
  const b = httpBrokers.find((x) => x.w === w)!;
  const env = stepEnv(w, st);
  const headers: Record<string, string> = { authorization: `Bearer ${b.secret}`, 'content-type': 'application/json' };
  for (const k of FORWARDED_VARS) headers[`x-pgx-env-${k.toLowerCase().replaceAll('_', '-')}`] = env[k] ?? '';
  const query = env.CLAUDE_PROJECT_DIR ? `?project=${encodeURIComponent(env.CLAUDE_PROJECT_DIR)}` : '';
  let event = st.event;
  try {
    event = encodeURIComponent(st.event);
  } catch {
    // a lone surrogate: sent as is
  }
  try {
    const r = await fetch(`http://127.0.0.1:${b.port}/hook/${event}${query}`, { method: 'POST', headers, body: typeof st.stdin === 'string' ? st.stdin : new Uint8Array(st.stdin) });
    const text = await r.text();
    if (r.status === 200) return { status: 0, stdout: text ? text + '\n' : '', stderr: '' };
    // not one of the six: 404 (not an event name), or 500 (a name the hook runner refuses); never hook JSON
    if (r.status === 404 || (r.status === 500 && !SIX_EVENTS.includes(st.event as never))) return { status: 2, stdout: text, stderr: '', fallback: `http ${r.status}` };
    if (r.status === 413) return { status: 0, stdout: '', stderr: '', http: 413 } as Answer;
    return { status: r.status, stdout: text, stderr: `HTTP ${r.status}` };
  } catch (e) {
    // reset mid-request: what a body past the cap may meet before its 413 is read
    return { status: 0, stdout: '', stderr: '', http: 'reset', detail: String(e) } as Answer;
  }
}

/** Runs scenarios (steps in order, four scenarios at a time) through a transport; every answer checked. */
async function runCorpus(w: World, corpus: Scenario[], transport: (w: World, st: Step) => Promise<Answer>, name: string) {
  const t0 = performance.now();
  const failures: string[] = [];
  let steps = 0;
  await mapLimit(corpus, 4, async (sc) => {
    const got: string[] = [];
    const named: (string | undefined)[] = [];
    for (const st of sc.steps) {
      steps++;
      try {
        const answer = await transport(w, st);
        named.push(namedBranch(answer.stdout));
        const failed = (answer as { http?: number | string }).http;
        if (failed !== undefined) {
          // Refused past the request cap (413, or reset before it was read): Claude Code blocks a PreToolUse
          // (onFailure "block") and goes on without context elsewhere. Only a body over the cap may get it.
          if (st.stdin.length <= MAX_REQUEST_BYTES) throw new Error(`${sc.id} (${sc.label}): HTTP ${failed} for a ${st.stdin.length}-byte body`);
          got.push(`over-cap:${st.event}`);
        } else got.push(await checkAnswer(w, sc, st, answer));
      } catch (e) {
        failures.push((e as Error).message);
        got.push('failed');
      }
    }
    // Identities a careless encoder would merge: refused, or each on a branch of its own.
    const apart = (sc.distinct ?? []).map((i) => named[i]).filter(Boolean);
    if (new Set(apart).size !== apart.length) failures.push(`${sc.id} (${sc.label}): two identities, branches ${JSON.stringify(apart)}`);
    const other = classes.get(sc.id);
    if (other && !sameClasses(got, other, sc, w)) failures.push(`${sc.id} (${sc.label}): ${name} answered ${got.join(', ')}, the other transport ${other.join(', ')}`);
    classes.set(sc.id, got);
  });
  const ms = Math.round(performance.now() - t0);
  const answered: Record<string, number> = {};
  for (const sc of corpus) for (const c of classes.get(sc.id) ?? []) answered[c] = (answered[c] ?? 0) + 1;
  console.log(`hostile corpus, ${name}: ${corpus.length} scenarios, ${steps} steps in ${ms} ms (${(ms / steps).toFixed(1)} ms a step), ${failures.length} failure(s); answers ${JSON.stringify(answered)}`);
  for (const f of failures.slice(0, 60)) console.log(`FAIL ${name}: ${f.slice(0, 400).replaceAll('\n', ' | ')}`);
  expect(failures.slice(0, 20), `${failures.length} failure(s)`).toEqual([]);
  // No prototype was polluted by a `__proto__` key (in-process: the test's own realm is the broker's).
  expect(({} as Record<string, unknown>).command ?? ({} as Record<string, unknown>).agent_id).toBeUndefined();
}

/**
 * Do two transports' classes agree? Exactly, except that over HTTP (a) a body past the request cap is refused
 * (blocked, for a PreToolUse: never weaker than the command hook's deny), and (b) a rewrite asks when its session has
 * no recorded Claude Code version (no SessionStart ran for it: the request can't say which Claude Code sent it).
 */
function sameClasses(http: string[], other: string[], sc: Scenario, w: World): boolean {
  if (http.length !== other.length) return false;
  return http.every((c, i) => {
    if (c === other[i]) return true;
    if (c.startsWith('over-cap:')) return true;
    const p = (() => { try { return JSON.parse(sc.steps[i]!.stdin.toString()); } catch { return undefined; } })(); // prettier-ignore
    // No ?project= and a relative payload cwd: no hook process's directory to resolve it against, so the session's
    // hook fails closed (a deny, or SubagentStart's error context) where a command hook resolved it and routed.
    const relative = sc.steps[i]!.env && 'CLAUDE_PROJECT_DIR' in sc.steps[i]!.env! && !sc.steps[i]!.env!.CLAUDE_PROJECT_DIR && typeof p?.cwd === 'string' && !p.cwd.startsWith('/');
    if (relative && ((c === 'deny' && other[i]!.startsWith('rewrite')) || (c === 'context' && other[i] === 'branch'))) return true;
    return c === 'rewrite-ask' && other[i] === 'rewrite' && recordedClaudeCode(w.p.home, p?.session_id) === undefined;
  });
}

function kinds(corpus: Scenario[]): Record<string, number> {
  const n: Record<string, number> = {};
  for (const sc of corpus) n[sc.kind] = (n[sc.kind] ?? 0) + 1;
  return n;
}

describe('hostile hook payloads', () => {
  beforeAll(async () => {
    // The in-process hook reads the launcher and the broker switch from its own process: the real launcher, no
    // broker started from the test process's environment.
    process.env.PGX_LAUNCHER = launcherReal();
    process.env.PGX_BROKER = '0';
    victim = `victim_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${victim}`);
    await sql(`COMMENT ON DATABASE ${victim} IS 'the user''s own'`);
    await sql(`CREATE TABLE t (id serial PRIMARY KEY, v text); INSERT INTO t (v) VALUES ('keep me'), ('and me')`, [], victim);
    before = await databases();
    victimBefore = await victimContent(victim);
  });

  afterAll(async () => {
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await kept.closeAll();
    for (const b of httpBrokers) b.child.kill('SIGTERM');
    for (const w of worlds) {
      const env = { ...hookEnv(w.p, {}), PGX_BROKER: '0' };
      runPgx(['agent', 'broker', 'stop'], { cwd: w.p.dir, env: hookEnv(w.p, {}) });
      const down = runPgx(['agent', 'down', '--project', '--now', '--yes', '--json'], { cwd: w.p.dir, env, timeout: 120_000 });
      expect(down.status, down.stderr).toBe(0);
    }
    // Every branch the corpus made went with `down`; what pgx made but kept (templates) is stamped as pgx's.
    const left = await sql<{ datname: string }>(`SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE 'pgx:branch:%' AND datname LIKE ANY ($1)`, [worlds.map((w) => `%${w.p.host}%`)]);
    expect(left).toEqual([]);
    await sql(`DROP DATABASE IF EXISTS ${victim}`);
  });

  const corpusOf = (w: World) => hostileCorpus(w, { seed: SEED, size: SIZE });

  it(`${SIZE} scenarios in-process (the broker's work, as the broker calls it), and a third of them spawned through the broker: every answer valid hook JSON or nothing, never allow`, async () => {
    const w = await makeWorld();
    const corpus = corpusOf(w);
    const steps = corpus.reduce((n, sc) => n + sc.steps.length, 0);
    if (SIZE >= 1100) expect(steps).toBeGreaterThanOrEqual(1000);
    console.log(`hostile corpus (seed ${SEED}): ${JSON.stringify(kinds(corpus))}`);
    await runCorpus(w, corpus, inProcessTransport, 'in-process');

    // The same seed in a world of its own (its own broker and branches), spawned: the same answers' classes.
    const w2 = await makeWorld();
    const corpus2 = corpusOf(w2).filter(spawned);
    const broker = () => jsonOf(runPgx(['agent', 'broker', 'status', '--json'], { cwd: w2.p.dir, env: hookEnv(w2.p, {}) })).brokers.find((b: { this_environment: boolean }) => b.this_environment) as { pid: number; requests: number };
    const first = broker();
    await runCorpus(w2, corpus2, spawnTransport, 'spawned');
    const last = broker();
    expect(last.pid, 'the broker never crashed or was replaced').toBe(first.pid);
    expect(last.requests - first.requests).toBeGreaterThan(corpus2.length / 2);

    // The whole corpus again in a world of its own, POSTed to its HTTP broker as Claude Code's HTTP entries do.
    const w3 = await makeWorld();
    const hb = await startHttpBroker(w3);
    await runCorpus(w3, corpusOf(w3).filter(overHttp), httpTransport, 'HTTP');
    expect(hb.child.exitCode, 'the HTTP broker never crashed').toBeNull();
    expect((await fetch(`http://127.0.0.1:${hb.port}/status`, { method: 'POST', headers: { authorization: `Bearer ${hb.secret}` } })).status).toBe(200);

    const changes = foreignChanges(before, await databases());
    expect(changes).toEqual([]);
    expect(await victimContent(victim)).toBe(victimBefore);
  });

  it('a relative payload cwd (no CLAUDE_PROJECT_DIR) is the hook process\'s, not the broker\'s: the broker rewrites as the hook process would', async () => {
    const w = worlds[0] ?? (await makeWorld());
    const payload = { ...preToolUseBash(w.a, 'psql -c "select 1"', { agentId: w.a1 }), cwd: '.' };
    const st: Step = { event: 'pre-tool-use', stdin: JSON.stringify(payload), env: { CLAUDE_PROJECT_DIR: undefined, CLAUDE_CODE_SESSION_ID: w.a.sessionId } };
    const viaBroker = await inProcessTransport(w, st);
    const own = await spawnTransport(w, { ...st, env: { ...st.env, PGX_BROKER: '0' } });
    expect(rewriteOf({ ...own, signal: own.signal ?? null, json: JSON.parse(own.stdout), elapsedMs: 0 }).branch).toBeTruthy();
    expect(viaBroker.stdout).toBe(own.stdout);
  });
});
