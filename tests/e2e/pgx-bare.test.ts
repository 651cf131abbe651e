/**
 * pgx end to end with the real Claude Code CLI on a machine with no PostgreSQL program (issue 39, done-when): the
 * parent's session branch is migrated by the parent and held by a connection (its dev server), and 4 subagents each
 * get a copy of it made by the Node copy; and a copy forced to miss the hook's deadline (the test holds the copy's
 * lock) is told to the parent at its next prompt, logged as a failure, and shown by the doctor. Nobody has psql: the
 * agents query with a Node client reading libpq's environment (tests/helpers/node-client.ts), as an app would.
 * Run by .ci/run's bare step (scripts/ci-bare.sh) with the programs hidden; elsewhere skipped, saying why.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  hookLog,
  makeE2eProject,
  pgx,
  pgxJson,
  runScenario,
  warnIfSkipped,
  type Source,
} from './pgx-harness.js';
import { bareMachine } from '../helpers/client-programs.js';
import { nodeSql } from '../helpers/node-client.js';
import { pgInfo, sql } from '../helpers/pgx.js';
import { LOCK } from '../../src/registry/locks.js';

warnIfSkipped();
afterAll(cleanupRoots);

/** The user allows their Node client (as PSQL_ALLOWED allows psql elsewhere); pgx's own rules do the rest. */
const NODE_ALLOWED = 'Agent,Bash(node:*)';
const dbsIn = (text: string) => [...text.matchAll(/db=([a-z0-9_]+)/g)].map((m) => m[1]);
const LOOK = nodeSql(
  "select 'db=' || current_database() || ' sum=' || coalesce((select sum(x) from parent_mig), -1)::text",
);
const MIGRATE = nodeSql(
  "create table parent_mig (x int); insert into parent_mig values (1), (2), (3); select 'db=' || current_database()",
);

/** The parent's look at its dev server's connection to its branch (pg_stat_activity names no query of another role). */
const HELD = nodeSql(
  "select 'held=' || count(*) from pg_stat_activity where application_name = 'my-dev-server' and datname = current_database()",
);

/** A source with a table `items` (its baseline schema is not taken: that needs pg_dump, which a bare machine lacks). */
async function bareSource(): Promise<Source> {
  const name = `src_bare_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${name}`);
  await sql(`CREATE TABLE items (id int PRIMARY KEY); INSERT INTO items VALUES (1), (2), (3)`, [], name);
  return { name, baselineMd5: '' };
}

