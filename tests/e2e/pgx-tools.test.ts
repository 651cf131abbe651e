/**
 * The Claude Code tools beside Bash that run something, with the real binary (the pinned release and the newest),
 * offline, pgx installed (decision 520):
 *  - Every tool Claude Code offers the parent, a foreground subagent and a Workflow's agent (after a ToolSearch that
 *    asks for every deferred one) is in the table below, which says how pgx handles it: a tool a new release adds
 *    fails this test until someone has looked at it.
 *  - A subagent's CronCreate is refused with the reason and schedules nothing; a subagent's Skill whose file runs an
 *    inline shell command is refused and the command does not run (Claude Code makes no Bash call for it, so no
 *    PreToolUse could route it); a skill without one loads; the subagent's psql lands on its own branch.
 *  - The parent's CronCreate and Skill go on (its skill's command runs once).
 *  - A Workflow's agent (agent_type workflow-subagent) is a subagent to the hooks: its psql lands on a branch of its
 *    own, not the session's.
 *  - REPL (Code Mode) and PowerShell are offered to nobody here: REPL is experimental (not offered in `-p` mode even
 *    with CLAUDE_CODE_EXPERIMENTAL_CODE_MODE=1), PowerShell is Windows' (or CLAUDE_CODE_USE_POWERSHELL_TOOL); the
 *    hook's answers to them are tests/blackbox/hooks-unseen-shell.test.ts and hooks-mcp.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  branches,
  cleanupRoots,
  describeRun,
  hookLog,
  latency,
  makeE2eProject,
  makeSource,
  pgxJson,
  publicTables,
  recordFigures,
  runScenario,
} from './pgx-harness.js';
import { claudeMissing, findClaudeBinary, NEWEST_CLAUDE_CODE, PINNED_CLAUDE_CODE } from './claude.js';
import type { Step } from './fake-model.js';

afterAll(cleanupRoots);

/** Every tool offered in these runs, and how pgx handles it (decision 520 says why). */
export const TOOL_HANDLING: Record<string, string> = {
  Bash: "rewritten to the subagent's branch",
  Monitor: "rewritten to the subagent's branch (its own entry; the Bash entry's rewrite is ignored)",
  CronCreate: "a subagent's refused (the prompt runs later in the main session); the parent's goes on",
  Skill: "a subagent's refused when the skill runs inline shell; otherwise left alone",
  Workflow: "the parent's only; its agents are subagents to the hooks, their Bash and Monitor routed",
  Agent: 'starts a subagent (SubagentStart makes its branch)',
  ScheduleWakeup: "the parent's only; schedules a /loop prompt, runs nothing",
  CronList: 'lists jobs, runs nothing',
  CronDelete: 'deletes a job, runs nothing',
  TaskStop: 'stops a background task, starts nothing',
  Read: 'files',
  Write: 'files',
  Edit: 'files',
  NotebookEdit: 'edits a notebook, does not run it',
  ToolSearch: 'loads deferred tools',
  DeferredToolPlaceholder: 'placeholder',
  ListAgents: 'messaging',
  SendMessage: 'messaging',
  ReportFindings: 'review output',
  EnterWorktree: 'changes the working directory (git worktree)',
  ExitWorktree: 'same',
  WebFetch: 'network, no local process',
  WebSearch: 'network, no local process',
};

const tool = (name: string, input: Record<string, unknown>): Step => ({ tool: name, input });
const SELECT_ALL = tool('ToolSearch', {
  query:
    'select:CronCreate,CronList,CronDelete,Monitor,TaskStop,EnterWorktree,ExitWorktree,NotebookEdit,SendMessage,WebFetch,WebSearch,REPL,PowerShell',
});
const psqlCreate = (t: string) => `psql -X -q -v ON_ERROR_STOP=1 -c "create table ${t} (id int)"`;
const cronJob = (table: string) => ({
  cron: '7 * * * *',
  prompt: `psql -c "create table ${table} (id int)"`,
  recurring: true,
});
const WORKFLOW = [
  "export const meta = { name: 'wf-e2e', description: 'one agent', phases: [{ title: 'Go' }] }",
  "phase('Go')",
  "return await agent('[[pgx-e2e:wf]] run the scripted commands')",
].join('\n');

function writeSkills(cwd: string, stamp: string): void {
  const skill = (name: string, body: string) => {
    mkdirSync(join(cwd, '.claude', 'skills', name), { recursive: true });
    writeFileSync(
      join(cwd, '.claude', 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: e2e\n---\n${body}\n`,
    );
  };
  skill('stamp', `Loaded: !\`echo ran >> ${stamp}\``);
  skill('plain', 'Say hello.');
}

/** The tool names of every request the fake model was sent, by who sent it (parent, a marker). */
function offeredTools(dumpDir: string): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const f of readdirSync(dumpDir)) {
    const who = /^\d+-(parent|subagent-([^-]+))-/.exec(f);
    if (!who) continue;
    const body = JSON.parse(readFileSync(join(dumpDir, f), 'utf8')) as { tools?: { name: string }[] };
    const set = by.get(who[2] ?? 'parent') ?? new Set<string>();
    for (const t of body.tools ?? []) set.add(t.name);
    by.set(who[2] ?? 'parent', set);
  }
  return by;
}

