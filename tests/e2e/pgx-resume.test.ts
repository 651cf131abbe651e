/**
 * pgx end to end with the real Claude Code CLI: `--resume` reattaches the session's branch.
 *
 * Run 1 (`--session-id <sid>`): the PARENT creates a marker table through its env-file environment (SessionStart
 * wrote PGDATABASE etc. to CLAUDE_ENV_FILE; the parent's Bash commands are not rewritten), a subagent makes its own
 * table. SessionEnd retires the session's branch.
 * Run 2 (`--resume <sid>`): SessionStart (source "resume") revives the SAME branch; the parent's command sees the
 * marker table from run 1. A new subagent gets a new branch, cloned from the template (no marker, no run-1 table).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from '../helpers/pgx.js';
import {
  PSQL_ALLOWED,
  branches,
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  hookLog,
  makeE2eProject,
  makeSource,
  pgx,
  pristine,
  recordFigures,
  runScenario,
  warnIfSkipped,
} from './pgx-harness.js';

warnIfSkipped();
afterAll(cleanupRoots);

const dbsIn = (text: string) => [...text.matchAll(/db=([a-z0-9_]+)/g)].map((m) => m[1]);
const LIST = `psql -X -At -v ON_ERROR_STOP=1 -c "select 'db=' || current_database() || ' tables=' || string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public';"`;

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: --resume`, () => {
  it('a resumed session reattaches (revives) its own branch, with the parent’s run-1 marker table', async () => {
    const source = await makeSource();
    // Subagents from the template (as before forks): their tables are compared without the parent's marker.
    const p = makeE2eProject({ source, toml: '[agent]\nfork = "template"\n' });
    const sid = randomUUID();
    // The parent's own commands are plain psql: allowed by a rule of the user's, not by pgx's.
    const allowedTools = PSQL_ALLOWED;

    const t1 = Date.now();
    const run1 = await runScenario(
      p,
      {
        parentCommands: [
          `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table parent_marker (x int); insert into parent_marker values (42); select 'db=' || current_database();"`,
        ],
        subagents: [
          {
            marker: 'first',
            commands: [
              `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table first_t (x int); select 'db=' || current_database();"`,
            ],
          },
        ],
      },
      { sessionId: sid, allowedTools },
    );
    const wall1 = Date.now() - t1;
    expect(run1.out.code, describeRun(run1)).toBe(0);
    expect(run1.fake.errors).toEqual([]);
    const after1 = branches(p);
    const session1 = after1.filter((b) => b.kind === 'session');
    expect(session1).toHaveLength(1);
    const S = session1[0]!.name;
    expect(dbsIn(run1.fake.parentBashResults[0] ?? '')).toEqual([S]);
    expect(session1[0]!.state).toBe('retiring'); // SessionEnd retired it
    expect(await dbAllowConn(S)).toBe(false);

    const t2 = Date.now();
    const run2 = await runScenario(
      p,
      {
        parentCommands: [
          `psql -X -At -v ON_ERROR_STOP=1 -c "select 'db=' || current_database() || ' marker=' || (select string_agg(x::text, ',') from parent_marker);"`,
        ],
        subagents: [{ marker: 'second', commands: [LIST] }],
      },
      { resume: sid, allowedTools, prompt: 'Continue: run the second e2e subagent.' },
    );
    const wall2 = Date.now() - t2;
    expect(run2.out.code, describeRun(run2)).toBe(0);
    expect(run2.fake.errors).toEqual([]);
    expect(JSON.parse(run2.out.stdout).session_id).toBe(sid);

    // The parent's command in run 2 ran in the SAME branch and saw run 1's marker.
    expect(run2.fake.parentBashResults[0]).toContain(`db=${S} marker=42`);
    const starts = hookLog(p).filter((l) => l.event === 'session-start');
    expect(starts.map((l) => [l.branch, l.outcome])).toEqual([
      [S, 'ok:clone'],
      [S, 'ok:revive'], // retiring → active again
    ]);
    // The new subagent's branch is a fresh clone: neither the parent's marker nor run 1's subagent table.
    const second = branches(p).find((b) => b.agent_id === run2.fake.agentIds.get('second'))!;
    expect(second).toBeTruthy();
    expect(run2.fake.toolResults.get('second')?.[0]).toContain(`db=${second.name} tables=items`);
    expect(run2.fake.toolResults.get('second')?.[0]).not.toMatch(/parent_marker|first_t/);

    const after2 = branches(p);
    expect(after2.filter((b) => b.kind === 'session').map((b) => b.name)).toEqual([S]);
    expect(after2.filter((b) => b.kind === 'subagent')).toHaveLength(2);
    recordFigures('6-resume', {
      wall_run1_ms: wall1,
      wall_run2_ms: wall2,
      same_branch: after2.find((b) => b.kind === 'session')!.name === S,
      session_start_outcomes: starts.map((l) => l.outcome),
      session_state_after_run2: after2.find((b) => b.kind === 'session')!.state,
    });

    const s = await pristine(p);
    expect(s.source).toBe(s.baseline);
    expect(s.template).toBe(s.baseline);
    expect(pgx(p, ['agent', 'down', '--session', sid, '--now']).status).toBe(0);
  });
});

async function dbAllowConn(name: string): Promise<boolean | undefined> {
  return (await sql<{ datallowconn: boolean }>(`SELECT datallowconn FROM pg_database WHERE datname = $1`, [name]))[0]
    ?.datallowconn;
}
