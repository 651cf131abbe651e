// The warm pool through the built CLI and the hooks: `agent pool status|fill|drain` (--json and human), `ls`'s pool
// line, PGX_POOL validation, and the detached filler the hooks start (SessionStart warms the pool; a SubagentStart
// claims a member, then the filler tops the pool up again). What the pool does is tested in-process (tests/engine).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx, runPgxAsync } from '../helpers/pgx.js';
import { branchFromContext, hook, pollUntil, routeAndRun } from '../helpers/hooks.js';
import { session, sessionEnd, sessionStart, subagentStart } from '../helpers/hook-payloads.js';

const pooledProject = (n: number) => {
  const p = makeProject();
  p.env.PGX_POOL = String(n);
  return p;
};

const status = async (p: ReturnType<typeof makeProject>) => {
  const r = await runPgxAsync(['agent', 'pool', 'status', '--json'], { cwd: p.dir, env: p.env });
  return jsonOf(r);
};

const drains: ReturnType<typeof makeProject>[] = [];
afterAll(async () => {
  for (const p of drains)
    await runPgxAsync(['agent', 'pool', 'drain', '--json'], { cwd: p.dir, env: { ...p.env, PGX_POOL: '0' } });
});

describe('agent pool (CLI wiring)', () => {
  it('fill, status, ls and drain print their results; --json as documented', () => {
    const p = pooledProject(2);
    drains.push(p);
    const fill = runPgx(['agent', 'pool', 'fill', '--json'], p);
    expect(fill.status, fill.stderr).toBe(0);
    expect(jsonOf(fill)).toMatchObject({ busy: false, target: 2, ready: 2, bound: 'size' });
    expect(jsonOf(fill).created).toHaveLength(2);
    expect(fill.stderr).toContain('pool: cloning member'); // progress on stderr
    expect(jsonOf(runPgx(['agent', 'pool', 'status', '--json'], p))).toMatchObject({
      project: p.name,
      ready: 2,
      target: 2,
      filling: 0,
      stale: 0,
      size: 2,
      filler_running: false,
    });
    expect(runPgx(['agent', 'pool', 'status'], p).stdout).toMatch(/^pool: 2\/2 ready \(bound: size/);
    expect(jsonOf(runPgx(['agent', 'ls', '--json'], p)).pool).toMatchObject({ ready: 2 });
    expect(runPgx(['agent', 'ls'], p).stdout).toMatch(/pool: 2\/2 ready/);
    const drain = runPgx(['agent', 'pool', 'drain', '--json'], p);
    expect(jsonOf(drain).dropped).toHaveLength(2);
    expect(runPgx(['agent', 'pool', 'drain'], p).stdout).toContain('0 member(s) dropped');
    expect(runPgx(['agent', 'pool', 'status'], { ...p, env: { ...p.env, PGX_POOL: '0' } }).stdout).toContain(
      'pool: off',
    );
  });

  it('an invalid PGX_POOL or [agent] pool is a configuration error (exit 3)', () => {
    const p = makeProject({ toml: '[agent]\npool = -1\n' });
    const bad = runPgx(['agent', 'pool', 'status', '--json'], p);
    expect(bad.status).toBe(3);
    expect(jsonOf(bad).error.message).toContain('agent.pool');
    const q = makeProject();
    const env = runPgx(['agent', 'pool', 'status', '--json'], { ...q, env: { ...q.env, PGX_POOL: 'lots' } });
    expect(env.status).toBe(3);
    expect(jsonOf(env).error.message).toContain('PGX_POOL');
  });
});

describe('the hooks and the background filler', () => {
  it('SessionStart warms the pool off its path; SubagentStart claims a member; the filler tops it up again', async () => {
    const p = pooledProject(2);
    drains.push(p);
    const s = session(p.dir, p.dir);
    const start = await hook('session-start', sessionStart(s), p);
    expect(start.status).toBe(0);
    // The filler is detached: the hook has answered; the pool fills after it.
    const filled = await pollUntil(
      async () => {
        const st = await status(p);
        return st.ready === 2 && !st.filler_running ? st : undefined;
      },
      60_000,
      200,
    );
    expect(filled, 'the background filler did not fill the pool').toBeTruthy();
    const log = readFileSync(join(p.home, 'agent', 'pool-fill.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(log.at(-1)).toMatchObject({ outcome: 'filled', target: 2 });

    const agent = 'a0123456789abcdef';
    const sub = await hook('subagent-start', subagentStart(s, agent), p);
    const branch = branchFromContext(sub);
    const hookLog = readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8');
    expect(hookLog).toMatch(/"event":"subagent-start".*"outcome":"ok:claim"/);
    // The subagent's commands run on the claimed branch (the hot path attaches).
    const { run } = await routeAndRun(p, s, agent, "psql -X -Atc 'select current_database()'");
    expect(run.stdout.trim()).toBe(branch);
    expect(readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8')).toMatch(
      /"event":"pre-tool-use".*"outcome":"rewritten:attach"/,
    );
    // After the claim the filler runs again and the pool is back at its target.
    const refilled = await pollUntil(
      async () => {
        const st = await status(p);
        return st.ready === 2 && !st.filler_running ? st : undefined;
      },
      60_000,
      200,
    );
    expect(refilled).toBeTruthy();
    await hook('session-end', sessionEnd(s), p);
  });
});

describe('doctor: pool health', () => {
  it('reports the pool: below target with no filler is a warn with its fix; full is ok; stale members name gc', () => {
    const p = pooledProject(1);
    drains.push(p);
    expect(runPgx(['agent', 'exec', '--id', 'd', '--', 'true'], p).status).toBe(0); // template and registry exist
    const pool = () =>
      (
        jsonOf(runPgx(['agent', 'doctor', '--json'], p)).checks as {
          name: string;
          status: string;
          detail: string;
          fix?: string;
        }[]
      ).find((c) => c.name === 'pool')!;
    runPgx(['agent', 'pool', 'fill'], p);
    expect(pool()).toMatchObject({ status: 'ok' });
    expect(pool().detail).toMatch(/^1\/1 ready/);
    runPgx(['agent', 'pool', 'drain'], p);
    expect(pool()).toMatchObject({ status: 'warn', fix: 'pgx agent pool fill' });
    runPgx(['agent', 'pool', 'fill'], p);
    expect(runPgx(['template', 'refresh'], p).status).toBe(0);
    expect(pool()).toMatchObject({ status: 'warn', fix: 'pgx agent gc' });
  });
});
