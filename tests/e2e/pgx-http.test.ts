// pgx over the HTTP transport with the real Claude Code (decisions 221, 222, 223): `pgx agent install claude
// --transport http`, then a session whose subagents run psql. PreToolUse, SubagentStart and SubagentStop reach the
// user's HTTP broker (no hook process: the debug log shows no `agent hook pre-tool-use` command), and each subagent's
// commands land on its own branch. Then a subagent SIGKILLs the HTTP broker itself (deterministic: between two of
// its own commands): its next command is blocked ("onFailure": "block"), and reaches no database at all, neither the
// source nor the session's branch nor its own; the async keeper, run on that very call, starts the broker again, and
// a later command is served on the subagent's own branch. Nobody restarts anything by hand.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../helpers/pgx.js';
import {
  PSQL_ALLOWED,
  branches,
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  hookLog,
  httpBrokerPid,
  makeE2eProject,
  makeSource,
  pgxJson,
  publicTables,
  recordFigures,
  runScenario,
  warnIfSkipped,
  type Source,
} from './pgx-harness.js';

warnIfSkipped();
afterAll(cleanupRoots);

const psql = (statements: string) => `psql -X -q -At -v ON_ERROR_STOP=1 -c "${statements} select 'db=' || current_database();"`;
const dbsIn = (text: string) => [...text.matchAll(/db=([a-z0-9_]+)/g)].map((m) => m[1]);

describe.skipIf(!claudeBin)(`pgx over HTTP hooks with real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  let source: Source;
  afterAll(async () => {
    if (source) await sql(`DROP DATABASE IF EXISTS ${source.name}`);
  });

  it('subagents land on their own branches over HTTP; a killed broker blocks the next command, and the keeper brings it back', async () => {
    source = await makeSource();
    const p = makeE2eProject({ source, transport: 'http' });
    expect(p.install).toMatchObject({ transport: 'http' });
    expect(JSON.stringify(p.settings)).not.toMatch(/"http"|PGX_HOOK_SECRET/); // the shared file: commands only
    expect(p.settings.hooks.PreToolUse).toBeUndefined();
    const state = p.httpState!;
    const stateText = () => readFileSync(state, 'utf8');
    const secret = (JSON.parse(stateText()) as { secret: string }).secret;

    // The victim kills the broker with its second command, so its third finds it dead; the commands after it are
    // retries, as a model would make: the keeper started the broker on the third's PreToolUse (async).
    // A script of the test's (Claude Code's permission check refuses a `$(…)` in a command): SIGKILL, as an OOM kill.
    writeFileSync(join(p.cwd, 'kill-broker'), `#!/bin/sh\nkill -9 "$(sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' '${state}')" && echo killed\n`, { mode: 0o755 });
    const kill = './kill-broker';
    const after = [1, 2, 3, 4, 5].map((i) => psql(`create table after_${i} (x int);`));
    const run = await runScenario(
      p,
      {
        subagents: [
          { marker: 'alpha', commands: [psql('create table alpha_t (x int);')] },
          { marker: 'victim', commands: [psql('create table victim_t (x int);'), kill, psql('create table blocked_t (x int);'), ...after] },
        ],
      },
      { allowedTools: `${PSQL_ALLOWED},Bash(./kill-broker)`, timeoutMs: 180_000 },
    );
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);
    // No hook process ran for the HTTP events: Claude Code POSTed them.
    const debug = readFileSync(run.debugFile, 'utf8');
    expect(debug).not.toMatch(/agent hook (pre-tool-use|subagent-start|subagent-stop)/);

    const subs = branches(p).filter((b) => b.kind === 'subagent');
    const session = branches(p).find((b) => b.kind === 'session')!;
    const branchOf = (marker: string) => subs.find((b) => b.agent_id === run.fake.agentIds.get(marker))?.name;
    const alpha = branchOf('alpha')!;
    const victim = branchOf('victim')!;
    expect(alpha, JSON.stringify(subs)).toBeTruthy();
    expect(victim, JSON.stringify(subs)).toBeTruthy();
    expect(alpha).not.toBe(victim);
    expect(dbsIn(run.fake.toolResults.get('alpha')![0]!)).toEqual([alpha]);

    const results = run.fake.toolResults.get('victim')!;
    expect(results, describeRun(run)).toHaveLength(3 + after.length);
    expect(dbsIn(results[0]!)).toEqual([victim]); // served over HTTP
    expect(results[1]).toContain('killed');
    // The call that found the broker dead: blocked, the cause in the tool result.
    expect(results[2], describeRun(run)).toMatch(/blocking because onFailure is "block"/);
    // Recovery: some later command was served on the victim's own branch by the restarted broker, and every command
    // from then on too (the keeper, not the test, restarted it).
    const served = results.slice(3).map((r) => dbsIn(r)[0] === victim);
    const firstServed = served.indexOf(true);
    expect(firstServed, describeRun(run)).toBeGreaterThanOrEqual(0);
    expect(served.slice(firstServed).every(Boolean), JSON.stringify(results.slice(3))).toBe(true);
    for (const [i, r] of results.slice(3).entries()) if (!served[i]) expect(r).toMatch(/blocking because onFailure is "block"/);
    const newPid = httpBrokerPid(p);
    expect(newPid).toBeDefined();
    expect(() => process.kill(newPid!, 0)).not.toThrow();

    // The blocked command reached no database: not the source, not the session's branch, not the victim's own.
    const up = (args: string[]) => pgxJson(p, ['agent', 'up', ...args]);
    up(['--agent', run.fake.agentIds.get('victim')!, '--session', run.sessionId]);
    up(['--agent', run.fake.agentIds.get('alpha')!, '--session', run.sessionId]);
    up(['--session', run.sessionId]);
    const victimTables = await publicTables(victim);
    expect(victimTables).not.toContain('blocked_t');
    expect(victimTables).toContain('victim_t');
    for (const [i, ok] of served.entries()) expect(victimTables.includes(`after_${i + 1}`), `after_${i + 1}`).toBe(ok);
    expect(await publicTables(alpha)).toEqual(['alpha_t', 'items']);
    expect(await publicTables(session.name)).toEqual(['items']);
    expect(await publicTables(source.name)).toEqual(['items']);

    // The HTTP events were logged by the broker (via) for both subagents, and the secret is in no log.
    const log = hookLog(p);
    for (const m of ['alpha', 'victim']) {
      const mine = log.filter((l) => l.agent_id === run.fake.agentIds.get(m));
      expect(mine.some((l) => l.event === 'subagent-start' && l.via === 'broker'), m).toBe(true);
      expect(mine.some((l) => l.event === 'pre-tool-use' && l.via === 'broker'), m).toBe(true);
    }
    expect(readFileSync(`${p.pgxHome}/agent/hooks.log`, 'utf8')).not.toContain(secret);
    expect(debug).not.toContain(secret);
    recordFigures('http-transport-recovery', { blocked_after_kill: 1 + firstServed, retries_scripted: after.length, broker_restarted: newPid !== undefined });
  }, 300_000);
});
