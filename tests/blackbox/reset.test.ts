// `pgx agent reset` / `adopt` / `--from` as a user runs them (the wiring; the engine's cases and crash windows are
// tests/engine/reset.test.ts and fork.test.ts): inside a routed command no selector resets the caller's own branch;
// the documented exit codes; `--from` on exec and up.
import { describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';
import {
  newAgentId,
  session,
  sessionEnd,
  sessionStart,
  subagentStart,
  subagentStop,
} from '../helpers/hook-payloads.js';
import { branchFromContext, hook, routeAndRun } from '../helpers/hooks.js';

/** A project whose server is in .pgx.toml: a routed command does not inherit PGX_DATABASE_URL (libpq-env.ts). */
function project() {
  const p = makeProject({ toml: `[server]\nurl = "${pgInfo().url}"\n` });
  return p;
}

const tablesOf = async (db: string) =>
  (
    await sql<{ t: string }>(
      `SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE schemaname = 'public'`,
      [],
      db,
    )
  )[0]!.t;

// Not concurrent: runPgx blocks this process's event loop (spawnSync), and a DROP DATABASE in the child then waits
// (ProcSignalBarrier) for a connection of this process still authenticating: 60 s, until authentication_timeout.
describe('pgx agent reset', () => {
  it("inside a routed command, no selector resets the caller's own branch; the DSN keeps working", async () => {
    const p = project();
    expect(
      runPgx(['agent', 'exec', '--id', 'r', '--keep', '--', 'psql', '-X', '-q', '-c', 'create table junk (x int)'], p)
        .status,
    ).toBe(0);
    const branch = `exec_${p.host}_r`;
    expect(await tablesOf(branch)).toBe('junk');
    const r = runPgx(
      ['agent', 'exec', '--id', 'r', '--keep', '--', process.execPath, LAUNCHER, 'agent', 'reset', '--json'],
      p,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      name: branch,
      from: null,
      method: 'template',
      backends_terminated: 0,
    });
    expect(await tablesOf(branch)).toBeNull();
    const again = runPgx(
      ['agent', 'exec', '--id', 'r', '--keep', '--', 'psql', '-X', '-At', '-c', 'select current_database()'],
      p,
    );
    expect(again.stdout.trim()).toBe(branch);
    runPgx(['agent', 'down', '--id', 'r', '--now'], p);
  });

  it('exit 2 without a selector outside a routed command, 5 for an unknown branch, 6 for a database pgx did not make', async () => {
    const p = project();
    expect(runPgx(['agent', 'reset'], { ...p, env: { ...p.env, PGX_BRANCH: '' } }).status).toBe(2);
    expect(runPgx(['agent', 'reset', '--to', 'elsewhere', '--id', 'x'], p).status).toBe(2);
    expect(runPgx(['agent', 'reset', '--id', 'nosuch', '--json'], p).status).toBe(5);
    const stranger = `stranger_${p.host}`;
    await sql(`CREATE DATABASE ${stranger}`);
    try {
      const r = runPgx(['agent', 'reset', '--branch', stranger, '--json'], p);
      expect(r.status).toBe(6);
      expect(JSON.parse(r.stdout).error.code).toBe('NOT_PGX_DATABASE');
    } finally {
      await sql(`DROP DATABASE ${stranger}`);
    }
    expect(runPgx(['agent', 'adopt', '--agent', 'nobody'], p).status).toBe(5);
  });

  it('--from <id> on up and exec: a new branch copies another; --from session without a session is exit 2', async () => {
    const p = project();
    expect(
      runPgx(
        ['agent', 'exec', '--id', 'base', '--keep', '--', 'psql', '-X', '-q', '-c', 'create table base_t (x int)'],
        p,
      ).status,
    ).toBe(0);
    const up = jsonOf(runPgx(['agent', 'up', '--id', 'copy', '--from', 'base', '--json'], p));
    expect(up).toMatchObject({ parent: `exec_${p.host}_base`, fork: { parent: `exec_${p.host}_base` } });
    expect(await tablesOf(up.branch)).toBe('base_t');
    const ex = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'copy2',
        '--from',
        'base',
        '--',
        'psql',
        '-X',
        '-At',
        '-c',
        "select string_agg(tablename, ',') from pg_tables where schemaname = 'public'",
      ],
      p,
    );
    expect(ex.stdout.trim()).toBe('base_t');
    expect(
      runPgx(['agent', 'up', '--id', 'nope', '--from', 'session'], {
        ...p,
        env: { ...p.env, CLAUDE_CODE_SESSION_ID: '' },
      }).status,
    ).toBe(2);
    const ls = jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches as { name: string; parent: string | null }[];
    expect(ls.find((b) => b.name === up.branch)?.parent).toBe(`exec_${p.host}_base`);
    for (const id of ['base', 'copy', 'copy2']) runPgx(['agent', 'down', '--id', id, '--now'], p);
  });
});

