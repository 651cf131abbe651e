/**
 * pgx end to end with the real Claude Code CLI: forks (issue 19, item 1).
 * The parent migrates its own session branch (create table + insert), then starts three subagents. Each subagent's
 * branch is a copy of the session's branch as it was at SubagentStart: each sees the parent's migration and data, and
 * only its own changes on top; the parent's branch and the source are untouched by them; `agent ls` records the
 * lineage (`parent` = the session's branch).
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  PSQL_ALLOWED,
  branches,
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  hookLatency,
  hookLog,
  makeE2eProject,
  makeSource,
  pgx,
  pgxJson,
  pristine,
  publicTables,
  recordFigures,
  runScenario,
  warnIfSkipped,
} from './pgx-harness.js';
import { sql } from '../helpers/pgx.js';

warnIfSkipped();
afterAll(cleanupRoots);

const dbsIn = (text: string) => [...text.matchAll(/db=([a-z0-9_]+)/g)].map((m) => m[1]);
/** One line naming the database, its public tables and the sum of parent_mig.x. */
const LOOK = `psql -X -At -v ON_ERROR_STOP=1 -c "select 'db=' || current_database() || ' tables=' || (select string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public') || ' sum=' || (select sum(x) from parent_mig);"`;

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: forks`, () => {
  it("three subagents each see the parent's migration and only their own changes; the parent and the source untouched", async () => {
    const source = await makeSource();
    const p = makeE2eProject({ source }); // [agent] fork = "session": the default
    const workloads = [
      { w: 'fa', k: 10 },
      { w: 'fb', k: 100 },
      { w: 'fc', k: 1000 },
    ];
    const parentCommands = [
      `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table parent_mig (x int); insert into parent_mig values (1), (2), (3); select 'db=' || current_database();"`,
    ];
    const subagents = workloads.map(({ w, k }) => ({
      marker: w,
      commands: [
        LOOK,
        `psql -X -q -At -v ON_ERROR_STOP=1 -c "insert into parent_mig values (${k}); create table own_${w} (x int); select 'db=' || current_database();"`,
        LOOK,
      ],
    }));
    const t0 = Date.now();
    const run = await runScenario(p, { subagents, parentCommands }, { allowedTools: PSQL_ALLOWED });
    const wall = Date.now() - t0;
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);

    const rows = branches(p);
    const session = rows.find((b) => b.kind === 'session')!;
    expect(session, JSON.stringify(rows)).toBeTruthy();
    expect(dbsIn(run.fake.parentBashResults[0] ?? '')).toEqual([session.name]);
    const ls = pgxJson(p, ['agent', 'ls']).branches as {
      name: string;
      agent_id: string | null;
      parent: string | null;
      kind: string;
    }[];
    for (const { w, k } of workloads) {
      const agentId = run.fake.agentIds.get(w)!;
      const b = ls.find((r) => r.agent_id === agentId && r.kind === 'subagent');
      expect(b, `branch of ${w}`).toBeTruthy();
      expect(b!.parent, `${w}'s lineage`).toBe(session.name);
      const results = run.fake.toolResults.get(w)!;
      expect(results, w).toHaveLength(3);
      for (const r of results) expect(dbsIn(r), `${w}: ${r}`).toEqual([b!.name]);
      // At its start: the parent's migration and rows. At its end: those plus its own change, nobody else's.
      expect(results[0]).toContain('tables=items,parent_mig sum=6');
      expect(results[2]).toContain(`tables=${['items', `own_${w}`, 'parent_mig'].sort().join(',')} sum=${6 + k}`);
    }
    const starts = hookLog(p).filter((l) => l.event === 'subagent-start');
    expect(starts.map((l) => l.outcome)).toEqual(['ok:clone', 'ok:clone', 'ok:clone']); // copies (the parent changed its branch)

    // The parent's branch: its own migration only. The source: untouched; the template as the source.
    pgxJson(p, ['agent', 'up', '--session', run.sessionId]); // SessionEnd retired it: revive to look
    expect(await publicTables(session.name)).toEqual(['items', 'parent_mig']);
    expect((await sql(`SELECT sum(x)::int AS n FROM parent_mig`, [], session.name))[0].n).toBe(6);
    expect(await publicTables(source.name)).toEqual(['items']);
    const r = await pristine(p);
    expect(r.source).toBe(r.baseline);
    expect(r.template).toBe(r.baseline);

    recordFigures('fork-three-subagents', {
      wall_ms: wall,
      subagent_start_ms: hookLatency(p, 'subagent-start'),
      pre_tool_use_ms: hookLatency(p, 'pre-tool-use'),
    });
    expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  });
});
