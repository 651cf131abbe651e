/**
 * The handoff at SubagentStop, with the real Claude Code CLI: each subagent changes its own branch, and the parent
 * receives each one's change summary without asking, through the channel 2.1.328 delivers (found here; decision 165):
 * background agents (the default) through the UserPromptSubmit their task notifications fire, foreground agents
 * through the parent's next Bash PreToolUse. SubagentStop's own additionalContext is NOT a channel: 2.1.328 gives it
 * to the subagent as one more turn (a second SubagentStop followed), so pgx's SubagentStop answers nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  PSQL_ALLOWED,
  branches,
  claudeBin,
  cleanupRoots,
  describeRun,
  hookLog,
  makeE2eProject,
  makeSource,
  pgx,
  recordFigures,
  runScenario,
  warnIfSkipped,
} from './pgx-harness.js';
import { serverMajor } from '../helpers/pgx.js';

warnIfSkipped();
afterAll(cleanupRoots);

const make = (table: string) =>
  `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table ${table} (id int primary key); insert into ${table} values (1), (2); insert into items values (100 + length('${table}'), 'x'); select 'db=' || current_database();"`;

/** The parent's request bodies (dumped by the fake model), in order, as text. */
function parentRequests(dir: string): { file: string; text: string }[] {
  return readdirSync(dir)
    .filter((f) => /-parent-/.test(f))
    .sort()
    .map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
}

describe.skipIf(!claudeBin)('handoff: the parent hears what each subagent changed (real Claude Code)', () => {
  for (const background of [true, false]) {
    it(`${background ? 'background' : 'foreground'} subagents: each one's change summary reaches the parent's context`, async () => {
      const source = await makeSource();
      const p = makeE2eProject({ source });
      const markers = background ? ['hb1', 'hb2'] : ['hf1', 'hf2'];
      const dumpDir = join(p.root, 'requests');
      // Foreground: the parent runs one Bash command after its agents returned (its next hook is that PreToolUse).
      const script = {
        subagents: markers.map((m) => ({ marker: m, commands: [make(`made_${m}`)] })),
        background,
        dumpDir,
        ...(background ? {} : { parentCommandsAfter: ['echo parent-after'] }),
      };
      const run = await runScenario(p, script, { allowedTools: `${PSQL_ALLOWED},Bash(echo:*)` });
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(run.fake.errors).toEqual([]);
      const subs = branches(p).filter((b) => b.kind === 'subagent' && b.session_id === run.sessionId);
      expect(subs).toHaveLength(2);
      const log = hookLog(p).filter((l) => l.session_id === run.sessionId);
      const stops = log.filter((l) => l.event === 'subagent-stop');
      // One SubagentStop each: pgx's answer to it is empty (an additionalContext there would give the subagent a turn).
      expect(stops.map((l) => l.agent_id).sort()).toEqual(markers.map((m) => run.fake.agentIds.get(m)).sort());
      const deliveries = log.filter((l) => /handoffs=\d/.test(l.outcome));
      console.log(
        `[pgx-e2e] handoff ${background ? 'background' : 'foreground'}: delivered by ${deliveries.map((l) => `${l.event} ${l.outcome}`).join('; ')}`,
      );
      expect(deliveries.map((l) => l.event)).toEqual(
        background ? expect.arrayContaining(['user-prompt-submit']) : ['pre-tool-use'],
      );
      const reqs = parentRequests(dumpDir);
      const notNull = (await serverMajor()) >= 18;
      for (const m of markers) {
        const agent = run.fake.agentIds.get(m)!;
        const sub = subs.find((b) => b.agent_id === agent)!;
        const stop = stops.find((l) => l.agent_id === agent)!;
        // Recorded: the log line and `agent ls --json` carry the summary; the branch is kept (changed).
        expect(stop.outcome).toMatch(/^retired:.*:changes=yes:kept:handoff$/);
        // From PostgreSQL 18 on, a key's NOT NULL is a constraint of its own, and the summary names it.
        const nn = notNull ? `constraint public.made_${m}.made_${m}_id_not_null, ` : '';
        expect((stop as { changes?: { lines: string[] } }).changes?.lines).toEqual([
          `added: column public.made_${m}.id, ${nn}constraint public.made_${m}.made_${m}_pkey, table public.made_${m}`,
          'rows: public.items +1',
        ]);
        expect((sub as { changes?: { changed: boolean } }).changes?.changed).toBe(true);
        // Delivered: some later request of the PARENT carries this subagent's summary.
        const carrying = reqs.filter(
          (r) =>
            r.text.includes(`branch \\"${sub.name}\\") changed its database`) ||
            r.text.includes(`branch "${sub.name}") changed its database`),
        );
        console.log(
          `[pgx-e2e] handoff ${background ? 'background' : 'foreground'} ${m}: ${carrying.length}/${reqs.length} parent requests carry the summary (${carrying.map((r) => r.file).join(', ')})`,
        );
        expect(
          carrying.length,
          `no parent request carries ${sub.name}'s summary: ${reqs.map((r) => r.file).join(', ')}`,
        ).toBeGreaterThan(0);
      }
      // A subagent's own requests never carry a summary (none was given to it).
      for (const f of readdirSync(dumpDir).filter((x) => /-subagent-/.test(x)))
        expect(readFileSync(join(dumpDir, f), 'utf8')).not.toContain('changed its database');
      recordFigures(`handoff-${background ? 'background' : 'foreground'}`, {
        subagent_stop_ms: stops.map((l) => l.elapsed_ms),
        delivered_by: deliveries.map((l) => l.event),
      });
      expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
    }, 240_000);
  }
});
