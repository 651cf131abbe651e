/**
 * pgx end to end with the real Claude Code CLI: isolation.
 *  1. three subagents (users / account / booking) migrate their own tables: three branches, each holding only its
 *     own agent's objects; every Bash command routed; all three retired after SubagentStop; the session's branch
 *     without any agent's tables.
 *  2. twenty subagents in one message: 20/20 branches, 0 contamination, 20/20 retired; SubagentStart latency.
 *  3. (after every scenario) the source's and the template's schema identical to the baseline.
 *  4. decoys: DATABASE_URL, PGDATABASE and PGSERVICE (+ PGSERVICEFILE) in claude's environment all point at the
 *     source; nothing lands on the source, everything on the branches (and the parent's on the session branch).
 * The runs use `--allowedTools Agent,Bash(psql:*)`: the user allows psql and nothing else in Bash, so the rewritten
 * commands run because that rule judges the verbatim copy pgx's rewrite carries.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pgInfo, sql } from '../helpers/pgx.js';
import {
  PSQL_ALLOWED,
  branches,
  ccHookLatency,
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
  pgxJsonAsync,
  pristine,
  publicTables,
  recordFigures,
  runScenario,
  serverVersion,
  warnIfSkipped,
  type E2eProject,
  type Source,
} from './pgx-harness.js';
import { withPsql } from '../helpers/psql-stand-in.js';

warnIfSkipped();
afterAll(cleanupRoots);

/** One psql call; the LAST statement's result is printed, so every command reports the database it ran in. */
const psql = (statements: string) =>
  `psql -X -q -At -v ON_ERROR_STOP=1 -c "${statements} select 'db=' || current_database();"`;
const LIST = `select 'db=' || current_database() || ' tables=' || string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public';`;
const listCommand = `psql -X -At -v ON_ERROR_STOP=1 -c "${LIST}"`;

/** Database names reported by `db=<name>` in a tool_result. */
const dbsIn = (text: string) => [...text.matchAll(/db=([a-z0-9_]+)/g)].map((m) => m[1]);

