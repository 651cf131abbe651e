// The hostile hook corpus (tests/helpers/hostile-corpus.ts, decision 211) through every way into the hook runner:
// the broker's work called in-process exactly as the broker calls it (every scenario); the built launcher through
// node (`node bin/pgx.js agent hook <event>`, the running broker behind it: a deterministic third of them, a node
// start per step is what costs); and the installed entry as Claude Code runs it (`/bin/sh -c "'<launcher>' agent
// hook <event>"`), whose sh part hands stdin to the broker with curl and starts no node (decision 441: every
// scenario). Every answer passes the corpus's checks; the user's database and every other database not pgx's own are
// unchanged; the broker is the same process at the end; the transports give the same class of answer to the same
// scenario.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeptConnections } from '../../src/broker/connections.js';
import { requestEnv } from '../../src/broker/protocol.js';
import { brokerWork } from '../../src/entries/broker-work.js';
import { claudeCodeShell, shellQuote } from '../../src/lib/shell.js';
import { loadConfig } from '../../src/project/config.js';
import {
  checkAnswer,
  databases,
  namedBranch,
  foreignChanges,
  hostileCorpus,
  victimContent,
  type Answer,
  type DatabaseRow,
  type Scenario,
  type Step,
  type World,
} from '../helpers/hostile-corpus.js';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';
import { hook, hookEnv, launcherReal, mapLimit, rewriteOf } from '../helpers/hooks.js';
import { jsonOf, makeProject, runPgx, runPgxAsync, sql } from '../helpers/pgx.js';

/** The corpus: this many scenarios (1-4 steps each) from this seed. PGX_TEST_HOSTILE_SEED explores others. */
const SEED = Number(process.env.PGX_TEST_HOSTILE_SEED) || 211;
const SIZE = Number(process.env.PGX_TEST_HOSTILE_SIZE) || 1100;
const spawned = (_: Scenario, i: number) => i % 3 === 0;
/** Through the sh launcher: every scenario (PGX_TEST_HOSTILE_SH=third runs a third, for a quick look). */
const throughSh = (_: Scenario, i: number) => process.env.PGX_TEST_HOSTILE_SH !== 'third' || i % 3 === 1;

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
  Object.assign(p.env, {
    PGX_BROKER: '1',
    PGX_BROKER_IDLE_MS: '600000',
    XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'pgx-run-')),
  });
  const a = session(p.dir, p.dir);
  const b = session(p.dir, p.dir);
  const started = jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
  expect(started.pid).toBeGreaterThan(0);
  for (const s of [a, b]) await hook('session-start', sessionStart(s), p);
  const a1 = newAgentId();
  await hook('subagent-start', subagentStart(a, a1), p);
  const env = hookEnv(p, {});
  const w: World = {
    p,
    a,
    b,
    a1,
    launcher: launcherReal(),
    projectDir: loadConfig({ cwd: p.dir, env }).projectDir,
    shell: claudeCodeShell(env),
    victim,
  };
  worlds.push(w);
  return w;
}

const stepEnv = (w: World, st: Step) => hookEnv(w.p, {}, st.env);

/** The built CLI, as Claude Code runs a command hook: the payload on stdin, the project as cwd. */
const spawnTransport = async (w: World, st: Step): Promise<Answer> =>
  runPgxAsync(['agent', 'hook', st.event], { cwd: w.p.dir, env: stepEnv(w, st), input: st.stdin });

/** The broker's work, called as broker/server.ts calls it for a hook request (the text as the hook process read it). */
async function inProcessTransport(w: World, st: Step): Promise<Answer> {
  const env = stepEnv(w, st);
  const req = {
    op: 'hook' as const,
    fp: '',
    fpm: '',
    event: st.event,
    stdin: st.stdin.toString('utf8'),
    cwd: w.p.dir,
    env: requestEnv(env),
  };
  try {
    const r = await brokerWork.hook(req, { env, reuse: kept, connectWaitMs: 15_000, afterAnswer: (fn) => fn() });
    if ('fallback' in r) return { status: 0, stdout: '', stderr: '', fallback: r.fallback };
    const print = 'print' in r ? r.print : undefined;
    return { status: 0, stdout: print ? print + '\n' : '', stderr: '' };
  } catch (e) {
    return { status: 1, stdout: '', stderr: (e as Error).stack ?? String(e) };
  }
}