for (const version of [PINNED_CLAUDE_CODE, NEWEST_CLAUDE_CODE]) {
  const bin = findClaudeBinary(version);
  if (!bin) console.warn(`SKIPPED: ${claudeMissing(version)}`);

  describe.skipIf(!bin)(`Claude Code ${version}: the tools beside Bash`, () => {
    it("every offered tool is known; a subagent's CronCreate and shell-running Skill refused; a Workflow agent routed", async () => {
      const source = await makeSource();
      const p = makeE2eProject({ source });
      const stamp = join(p.cwd, 'skill-ran.log'); // in the project: a write outside it asks
      writeSkills(p.cwd, stamp);
      const dumpDir = join(p.root, 'requests');
      const run = await runScenario(
        p,
        {
          background: false,
          dumpDir,
          parentCommands: [
            SELECT_ALL,
            tool('CronCreate', cronJob('parent_cron')),
            tool('Skill', { skill: 'stamp' }),
            tool('Workflow', { script: WORKFLOW }),
          ],
          subagents: [
            {
              marker: 'm1',
              commands: [
                SELECT_ALL,
                tool('CronCreate', cronJob('sub_cron')),
                tool('CronList', {}),
                tool('Skill', { skill: 'stamp' }),
                tool('Skill', { skill: 'plain' }),
                psqlCreate('m1_bash'),
              ],
            },
            { marker: 'wf', viaWorkflow: true, commands: [psqlCreate('wf_bash')] },
          ],
        },
        {
          bin,
          allowedTools: 'Agent,ToolSearch,Bash(psql:*),Bash(echo:*),CronCreate,CronList,Skill,Workflow',
          timeoutMs: 180_000,
        },
      );
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(run.fake.errors).toEqual([]);

      // Every tool offered to anyone is in the table.
      const offered = offeredTools(dumpDir);
      const all = [...offered.values()].flatMap((s) => [...s]);
      expect(
        all.filter((t) => !(t in TOOL_HANDLING)),
        JSON.stringify([...offered].map(([k, v]) => [k, [...v]])),
      ).toEqual([]);
      expect(offered.get('m1')).toContain('CronCreate');
      expect(offered.get('m1')).toContain('Monitor');
      expect(offered.get('parent')).toContain('Workflow');
      for (const who of offered.values()) for (const t of ['REPL', 'PowerShell']) expect(who.has(t)).toBe(false);

      // (Bash(echo:*) is allowed: had pgx not refused the subagent's skill, its `!` command would have run.)
      // The subagent: CronCreate refused, nothing scheduled; the shell-running skill refused, its command not run.
      const [, cron, list, stampSkill, plainSkill] = run.fake.toolResults.get('m1')!;
      expect(cron, describeRun(run)).toContain('runs later in the main session');
      // The job store is the session's: the subagent lists the parent's job, and none of its own.
      expect(list).toContain('parent_cron');
      expect(list).not.toContain('sub_cron');
      expect(stampSkill).toContain('the skill "stamp" runs shell commands as it loads');
      expect(plainSkill).toContain('plain');
      expect(plainSkill).not.toContain('pgx:');
      // The parent's: scheduled, and its skill's command ran once (the parent's, not the refused subagent's).
      expect(run.fake.parentBashResults[1]).toMatch(/Scheduled recurring job/);
      expect(existsSync(stamp) ? readFileSync(stamp, 'utf8') : '', run.fake.parentBashResults[2]).toBe('ran\n');

      // Where the psql went: m1's own branch, and a branch of the Workflow agent's own; not the session's.
      const rows = branches(p);
      const session = rows.find((b) => b.kind === 'session')!;
      const m1 = rows.find((b) => b.agent_id === run.fake.agentIds.get('m1'))!;
      expect(m1, describeRun(run)).toBeTruthy();
      const log = hookLog(p).filter((l) => l.event === 'pre-tool-use');
      const wfLine = log.find((l) => l.agent_id && l.agent_id !== m1.agent_id && l.outcome.startsWith('rewritten'));
      expect(wfLine, JSON.stringify(log.map((l) => [l.agent_id, l.tool, l.outcome]))).toBeTruthy();
      const wf = rows.find((b) => b.agent_id === wfLine!.agent_id)!;
      for (const [b, table] of [
        [m1, 'm1_bash'],
        [wf, 'wf_bash'],
      ] as const) {
        pgxJson(p, ['agent', 'up', '--agent', b.agent_id!, '--session', run.sessionId]);
        expect(await publicTables(b.name)).toEqual(['items', table]);
      }
      pgxJson(p, ['agent', 'up', '--session', run.sessionId]);
      expect(await publicTables(session.name)).toEqual(['items']);
      expect(await publicTables(source.name)).toEqual(['items']);
      const outcomes = log.map((l) => `${l.agent_id ? 'sub' : 'parent'}:${l.tool}:${l.outcome}`);
      expect(outcomes).toEqual(
        expect.arrayContaining([
          'sub:CronCreate:denied:cron',
          'sub:Skill:denied:skill-inline-shell',
          'sub:Skill:skipped:skill-without-shell',
          'parent:CronCreate:skipped:parent-cron',
          'parent:Skill:skipped:parent-skill',
        ]),
      );
      const ms = (tools: string[], sub: boolean) =>
        latency(log.filter((l) => tools.includes(l.tool ?? '') && !!l.agent_id === sub).map((l) => l.elapsed_ms));
      recordFigures(`tools-${version}`, {
        wall_ms: run.out.durationMs,
        subagent_cron_skill_hook_ms: ms(['CronCreate', 'Skill'], true),
        parent_cron_skill_hook_ms: ms(['CronCreate', 'Skill'], false),
      });
    }, 240_000);
  });
}