/** The session's branch made before claude starts (as its SessionStart would), held open by a "dev server". */
async function heldSessionBranch(p: ReturnType<typeof makeE2eProject>, sessionId: string) {
  const up = pgxJson(p, ['agent', 'up', '--session', sessionId]);
  const branch: string = up.branch ?? up.name;
  const i = pgInfo();
  const devServer = new pg.Client({
    ...{ host: i.host, port: i.port, user: i.user, password: i.password },
    database: branch,
    application_name: 'my-dev-server',
  });
  devServer.on('error', () => {});
  await devServer.connect();
  return { branch, devServer };
}

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION} and no PostgreSQL program`, () => {
  it("the parent's session branch migrated and held by a connection: 4 of 4 subagents see the migration (the Node copy)", async (ctx) => {
    bareMachine(ctx);
    const p = makeE2eProject({ source: await bareSource(), env: { PGX_TEST_PSQL: 'none' } });
    const sessionId = randomUUID();
    const { branch, devServer } = await heldSessionBranch(p, sessionId);
    try {
      const markers = ['b1', 'b2', 'b3', 'b4'];
      const run = await runScenario(
        p,
        { parentCommands: [MIGRATE, HELD], subagents: markers.map((marker) => ({ marker, commands: [LOOK] })) },
        { sessionId, allowedTools: NODE_ALLOWED, timeoutMs: 240_000 },
      );
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(run.fake.errors).toEqual([]);
      expect(dbsIn(run.fake.parentBashResults[0] ?? ''), describeRun(run)).toEqual([branch]);
      let saw = 0;
      for (const m of markers) {
        const [look] = run.fake.toolResults.get(m) ?? [];
        expect(look, `${m}: ${describeRun(run)}`).toContain('sum=6');
        if (look?.includes('sum=6') && !dbsIn(look).includes(branch)) saw++;
      }
      expect(`${saw} of ${markers.length} saw the migration`).toBe('4 of 4 saw the migration');
      const starts = hookLog(p).filter((l) => l.event === 'subagent-start');
      expect(starts.map((l) => l.outcome)).toHaveLength(4);
      for (const s of starts) expect(s.outcome).toMatch(/^ok:/);
      // The dev server was connected when the subagents started (SessionEnd ends it with the branch's retirement), and
      // the copies were the Node copy's (no pg_dump here).
      expect(run.fake.parentBashResults[1], describeRun(run)).toContain('held=1');
      const copies = readFileSync(join(p.pgxHome, 'agent', 'copies.log'), 'utf8')
        .trim()
        .split('\n');
      const methods = copies.map((l) => (JSON.parse(l) as { method: string }).method);
      expect(methods.length, copies.join('\n')).toBeGreaterThan(0);
      expect(new Set(methods), copies.join('\n')).toEqual(new Set(['node-copy']));
    } finally {
      await devServer.end();
    }
    expect(pgx(p, ['agent', 'down', '--session', sessionId, '--now']).status).toBe(0);
  });

  it('a copy that can not be made in time: the subagent told, the parent hears it at its next prompt, the hook log and the doctor show it', async (ctx) => {
    bareMachine(ctx);
    const p = makeE2eProject({ source: await bareSource(), env: { PGX_TEST_PSQL: 'none' } });
    const sessionId = randomUUID();
    const { branch, devServer } = await heldSessionBranch(p, sessionId);
    await devServer.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
    // The copy "still being made": its lock held by the test, so the hook's wait runs out (a short deadline).
    const i = pgInfo();
    const lock = new pg.Client({
      ...{ host: i.host, port: i.port, user: i.user, password: i.password },
      database: 'pgx_registry',
    });
    lock.on('error', () => {});
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock($1::bigint)', [LOCK.freeze(branch)]);
    const dumpDir = mkdtempSync(join(p.root, 'requests-'));
    try {
      const env = { PGX_HOOK_DEADLINE_MS: '4000' };
      const first = await runScenario(
        p,
        { subagents: [{ marker: 'late', commands: [LOOK] }] },
        { sessionId, allowedTools: NODE_ALLOWED, env, timeoutMs: 240_000 },
      );
      expect(first.out.code, describeRun(first)).toBe(0);
      const agentId = first.fake.agentIds.get('late')!;
      const [refused] = first.fake.toolResults.get('late') ?? [];
      expect(refused, describeRun(first)).toMatch(/no database branch yet/);
      const log = hookLog(p).filter((l) => l.agent_id === agentId);
      expect(log.map((l) => l.outcome)).toContain('error:fork-unavailable:timeout');
      expect(log.some((l) => /^ok:/.test(l.outcome) && l.event === 'subagent-start')).toBe(false);

      // The parent's next prompt (the same session, resumed): pgx tells it, in the context Claude Code sends the model.
      const next = await runScenario(p, { subagents: [], dumpDir }, { resume: sessionId, env, timeoutMs: 120_000 });
      expect(next.out.code, describeRun(next)).toBe(0);
      const sent = readdirSync(dumpDir)
        .map((f) => readFileSync(join(dumpDir, f), 'utf8'))
        .join('\n');
      expect(sent).toContain(`subagent ${agentId} did NOT get a copy of your session's branch`);

      const doctor = pgxJson(p, ['agent', 'doctor']);
      const checks = Object.fromEntries(doctor.checks.map((c: { name: string }) => [c.name, c]));
      expect(checks['session-forks'].status).toBe('warn');
      expect(checks['session-forks'].detail).toContain(`agent ${agentId}`);
      expect(checks['hook-log'].detail).toContain('subagent-start error:fork-unavailable');
    } finally {
      await lock.end();
      await devServer.end();
    }
    expect(pgx(p, ['agent', 'down', '--session', sessionId, '--now']).status).toBe(0);
  });
});