describe('SubagentStart says what the branch is a copy of', () => {
  it("a copy of the session's branch (after the parent migrated it); without one, the template, said in one sentence", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const sessionBranch = branchFromContext(await hook('session-start', sessionStart(s), p));
    await sql('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)', [], sessionBranch);
    const r = await hook('subagent-start', subagentStart(s, newAgentId()), p);
    const ctx: string = r.json.hookSpecificOutput.additionalContext;
    expect(ctx).toContain(`a copy of your session's branch "${sessionBranch}" as it is now`);
    expect(ctx).toContain('`pgx agent reset`');
    expect(await tablesOf(branchFromContext(r))).toBe('parent_mig');

    const lone = session(p.dir, p.dir); // a session whose SessionStart never ran: no branch to copy
    const r2 = await hook('subagent-start', subagentStart(lone, newAgentId()), p);
    expect(r2.json.hookSpecificOutput.additionalContext).toContain(
      "pgx could not copy your session's branch (the session's branch does not exist), so yours is an empty database instead.",
    );
    expect(r2.json.hookSpecificOutput.permissionDecision).toBeUndefined();
    runPgx(['agent', 'down', '--session', s.sessionId, '--now'], p);
    runPgx(['agent', 'down', '--session', lone.sessionId, '--now'], p);
  });
});

describe('after a subagent stopped and its session ended', () => {
  it('adopt into the ended session is refused (exit 6) with the way to keep the work; reset clears the old changes and the 24 h keep from ls', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    await hook('session-start', sessionStart(s), p);
    const agentId = newAgentId();
    const agentBranch = branchFromContext(await hook('subagent-start', subagentStart(s, agentId), p));
    const made = await routeAndRun(p, s, agentId, 'psql -X -q -c "create table kept_work (x int)"');
    expect(made.run.status, made.run.stderr).toBe(0);
    await hook('subagent-stop', subagentStop(s, agentId), p);
    const mine = () =>
      (
        jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches as {
          name: string;
          state: string;
          deadline: string;
          changes: { changed: boolean } | null;
        }[]
      ).find((b) => b.name === agentBranch)!;
    expect(mine()).toMatchObject({ state: 'retiring', changes: { changed: true } });
    expect(Date.parse(mine().deadline) - Date.now()).toBeGreaterThan(23 * 3600_000); // kept 24 h: it changed something
    expect(runPgx(['agent', 'ls'], p).stdout).toContain(`${agentBranch} changed: `);

    await hook('session-end', sessionEnd(s), p);
    const adopt = runPgx(['agent', 'adopt', '--agent', agentId], p);
    expect(adopt.status).toBe(6);
    expect(adopt.stderr).toMatch(
      new RegExp(
        `error: Agent ${agentId}'s session has ended: its branch "\\S+" is retiring, and gc drops it at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\(in \\d+m`,
      ),
    );
    expect(adopt.stderr).toContain(
      `hint: To keep the subagent's work, make the session's branch active again first (as resuming the session would): \`pgx agent up --session ${s.sessionId}\` (kept for [agent] idle_ttl from its last use), then \`pgx agent adopt --agent ${agentId}\`.`,
    );
    // the way out works: revived, then adopted
    const revived = runPgx(['agent', 'up', '--session', s.sessionId, '--json'], p);
    expect(revived.status, revived.stderr).toBe(0);
    const adopted = runPgx(['agent', 'adopt', '--agent', agentId, '--json'], p);
    expect(adopted.status, adopted.stderr + adopted.stdout).toBe(0);
    expect(await tablesOf(jsonOf(revived).branch)).toBe('kept_work');

    const reset = runPgx(['agent', 'reset', '--agent', agentId, '--to', 'template', '--json'], p);
    expect(reset.status, reset.stderr).toBe(0);
    expect(jsonOf(reset)).toMatchObject({ name: agentBranch, method: 'template' }); // retiring: no connection to look inside
    // ls no longer shows the changes it no longer holds, nor keeps it 24 h for them: its grace (10m) at most
    expect(mine().changes).toBeNull();
    expect(Date.parse(mine().deadline) - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    expect(runPgx(['agent', 'ls'], p).stdout).not.toContain(`${agentBranch} changed: `);
    runPgx(['agent', 'down', '--project', '--now', '--yes'], p);
  });
});
