/**
 * pgx end to end with the real Claude Code CLI: the client dies mid-transaction.
 *
 * A subagent's psql sends ONE query string `BEGIN; INSERT …; SELECT pg_sleep(6); INSERT …; COMMIT;` into a table that
 * exists in the source. While the backend sleeps, the whole run dies: the claude process group is SIGKILLed together
 * with the run's orphaned hook/Bash shells and psql (killAll: Claude Code starts those with setsid, so the group kill
 * alone would leave psql alive). No SubagentStop arrives.
 *
 * Guarded branch ([guards] client_connection_check_interval = "1s"): the backend notices the dead client while it
 * sleeps, aborts, and is gone within the interval + 1 s; 0 rows committed; the branch stays active on its idle TTL
 * and `pgx agent down --agent <id> --now` removes it.
 * Control ([guards] enabled = false): the same run commits both rows once the sleep is over (the server only learns
 * that the client is gone when it next talks to it) — proof that this test can fail.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { sql } from '../helpers/pgx.js';
import { findRunProcesses } from './claude.js';
import {
  PSQL_ALLOWED,
  branches,
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  hookLog,
  makeE2eProject,
  makeSource,
  pgx,
  poll,
  pristine,
  recordFigures,
  sleep,
  startScenario,
  warnIfSkipped,
  type Source,
} from './pgx-harness.js';

warnIfSkipped();
afterAll(cleanupRoots);

const SLEEP_S = 6;
const NOTE = 'e2e-client-death';
const TXN = `BEGIN; INSERT INTO items VALUES (101, '${NOTE}'); SELECT pg_sleep(${SLEEP_S}); INSERT INTO items VALUES (102, '${NOTE}'); COMMIT;`;

interface Outcome {
  branch: string;
  agentId: string;
  sessionId: string;
  /** ms from the kill until no backend is left on the branch. */
  goneMs: number;
  /** rows the transaction left in the branch. */
  committed: number;
  wallMs: number;
  killedPids: number;
}