/** The events the launcher's sh part hands to the broker (bin/pgx.js): the rest go to node, by design. */
const SH_EVENTS = [
  'session-start',
  'pre-tool-use',
  'subagent-start',
  'subagent-stop',
  'user-prompt-submit',
  'session-end',
];

/** A `node` first on PATH that counts its starts: what went to node instead of the sh path. */
function countingNode(): { path: string; starts: () => number } {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-nodecount-'));
  const count = join(dir, 'count');
  writeFileSync(join(dir, 'node'), `#!/bin/sh\necho x >> '${count}'\nexec '${process.execPath}' "$@"\n`, {
    mode: 0o755,
  });
  return {
    path: dir,
    starts: () => (existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

/** Claude Code's command hook: `/bin/sh -c "'<launcher>' agent hook <event>"` (the event shell-quoted: any string), stdin the payload. */
const shellTransport =
  (nodePath: string) =>
  (w: World, st: Step): Promise<Answer> =>
    new Promise((res) => {
      const env = stepEnv(w, st);
      env.PATH = `${nodePath}:${env.PATH}`;
      const c = spawn('/bin/sh', ['-c', `${shellQuote(w.launcher)} agent hook ${shellQuote(st.event)}`], {
        cwd: w.p.dir,
        env,
      });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d) => (stdout += d));
      c.stderr.on('data', (d) => (stderr += d));
      c.stdin.on('error', () => {}); // a hook that exits before reading all of its input (a usage error)
      c.stdin.end(st.stdin);
      c.on('close', (status) => res({ status, stdout, stderr }));
    });

/** Runs scenarios (steps in order, four scenarios at a time) through a transport; every answer checked. */
async function runCorpus(
  w: World,
  corpus: Scenario[],
  transport: (w: World, st: Step) => Promise<Answer>,
  name: string,
) {
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
        got.push(await checkAnswer(w, sc, st, answer));
      } catch (e) {
        failures.push((e as Error).message);
        got.push('failed');
      }
    }
    // Identities a careless encoder would merge: refused, or each on a branch of its own.
    const apart = (sc.distinct ?? []).map((i) => named[i]).filter(Boolean);
    if (new Set(apart).size !== apart.length)
      failures.push(`${sc.id} (${sc.label}): two identities, branches ${JSON.stringify(apart)}`);
    const other = classes.get(sc.id);
    if (other && !sameClasses(got, other))
      failures.push(
        `${sc.id} (${sc.label}): ${name} answered ${got.join(', ')}, the other transport ${other.join(', ')}`,
      );
    classes.set(sc.id, got);
  });
  const ms = Math.round(performance.now() - t0);
  const answered: Record<string, number> = {};
  for (const sc of corpus) for (const c of classes.get(sc.id) ?? []) answered[c] = (answered[c] ?? 0) + 1;
  console.log(
    `hostile corpus, ${name}: ${corpus.length} scenarios, ${steps} steps in ${ms} ms (${(ms / steps).toFixed(1)} ms a step), ${failures.length} failure(s); answers ${JSON.stringify(answered)}`,
  );
  for (const f of failures.slice(0, 60)) console.log(`FAIL ${name}: ${f.slice(0, 400).replaceAll('\n', ' | ')}`);
  expect(failures.slice(0, 20), `${failures.length} failure(s)`).toEqual([]);
  // No prototype was polluted by a `__proto__` key (in-process: the test's own realm is the broker's).
  expect(({} as Record<string, unknown>).command ?? ({} as Record<string, unknown>).agent_id).toBeUndefined();
}

