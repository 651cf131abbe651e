/**
 * pgx end to end with the real Claude Code CLI: git worktrees stay covered.
 *  1. subagents whose agent definition says `isolation: worktree`, `.pgx.toml` committed: each runs in its own
 *     worktree (<project>/.claude/worktrees/agent-<id>) and each Bash command lands on its own branch;
 *  2. the same with `.pgx.toml` left untracked (the worktree Claude Code makes has none);
 *  3. a `claude --worktree NAME` session (<project>/.claude/worktrees/NAME, `.pgx.toml` committed): its own commands
 *     use its session branch, and its subagents (one in the session's worktree, one in a worktree of its own) are
 *     routed to branches of their own.
 * What 2.1.328 gives the hooks, measured with a capturing hook: CLAUDE_PROJECT_DIR is the SESSION's directory (the
 * main checkout, or the `--worktree` session's worktree), the payload's `cwd` the subagent's worktree; the Bash
 * tool's shell runs in the subagent's worktree. How pgx finds the project from there: agents.md, "Worktrees", and
 * decisions/171-claude-worktrees-use-the-main-checkout.md.
 * The runs use `--allowedTools Agent,Bash(psql:*)`: the routed commands run because pgx's rule (in the main
 * checkout's settings.local.json, which Claude Code resolves worktrees to) covers the rewrite's `--cwd`. Nothing here
 * depends on what a subagent's branch is forked from (the template or the session's branch): the parent changes
 * nothing, and the assertions are about where each command ran and what it wrote.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
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
  makeE2eProject,
  makeSource,
  pgx,
  pgxJson,
  pristine,
  publicTables,
  recordFigures,
  runScenario,
  warnIfSkipped,
  type E2eProject,
  type Run,
  type Source,
} from './pgx-harness.js';
import type { SubagentScript } from './fake-model.js';

warnIfSkipped();
afterAll(cleanupRoots);

const WORKER = 'wt-worker';
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'pgx e2e',
  GIT_AUTHOR_EMAIL: 'e2e@pgx.invalid',
  GIT_COMMITTER_NAME: 'pgx e2e',
  GIT_COMMITTER_EMAIL: 'e2e@pgx.invalid',
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });

/**
 * A git project with pgx installed (settings.local.json kept out of git by the install), an agent definition with
 * `isolation: worktree`, and everything but settings.local.json committed; `.pgx.toml` too unless `untracked`.
 */
function gitProject(source: Source, o: { untracked: boolean }): E2eProject {
  const p = makeE2eProject({ source, beforeInstall: (cwd) => git(cwd, 'init', '-q', '-b', 'main') });
  mkdirSync(join(p.cwd, '.claude', 'agents'));
  writeFileSync(
    join(p.cwd, '.claude', 'agents', `${WORKER}.md`),
    `---\nname: ${WORKER}\ndescription: Runs the commands it is given, in a git worktree of its own.\nisolation: worktree\n---\nRun the commands you are asked to run.\n`,
  );
  writeFileSync(join(p.cwd, 'README.md'), 'e2e\n');
  git(p.cwd, 'add', '--', 'README.md', '.claude', ...(o.untracked ? [] : ['.pgx.toml']));
  git(p.cwd, 'commit', '-q', '-m', 'project');
  const status = git(p.cwd, 'status', '--porcelain', '--ignored');
  // settings.local.json (this machine's rules) is ignored; .pgx.toml is tracked, or untracked (not ignored).
  expect(status).toContain('!! .claude/settings.local.json');
  if (o.untracked) expect(status).toContain('?? .pgx.toml');
  else expect(git(p.cwd, 'ls-files', '.pgx.toml').trim()).toBe('.pgx.toml');
  return p;
}

/**
 * Each command prints the database it ran in; the second also the shell's working directory and whether a .pgx.toml
 * is there (psql's `\!`).
 */
const script = (m: string, subagentType?: string): SubagentScript => ({
  marker: m,
  subagentType,
  commands: [
    `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table wt_${m} (who text); insert into wt_${m} values ('${m}'); select 'db=' || current_database();"`,
    `psql -X -At -v ON_ERROR_STOP=1 -c "select 'db=' || current_database() || ' tables=' || string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public';" -c '\\! echo "cwd=$(pwd) config=$(test -e .pgx.toml && echo present || echo absent)"'`,
  ],
});
const PARENT = `psql -X -At -v ON_ERROR_STOP=1 -c "select 'db=' || current_database();"`;

const dbsIn = (text: string) => [...text.matchAll(/db=([a-z0-9_]+)/g)].map((m) => m[1]);
const cwdIn = (text: string) => /cwd=(\S+)/.exec(text)?.[1];
const configIn = (text: string) => /config=(present|absent)/.exec(text)?.[1];

interface Expected {
  marker: string;
  /** Where the subagent's shell ran. */
  cwd: (agentId: string) => string;
  /** Is there a .pgx.toml where it ran? */
  config: 'present' | 'absent';
}

/**
 * Every subagent's commands ran where expected and on its own branch (one per subagent, distinct), its table is on
 * that branch and no other's; the parent's command used the session branch, which holds no subagent's table; every
 * branch is the project's; the source and the template are untouched.
 */