async function expectPristine(p: E2eProject): Promise<void> {
  const r = await pristine(p);
  expect(r.source, 'source schema md5').toBe(r.baseline);
  expect(r.template, 'template schema md5').toBe(r.baseline);
  expect(r.sourceSettings).toEqual([]);
}

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: isolation`, () => {
  let source: Source;

  it('three subagents migrate their own branches; nothing leaks; all retired; the session branch untouched', async () => {
    source = await makeSource();
    const p = makeE2eProject({ source });
    // The portable layout: the shared file names no path of this machine; the rules are in settings.local.json.
    expect(p.settings.permissions).toBeUndefined();
    expect(JSON.stringify(p.settings)).not.toContain(p.root);
    expect(p.localSettings?.permissions?.allow).toEqual([
      expect.stringMatching(/ agent exec --agent \* --cwd .* -- \*\)$/),
      'Bash(exit)',
    ]);
    const workloads = ['users', 'account', 'booking'];
    const subagents = workloads.map((w) => ({
      marker: w,
      commands: [
        psql(`create table ${w}_main (id serial primary key, name text); create table ${w}_marker (who text);`),
        psql(
          `insert into ${w}_marker values ('${w}'); alter table ${w}_main add column created_at timestamptz default now();`,
        ),
        listCommand,
      ],
    }));
    const t0 = Date.now();
    const run = await runScenario(p, { subagents }, { allowedTools: PSQL_ALLOWED });
    const wall = Date.now() - t0;
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);

    const rows = branches(p);
    const subs = rows.filter((b) => b.kind === 'subagent');
    expect(subs, JSON.stringify(rows)).toHaveLength(3);
    const session = rows.filter((b) => b.kind === 'session');
    expect(session).toHaveLength(1);
    expect(session[0]!.session_id).toBe(run.sessionId);

    const branchOf = new Map<string, string>();
    for (const w of workloads) {
      const agentId = run.fake.agentIds.get(w);
      expect(agentId, w).toBeTruthy();
      const b = subs.find((s) => s.agent_id === agentId);
      expect(b, `branch of ${w}`).toBeTruthy();
      branchOf.set(w, b!.name);
      // Every Bash command was routed: each of the three results names this agent's branch, and only it.
      const results = run.fake.toolResults.get(w)!;
      expect(results, w).toHaveLength(3);
      for (const r of results) expect(dbsIn(r), `${w}: ${r}`).toEqual([b!.name]);
      expect(results[2]).toContain(`tables=${['items', `${w}_main`, `${w}_marker`].sort().join(',')}`);
      // Retired after SubagentStop: connections refused until revived.
      expect(b!.state).toBe('retiring');
      expect(b!.deadline_kind).toBe('grace');
      expect((await sql(`SELECT datallowconn FROM pg_database WHERE datname = $1`, [b!.name]))[0]).toEqual({
        datallowconn: false,
      });
    }
    expect(new Set(branchOf.values()).size).toBe(3);
    const log = hookLog(p);
    for (const w of workloads) {
      const id = run.fake.agentIds.get(w)!;
      const mine = log.filter((l) => l.agent_id === id);
      expect(mine.filter((l) => l.event === 'pre-tool-use').map((l) => l.outcome)).toEqual([
        'rewritten:attach',
        'rewritten:attach',
        'rewritten:attach',
      ]);
      expect(mine.find((l) => l.event === 'subagent-stop')?.outcome).toMatch(/^retired:/);
    }

    // Revive each branch with `pgx agent up` and look at it directly: only its own agent's objects.
    for (const w of workloads) {
      const up = pgxJson(p, ['agent', 'up', '--agent', run.fake.agentIds.get(w)!, '--session', run.sessionId]);
      expect(up).toMatchObject({ branch: branchOf.get(w), method: 'revive', fresh: false });
      expect(await publicTables(branchOf.get(w)!)).toEqual(['items', `${w}_main`, `${w}_marker`].sort());
      expect(await sql(`SELECT who FROM ${w}_marker`, [], branchOf.get(w)!)).toEqual([{ who: w }]);
      expect((await sql(`SELECT count(*)::int AS n FROM items`, [], branchOf.get(w)!))[0].n).toBe(3);
    }
    // The session's own branch: none of the agents' tables. SessionEnd retired it (see the report); revive to look.
    const sessionEnd = log.filter((l) => l.event === 'session-end');
    const upS = pgxJson(p, ['agent', 'up', '--session', run.sessionId]);
    expect(upS.branch).toBe(session[0]!.name);
    expect(await publicTables(session[0]!.name)).toEqual(['items']);
    expect(await publicTables(source.name)).toEqual(['items']);

    await expectPristine(p);
    recordFigures('1-three-subagents', {
      wall_ms: wall,
      branches: subs.length,
      routed_results: workloads.reduce((n, w) => n + run.fake.toolResults.get(w)!.length, 0),
      retired: subs.filter((b) => b.state === 'retiring').length,
      session_state_after_run: session[0]!.state,
      session_end_outcome: sessionEnd.map((l) => l.outcome).join(','),
      subagent_start_ms: hookLatency(p, 'subagent-start'),
      pre_tool_use_ms: hookLatency(p, 'pre-tool-use'),
      cc_subagent_start_ms: ccHookLatency(run.debugFile, 'SubagentStart'),
      pg: await serverVersion(),
    });
    expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  });

  it('twenty subagents in one message: 20/20 branches, 0 contamination, 20/20 retired', async () => {
    source ??= await makeSource();
    const p = makeE2eProject({ source });
    const markers = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, '0')}`);
    const subagents = markers.map((m) => ({
      marker: m,
      commands: [psql(`create table t_${m} (x int); insert into t_${m} values (1);`), listCommand],
    }));
    const t0 = Date.now();
    const run = await runScenario(p, { subagents }, { allowedTools: PSQL_ALLOWED });
    const wall = Date.now() - t0;
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);

    const subs = branches(p).filter((b) => b.kind === 'subagent');
    const byAgent = new Map(subs.map((b) => [b.agent_id, b]));
    let routed = 0;
    let contaminated = 0;
    for (const m of markers) {
      const b = byAgent.get(run.fake.agentIds.get(m) ?? '?');
      expect(b, `branch of ${m}`).toBeTruthy();
      const results = run.fake.toolResults.get(m)!;
      if (results.length === 2 && results.every((r) => dbsIn(r).join() === b!.name)) routed++;
      if (!results[1]?.includes(`tables=items,t_${m}`)) contaminated++;
    }
    const retired = subs.filter((b) => b.state === 'retiring').length;
    // Revive all twenty (in parallel) and read each branch directly.
    const ups = await Promise.all(
      markers.map((m) =>
        pgxJsonAsync(p, ['agent', 'up', '--agent', run.fake.agentIds.get(m)!, '--session', run.sessionId]),
      ),
    );
    let direct = 0;
    for (const [i, m] of markers.entries()) {
      expect(ups[i].method).toBe('revive');
      const tables = await publicTables(ups[i].branch);
      expect(tables, m).toEqual(['items', `t_${m}`]);
      if (tables.join() === `items,t_${m}`) direct++;
    }
    const sessionBranch = branches(p).find((b) => b.kind === 'session')!;
    pgxJson(p, ['agent', 'up', '--session', run.sessionId]);
    expect(await publicTables(sessionBranch.name)).toEqual(['items']);
    expect(await publicTables(source.name)).toEqual(['items']);

    const figures = {
      wall_ms: wall,
      branches: `${new Set(subs.map((b) => b.name)).size}/20`,
      routed: `${routed}/20`,
      contaminated: `${contaminated}/20`,
      own_tables_only_direct: `${direct}/20`,
      retired: `${retired}/20`,
      subagent_start_ms: hookLatency(p, 'subagent-start'),
      pre_tool_use_ms: hookLatency(p, 'pre-tool-use'),
      subagent_stop_ms: hookLatency(p, 'subagent-stop'),
      cc_subagent_start_ms: ccHookLatency(run.debugFile, 'SubagentStart'),
      cc_pre_tool_use_ms: ccHookLatency(run.debugFile, 'PreToolUse'),
    };
    recordFigures('2-twenty-subagents', figures);
    expect(subs).toHaveLength(20);
    expect(routed).toBe(20);
    expect(contaminated).toBe(0);
    expect(retired).toBe(20);
    await expectPristine(p);
    expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  });

  it('decoys (DATABASE_URL, PGDATABASE, PGSERVICE) pointing at the source: nothing lands on the source', async () => {
    source ??= await makeSource();
    // The template, as every subagent got before forks: this case is about the decoys, and each subagent's tables
    // are compared without the parent's decoy_parent (which a fork of the session's branch would carry).
    const p = makeE2eProject({ source, toml: '[agent]\nfork = "template"\n' });
    const pg = pgInfo();
    const serviceFile = join(p.root, 'pg_service.conf');
    writeFileSync(
      serviceFile,
      `[decoy]\nhost=${pg.host}\nport=${pg.port}\nuser=${pg.user}\npassword=${pg.password}\ndbname=${source.name}\n`,
      { mode: 0o600 },
    );
    const decoys = {
      DATABASE_URL: `postgresql://${pg.user}:${encodeURIComponent(pg.password)}@${pg.host}:${pg.port}/${source.name}`,
      PGDATABASE: source.name,
      PGSERVICE: 'decoy',
      PGSERVICEFILE: serviceFile,
    };
    // The decoys are live: without pgx, these very commands reach the source.
    const bare = (args: string[]) =>
      spawnSync('psql', ['-X', '-At', ...args, '-c', 'select current_database()'], {
        env: withPsql({ PATH: process.env.PATH, ...decoys }), // the stand-in where there is no psql (decision 513)
        encoding: 'utf8',
      });
    expect(bare([]).stdout.trim()).toBe(source.name);
    expect(bare([decoys.DATABASE_URL]).stdout.trim()).toBe(source.name);

    const commands = [
      psql('create table decoy_hit (x int);'),
      `psql "$DATABASE_URL" -X -q -At -v ON_ERROR_STOP=1 -c "create table decoy_url_hit (x int); select 'db=' || current_database();"`,
      listCommand,
    ];
    const subagents = ['decoy_a', 'decoy_b'].map((m) => ({ marker: m, commands }));
    // The parent's own Bash commands are not rewritten: they get the session branch through CLAUDE_ENV_FILE.
    const parentCommands = [psql('create table decoy_parent (x int);')];
    const t0 = Date.now();
    // `psql "$DATABASE_URL"` cannot run under the pgx allow rule alone (Claude Code refuses a `$VAR` anywhere in a
    // prefix-matched command: see pgx-permissions.test.ts), so here the user has allowed Bash as a whole.
    const run = await runScenario(p, { subagents, parentCommands }, { allowedTools: 'Bash,Agent', env: decoys });
    const wall = Date.now() - t0;
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);

    const rows = branches(p);
    const sessionBranch = rows.find((b) => b.kind === 'session')!;
    expect(run.fake.parentBashResults).toHaveLength(1);
    expect(dbsIn(run.fake.parentBashResults[0]!)).toEqual([sessionBranch.name]);
    for (const m of ['decoy_a', 'decoy_b']) {
      const b = rows.find((r) => r.agent_id === run.fake.agentIds.get(m))!;
      expect(b, m).toBeTruthy();
      const results = run.fake.toolResults.get(m)!;
      expect(results).toHaveLength(3);
      for (const r of results) expect(dbsIn(r), `${m}: ${r}`).toEqual([b.name]);
      pgxJson(p, ['agent', 'up', '--agent', run.fake.agentIds.get(m)!, '--session', run.sessionId]);
      expect(await publicTables(b.name)).toEqual(['decoy_hit', 'decoy_url_hit', 'items']);
    }
    pgxJson(p, ['agent', 'up', '--session', run.sessionId]);
    expect(await publicTables(sessionBranch.name)).toEqual(['decoy_parent', 'items']);
    const onSource = await publicTables(source.name);
    recordFigures('4-decoys', {
      wall_ms: wall,
      source_tables_after: onSource,
      decoy_tables_on_source: onSource.filter((t) => t.startsWith('decoy')).length,
    });
    expect(onSource).toEqual(['items']);
    await expectPristine(p);
    expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  });
});