async function killMidSleep(
  toml: string,
  source: Source,
  label: string,
): Promise<Outcome & { p: ReturnType<typeof makeE2eProject> }> {
  const p = makeE2eProject({ source, toml });
  const t0 = Date.now();
  const { fake, proc, sessionId } = await startScenario(
    p,
    { subagents: [{ marker: 'sleeper', commands: [`psql -X -v ON_ERROR_STOP=1 -c "${TXN}"`] }] },
    { allowedTools: PSQL_ALLOWED, timeoutMs: 60_000 },
  );
  try {
    // The backend is inside pg_sleep, in the subagent's branch: the first INSERT is done, the COMMIT is not.
    const backend = await poll(
      async () =>
        (
          await sql<{ pid: number; datname: string }>(
            `SELECT pid, datname FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE $1`,
            [`%${NOTE}%`],
          )
        )[0],
      30_000,
      `${label}: the subagent's transaction to reach pg_sleep`,
    );
    await sleep(1000); // well inside the 6 s sleep
    // The client is an orphaned psql in a session of its own (setsid), not in claude's process group.
    const comm = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        return '';
      }
    };
    const psqlPids = findRunProcesses(proc.runId).filter((pid) => comm(pid) === 'psql');
    expect(psqlPids, `${label}: the subagent's psql`).toHaveLength(1);
    const killed = proc.killAll('SIGKILL');
    expect(killed).toContain(psqlPids[0]);
    const tKill = Date.now();
    await poll(
      async () => findRunProcesses(proc.runId).length === 0,
      5_000,
      `${label}: every process of the run to die`,
    );
    const out = await proc.done;
    expect(out.signal).toBe('SIGKILL');
    await poll(
      async () => (await sql(`SELECT 1 FROM pg_stat_activity WHERE datname = $1`, [backend.datname])).length === 0,
      (SLEEP_S + 5) * 1000,
      `${label}: the backend to go away`,
      20,
    );
    const goneMs = Date.now() - tKill;
    const committed = (
      await sql<{ n: number }>(`SELECT count(*)::int AS n FROM items WHERE note = $1`, [NOTE], backend.datname)
    )[0]!.n;
    const agentId = hookLog(p).find((l) => l.event === 'subagent-start')!.agent_id!;
    return {
      p,
      branch: backend.datname,
      agentId,
      sessionId,
      goneMs,
      committed,
      wallMs: Date.now() - t0,
      killedPids: killed.length,
    };
  } finally {
    proc.killAll('SIGKILL');
    await fake.close();
  }
}

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: the client dies mid-transaction`, () => {
  let source: Source;

  it('guarded (client_connection_check_interval = 1s): 0 rows, backend gone within 1 s + 1 s, branch active until `down --now`', async () => {
    source = await makeSource();
    const r = await killMidSleep('[guards]\nclient_connection_check_interval = "1s"\n', source, 'guarded');
    const { p } = r;
    recordFigures('5-client-death-guarded', {
      wall_ms: r.wallMs,
      backend_gone_after_kill_ms: r.goneMs,
      rows_committed: r.committed,
      processes_killed: r.killedPids,
    });
    expect(r.branch).toMatch(new RegExp(`^agent_e2e_${r.sessionId.slice(0, 8)}_`));
    expect(r.committed).toBe(0);
    expect(r.goneMs).toBeLessThanOrEqual(2000);
    // The source never saw any of it.
    expect((await sql(`SELECT count(*)::int AS n FROM items`, [], source.name))[0].n).toBe(3);

    // No SubagentStop came: the branch is still active, on its idle deadline.
    const log = hookLog(p);
    expect(log.filter((l) => l.event === 'subagent-stop' || l.event === 'session-end')).toEqual([]);
    const b = branches(p).find((x) => x.name === r.branch)!;
    expect(b).toMatchObject({ kind: 'subagent', agent_id: r.agentId, state: 'active', deadline_kind: 'idle' });
    expect(
      (
        await sql(
          `SELECT d.setconfig FROM pg_db_role_setting d JOIN pg_database x ON x.oid = d.setdatabase WHERE x.datname = $1`,
          [r.branch],
        )
      )[0]?.setconfig,
    ).toContain('client_connection_check_interval=1000ms');

    const down = pgx(p, ['agent', 'down', '--agent', r.agentId, '--now', '--json']);
    expect(down.status, down.stdout + down.stderr).toBe(0);
    expect(JSON.parse(down.stdout).branches).toEqual([expect.objectContaining({ name: r.branch, action: 'dropped' })]);
    expect(await sql(`SELECT 1 FROM pg_database WHERE datname = $1`, [r.branch])).toEqual([]);
    expect(branches(p).find((x) => x.name === r.branch)).toBeUndefined();

    const s = await pristine(p);
    expect(s.source).toBe(s.baseline);
    expect(s.template).toBe(s.baseline);
    expect(pgx(p, ['agent', 'down', '--session', r.sessionId, '--now']).status).toBe(0);
  });

  it('control ([guards] enabled = false): the same kill lets the transaction COMMIT after the sleep', async () => {
    source ??= await makeSource();
    const r = await killMidSleep('[guards]\nenabled = false\n', source, 'control');
    const { p } = r;
    recordFigures('5-client-death-control-no-guards', {
      wall_ms: r.wallMs,
      backend_gone_after_kill_ms: r.goneMs,
      rows_committed: r.committed,
      processes_killed: r.killedPids,
    });
    expect(
      await sql(
        `SELECT d.setconfig FROM pg_db_role_setting d JOIN pg_database x ON x.oid = d.setdatabase WHERE x.datname = $1`,
        [r.branch],
      ),
    ).toEqual([]);
    // The dead client's transaction ran to its end: both rows committed, and the backend lived on for the sleep.
    expect(r.committed).toBe(2);
    expect(r.goneMs).toBeGreaterThan(2000);
    expect((await sql(`SELECT count(*)::int AS n FROM items`, [], source.name))[0].n).toBe(3);
    const s = await pristine(p);
    expect(s.source).toBe(s.baseline);
    expect(s.template).toBe(s.baseline);
    expect(pgx(p, ['agent', 'down', '--session', r.sessionId, '--now']).status).toBe(0);
  });
});