/** Do two transports' classes agree? Exactly: every transport runs the one hook runner on the same bytes and environment. */
function sameClasses(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
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
    await sql(
      `CREATE TABLE t (id serial PRIMARY KEY, v text); INSERT INTO t (v) VALUES ('keep me'), ('and me')`,
      [],
      victim,
    );
    before = await databases();
    victimBefore = await victimContent(victim);
  });

  afterAll(async () => {
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await kept.closeAll();
    for (const w of worlds) {
      const env = { ...hookEnv(w.p, {}), PGX_BROKER: '0' };
      runPgx(['agent', 'broker', 'stop'], { cwd: w.p.dir, env: hookEnv(w.p, {}) });
      const down = runPgx(['agent', 'down', '--project', '--now', '--yes', '--json'], {
        cwd: w.p.dir,
        env,
        timeout: 120_000,
      });
      expect(down.status, down.stderr).toBe(0);
    }
    // Every branch the corpus made went with `down`; what pgx made but kept (templates) is stamped as pgx's.
    const left = await sql<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE 'pgx:branch:%' AND datname LIKE ANY ($1)`,
      [worlds.map((w) => `%${w.p.host}%`)],
    );
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
    const broker = () =>
      jsonOf(runPgx(['agent', 'broker', 'status', '--json'], { cwd: w2.p.dir, env: hookEnv(w2.p, {}) })).brokers.find(
        (b: { this_environment: boolean }) => b.this_environment,
      ) as { pid: number; requests: number };
    const first = broker();
    await runCorpus(w2, corpus2, spawnTransport, 'spawned');
    const last = broker();
    expect(last.pid, 'the broker never crashed or was replaced').toBe(first.pid);
    expect(last.requests - first.requests).toBeGreaterThan(corpus2.length / 2);

    const changes = foreignChanges(before, await databases());
    expect(changes).toEqual([]);
    expect(await victimContent(victim)).toBe(victimBefore);
  }, 900_000);

  it(`${SIZE} scenarios through the installed entry as Claude Code runs it (the launcher's sh part, no node): the same answers`, async () => {
    if (!classes.size) {
      // run alone (-t): the in-process answers to compare with
      const w0 = await makeWorld();
      await runCorpus(w0, corpusOf(w0).filter(throughSh), inProcessTransport, 'in-process');
    }
    // The whole corpus again in a world of its own, through the installed entry's sh part (decision 441): node
    // starts only for what the sh part leaves to it by design (a name that is not one of its events).
    const w3 = await makeWorld();
    const corpus3 = corpusOf(w3).filter(throughSh);
    const node = countingNode();
    const broker3 = () =>
      jsonOf(runPgx(['agent', 'broker', 'status', '--json'], { cwd: w3.p.dir, env: hookEnv(w3.p, {}) })).brokers.find(
        (b: { this_environment: boolean }) => b.this_environment,
      ) as { pid: number; requests: number };
    const first3 = broker3();
    await runCorpus(w3, corpus3, shellTransport(node.path), 'sh launcher');
    const last3 = broker3();
    expect(last3.pid, 'the broker never crashed or was replaced').toBe(first3.pid);
    const leftToNode = corpus3.flatMap((sc) => sc.steps).filter((st) => !SH_EVENTS.includes(st.event)).length;
    console.log(
      `hostile corpus, sh launcher: ${node.starts()} node start(s), ${leftToNode} step(s) the sh part leaves to node by design, ${last3.requests - first3.requests} broker request(s)`,
    );
    expect(node.starts()).toBeLessThanOrEqual(leftToNode);
    expect(foreignChanges(before, await databases())).toEqual([]);
    expect(await victimContent(victim)).toBe(victimBefore);
  }, 900_000);

  it("a relative payload cwd (no CLAUDE_PROJECT_DIR) is the hook process's, not the broker's: the broker rewrites as the hook process would", async () => {
    const w = worlds[0] ?? (await makeWorld());
    const payload = { ...preToolUseBash(w.a, 'psql -c "select 1"', { agentId: w.a1 }), cwd: '.' };
    const st: Step = {
      event: 'pre-tool-use',
      stdin: JSON.stringify(payload),
      env: { CLAUDE_PROJECT_DIR: undefined, CLAUDE_CODE_SESSION_ID: w.a.sessionId },
    };
    const viaBroker = await inProcessTransport(w, st);
    const own = await spawnTransport(w, { ...st, env: { ...st.env, PGX_BROKER: '0' } });
    expect(
      rewriteOf({ ...own, signal: own.signal ?? null, json: JSON.parse(own.stdout), elapsedMs: 0 }).branch,
    ).toBeTruthy();
    expect(viaBroker.stdout).toBe(own.stdout);
  });
});
