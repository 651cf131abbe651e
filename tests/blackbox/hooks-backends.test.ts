// Backends that outlive their agent: SubagentStop's barrier terminates every session on the branch, and the
// client_connection_check_interval guard ends the backend of a SIGKILLed client mid-transaction (with a control
// run, guards off, showing the backend would otherwise survive the same window).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { makeProject, pgInfo, sql } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, subagentStart, subagentStop } from '../helpers/hook-payloads.js';
import {
  backendsOn,
  bashEnv,
  branchFromContext,
  dbState,
  descendantsNamed,
  hook,
  pollUntil,
  rewriteOf,
  routeAndRun,
  sleep,
  startBash,
} from '../helpers/hooks.js';

const lastLog = (home: string) =>
  JSON.parse(
    readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
      .trim()
      .split('\n')
      .pop()!,
  );

function branchClient(database: string) {
  const p = pgInfo();
  return new pg.Client({
    host: p.host,
    port: p.port,
    user: p.user,
    password: p.password,
    database,
    application_name: 'held-by-test',
  });
}

describe('backends on a branch', () => {
  it('SubagentStop terminates the sessions still on the branch (a psql of the agent and a node client) and logs it', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const branch = branchFromContext(await hook('subagent-start', subagentStart(s, a), p));
    // The agent left a psql running in the background (through its rewritten command) …
    const rw = rewriteOf(
      await hook(
        'pre-tool-use',
        preToolUseBash(s, `psql -X -c 'select pg_sleep(60)'`, { agentId: a, input: { run_in_background: true } }),
        p,
      ),
    );
    const held = startBash(rw.command, { cwd: p.dir, env: bashEnv(p, s) });
    // … and something else holds an idle session.
    const client = branchClient(branch);
    let clientError: Error | undefined;
    client.on('error', (e) => (clientError = e));
    await client.connect();
    await client.query('SELECT 1');
    const bothIn = await pollUntil(async () => (await backendsOn(branch)).length >= 2, 10_000);
    expect(bothIn, `backends on the branch: ${JSON.stringify(await backendsOn(branch))}`).toBe(true);

    const stop = await hook('subagent-stop', subagentStop(s, a), p);
    expect(stop.stdout).toBe(''); // never blocks the stop
    const log = lastLog(p.home);
    expect(log).toMatchObject({ event: 'subagent-stop', agent_id: a, branch });
    const m = /^retired:terminated=(\d+):remaining=(\d+):changes=none$/.exec(log.outcome); // it changed nothing
    expect(m, log.outcome).not.toBeNull();
    // ≥ 1, not 2: in one CI run under load the count said 1 with both sessions gone and both ended by termination
    // (asserted below through each one's own error), so the count is not what proves it.
    expect(Number(m![1])).toBeGreaterThanOrEqual(1);
    expect(Number(m![2])).toBe(0);

    expect(await backendsOn(branch)).toEqual([]);
    const heldResult = await held.done;
    expect(heldResult.status).not.toBe(0);
    expect(heldResult.stderr).toMatch(/terminat|connection/i);
    expect(await pollUntil(async () => clientError, 5000)).toBeDefined();
    await client.end().catch(() => {});
    expect(await dbState(branch)).toEqual({ exists: true, allowConn: false });
    // And no new session gets in while it is retiring.
    const late = branchClient(branch);
    late.on('error', () => {});
    await expect(late.connect()).rejects.toMatchObject({ code: '55000' });
    await late.end().catch(() => {});
  });

  /**
   * A routed psql inside `BEGIN; INSERT …; SELECT pg_sleep(4)` is SIGKILLed mid-sleep. Returns the backend's pid and
   * the kill time; the caller watches what happens to the backend.
   */
  async function killMidTransaction(toml: string) {
    const p = makeProject({ toml });
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const setup = await routeAndRun(
      p,
      s,
      a,
      `psql -X -v ON_ERROR_STOP=1 -qc 'create table killed (x int)' && psql -X -Atc 'show client_connection_check_interval'`,
    );
    expect(setup.run.status, setup.run.stderr).toBe(0);
    const branch = setup.rewrite.branch;
    const sqlText = `psql -X -v ON_ERROR_STOP=1 <<'SQL'\nBEGIN;\nINSERT INTO killed SELECT generate_series(1, 100);\nSELECT pg_sleep(4);\nCOMMIT;\nSQL`;
    const rw = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, sqlText, { agentId: a }), p));
    const job = startBash(rw.command, { cwd: p.dir, env: bashEnv(p, s) });
    const backend = await pollUntil(
      async () =>
        (
          await sql<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
            [branch],
          )
        )[0],
      10_000,
      20,
    );
    expect(backend, 'the transaction never reached pg_sleep').toBeDefined();
    const psqls = descendantsNamed(job.child.pid!, 'psql');
    expect(psqls.length).toBe(1);
    process.kill(psqls[0]!, 'SIGKILL');
    const killedAt = performance.now();
    const exit = await job.done;
    expect(exit.status).toBe(137); // 128 + SIGKILL, passed through the inner shell and `agent exec`
    const alive = async () => (await sql('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [backend!.pid])).length === 1;
    return { branch, interval: setup.run.stdout.trim(), killedAt, alive };
  }

  it('guards on (client_connection_check_interval = 1s): the SIGKILLed client’s backend is gone within 1 s + 1 s, nothing committed', async () => {
    const k = await killMidTransaction('[guards]\nclient_connection_check_interval = "1s"\n');
    expect(k.interval).toBe('1s'); // the guard is set on the branch itself
    const gone = await pollUntil(async () => !(await k.alive()), 2000 - (performance.now() - k.killedAt), 25);
    const after = Math.round(performance.now() - k.killedAt);
    expect(gone, `backend still there ${after} ms after the kill`).toBe(true);
    expect(after).toBeLessThanOrEqual(2000);
    expect((await sql<{ n: number }>('SELECT count(*)::int AS n FROM killed', [], k.branch))[0]!.n).toBe(0);
  });

  it('control, guards off: the same backend outlives that window (so the test above can fail)', async () => {
    const k = await killMidTransaction('[guards]\nenabled = false\n');
    expect(k.interval).toBe('0');
    await sleep(Math.max(0, 2000 - (performance.now() - k.killedAt)));
    expect(await k.alive(), 'backend should still be sleeping 2 s after the kill').toBe(true);
    // It ends when pg_sleep returns and it finds the client gone; the transaction never committed.
    expect(await pollUntil(async () => !(await k.alive()), 6000, 50)).toBe(true);
    expect((await sql<{ n: number }>('SELECT count(*)::int AS n FROM killed', [], k.branch))[0]!.n).toBe(0);
  });
});