async function expectRouted(p: E2eProject, run: Run, expected: Expected[]): Promise<Record<string, unknown>> {
  expect(run.out.code, describeRun(run)).toBe(0);
  expect(run.fake.errors, describeRun(run)).toEqual([]);
  const rows = branches(p);
  const projects = pgxJson<{ branches: { name: string; project: string }[] }>(p, ['agent', 'ls']).branches.map(
    (b) => b.project,
  );
  expect(new Set(projects), "every branch is the main project's").toEqual(new Set([p.name]));
  const session = rows.filter((b) => b.kind === 'session');
  expect(session.map((b) => b.session_id)).toEqual([run.sessionId]);
  expect(run.fake.parentBashResults.map(dbsIn), describeRun(run)).toEqual([[session[0]!.name]]);

  const subs = rows.filter((b) => b.kind === 'subagent');
  expect(subs, JSON.stringify(rows)).toHaveLength(expected.length);
  const log = hookLog(p);
  const own = new Map<string, string>();
  for (const e of expected) {
    const agentId = run.fake.agentIds.get(e.marker);
    expect(agentId, e.marker).toBeTruthy();
    const b = subs.find((s) => s.agent_id === agentId);
    expect(b, `branch of ${e.marker}`).toBeTruthy();
    own.set(e.marker, b!.name);
    const results = run.fake.toolResults.get(e.marker)!;
    expect(results, describeRun(run)).toHaveLength(2);
    for (const r of results) expect(dbsIn(r), `${e.marker}: ${r}`).toEqual([b!.name]);
    expect(cwdIn(results[1]!), results[1]).toBe(e.cwd(agentId!));
    expect(configIn(results[1]!), results[1]).toBe(e.config);
    expect(results[1]).toContain(`tables=items,wt_${e.marker}`);
    const mine = log.filter((l) => l.agent_id === agentId);
    expect(mine.filter((l) => l.event === 'pre-tool-use').map((l) => l.outcome)).toEqual([
      'rewritten:attach',
      'rewritten:attach',
    ]);
    expect(mine.find((l) => l.event === 'subagent-start')?.branch).toBe(b!.name);
    expect(mine.find((l) => l.event === 'subagent-stop')?.outcome).toMatch(/^retired:/);
  }
  expect(new Set(own.values()).size).toBe(expected.length);

  // Looked at directly (revived): each write on its own branch only; the session branch and the source have none.
  for (const e of expected) {
    pgxJson(p, ['agent', 'up', '--agent', run.fake.agentIds.get(e.marker)!, '--session', run.sessionId]);
    const tables = await publicTables(own.get(e.marker)!);
    expect(
      tables.filter((t) => t.startsWith('wt_')),
      e.marker,
    ).toEqual([`wt_${e.marker}`]);
    expect(await sql(`SELECT who FROM wt_${e.marker}`, [], own.get(e.marker)!)).toEqual([{ who: e.marker }]);
  }
  pgxJson(p, ['agent', 'up', '--session', run.sessionId]);
  expect(await publicTables(session[0]!.name)).toEqual(['items']);
  expect(await publicTables(p.source.name)).toEqual(['items']);
  const r = await pristine(p);
  expect(r.source, 'source schema md5').toBe(r.baseline);
  expect(r.template, 'template schema md5').toBe(r.baseline);
  expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
  return {
    wall_ms: run.out.durationMs,
    branches: subs.length,
    routed_results: expected.reduce((n, e) => n + run.fake.toolResults.get(e.marker)!.length, 0),
  };
}

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: git worktrees`, () => {
  let source: Source;
  const agentWorktree = (p: E2eProject) => (agentId: string) => join(p.cwd, '.claude', 'worktrees', `agent-${agentId}`);

  for (const untracked of [false, true]) {
    it(`isolation: worktree subagents, .pgx.toml ${untracked ? 'untracked (absent from their worktrees)' : 'committed'}: each on its own branch`, async () => {
      source ??= await makeSource();
      const p = gitProject(source, { untracked });
      const run = await runScenario(
        p,
        { subagents: ['a', 'b'].map((m) => script(m, WORKER)), parentCommands: [PARENT] },
        { allowedTools: PSQL_ALLOWED },
      );
      const figures = await expectRouted(
        p,
        run,
        ['a', 'b'].map(
          (marker) => ({ marker, cwd: agentWorktree(p), config: untracked ? 'absent' : 'present' }) as const,
        ),
      );
      recordFigures(`worktree-isolation-${untracked ? 'untracked' : 'committed'}`, figures);
    });
  }

  it('a `claude --worktree` session (.pgx.toml committed): its commands on its session branch, its subagents on their own', async () => {
    source ??= await makeSource();
    const p = gitProject(source, { untracked: false });
    const name = 'pgx-e2e-session';
    const sessionTree = join(p.cwd, '.claude', 'worktrees', name);
    const run = await runScenario(
      p,
      { subagents: [script('plain'), script('isolated', WORKER)], parentCommands: [PARENT] },
      { allowedTools: PSQL_ALLOWED, extraArgs: ['--worktree', name] },
    );
    // The session ran in its worktree (its hooks' CLAUDE_PROJECT_DIR), on branch worktree-<name>.
    expect(git(p.cwd, 'worktree', 'list')).toContain(`${sessionTree} `);
    expect(hookLog(p).find((l) => l.event === 'session-start')?.project_dir).toBe(sessionTree);
    const figures = await expectRouted(p, run, [
      { marker: 'plain', cwd: () => sessionTree, config: 'present' },
      { marker: 'isolated', cwd: agentWorktree(p), config: 'present' },
    ]);
    recordFigures('worktree-session', figures);
  });
});
