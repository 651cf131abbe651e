/**
 * pgx end to end with the real Claude Code CLI: what the `--allow-rule` of `pgx agent install claude` does (and what
 * happens without it) under `-p --permission-mode acceptEdits` with Bash NOT pre-allowed (`--allowedTools Agent`).
 *
 * Claude Code evaluates permissions on the REWRITTEN command `'<pgx>' agent exec --agent … -- <shell> -c '<original>'`.
 * Observed on 2.1.328 (asserted below, on the database):
 *  - no allow rule → every subagent Bash command is refused ("Permission to use Bash has been denied"): nothing runs,
 *    neither on the branch nor anywhere else (fail closed);
 *  - allow rule in .claude/settings.json of an UNTRUSTED workspace → Claude Code drops it ("Dropped 1 project-scoped
 *    permissions.allow entry — workspace not yet trusted") → refused as above;
 *  - allow rule, trusted workspace → routed commands run (`&&`, `|`, `;`, `$(…)`, redirections included); that
 *    includes commands no rule of the user's allows (`touch`): the rule approves whatever is routed through
 *    `pgx agent exec`;
 *  - but a routed command containing `$NAME` (even `psql "$DATABASE_URL"`) or a line break (a heredoc) is still
 *    refused ("This command requires approval") — Claude Code will not prefix-match those;
 *  - no allow rule but Bash allowed as a whole (`--allowedTools Bash,Agent`) → routed commands run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AGENT_ONLY,
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

warnIfSkipped();
afterAll(cleanupRoots);

const create = (t: string) => `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table ${t} (x int); select 'db=' || current_database();"`;
const DENIED = /Permission to use Bash has been denied|requires approval/;

/** Revives every subagent branch of the run and returns its public tables, by marker. */
async function tablesByMarker(p: E2eProject, run: Run): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [marker, agentId] of run.fake.agentIds) {
    const b = branches(p).find((x) => x.agent_id === agentId);
    if (!b) continue;
    pgxJson(p, ['agent', 'up', '--agent', agentId, '--session', run.sessionId]);
    out[marker] = await publicTables(b.name);
  }
  return out;
}

async function finish(p: E2eProject, run: Run): Promise<void> {
  expect(await publicTables(p.source.name)).toEqual(['items']);
  const s = await pristine(p);
  expect(s.source).toBe(s.baseline);
  expect(s.template).toBe(s.baseline);
  expect(pgx(p, ['agent', 'down', '--session', run.sessionId, '--now']).status).toBe(0);
}

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: permissions of the rewritten commands`, () => {
  let source: Source;
  const figures: Record<string, unknown> = {};
  afterAll(() => {
    if (Object.keys(figures).length) recordFigures('permissions', figures);
  });

  it('without --allow-rule (Bash not pre-allowed): refused, nothing runs anywhere', async () => {
    source = await makeSource();
    const p = makeE2eProject({ source, allowRule: false });
    expect(p.settings.permissions).toBeUndefined();
    const run = await runScenario(p, { subagents: [{ marker: 'norule', commands: [create('norule_t')] }] }, { allowedTools: AGENT_ONLY });
    expect(run.out.code, describeRun(run)).toBe(0);
    const result = run.fake.toolResults.get('norule')![0]!;
    expect(result).toMatch(DENIED);
    // The hooks still ran: the branch exists and the command was rewritten, but never executed.
    expect(hookLog(p).filter((l) => l.event === 'pre-tool-use').map((l) => l.outcome)).toEqual(['rewritten:attach']);
    expect(await tablesByMarker(p, run)).toEqual({ norule: ['items'] });
    figures.no_allow_rule = result.slice(0, 60);
    await finish(p, run);
  });

  it('--allow-rule in an untrusted workspace: Claude Code drops the project rule, refused', async () => {
    source ??= await makeSource();
    const p = makeE2eProject({ source, trusted: false });
    expect(p.settings.permissions?.allow).toHaveLength(1);
    const run = await runScenario(p, { subagents: [{ marker: 'untrusted', commands: [create('untrusted_t')] }] }, { allowedTools: AGENT_ONLY });
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.toolResults.get('untrusted')![0]).toMatch(DENIED);
    expect(readFileSync(run.debugFile, 'utf8')).toContain('project-scoped permissions.allow entry — workspace not yet trusted');
    expect(await tablesByMarker(p, run)).toEqual({ untrusted: ['items'] });
    figures.allow_rule_untrusted_workspace = run.fake.toolResults.get('untrusted')![0]!.slice(0, 60);
    await finish(p, run);
  });

  it('--allow-rule, trusted: routed commands run (any command), except ones with $NAME or a line break', async () => {
    source ??= await makeSource();
    const p = makeE2eProject({ source });
    const proof = join(p.root, 'blanket-proof');
    const subagents = [
      { marker: 'plain', commands: [create('plain_t')] },
      { marker: 'chain', commands: [`${create('chain_a')} && ${create('chain_b')} | cat`] },
      { marker: 'subst', commands: [`psql -X -q -At -c "create table subst_t (x int)"; echo $(echo subst) > /dev/null; echo end-subst`] },
      { marker: 'anycmd', commands: [`touch ${proof} && echo touched`] },
      { marker: 'dollar', commands: [`psql "$DATABASE_URL" -X -q -At -c "create table dollar_t (x int);"`] },
      { marker: 'heredoc', commands: [`psql -X -q <<'SQL'\ncreate table heredoc_t (x int);\nSQL`] },
    ];
    const run = await runScenario(p, { subagents }, { allowedTools: AGENT_ONLY });
    expect(run.out.code, describeRun(run)).toBe(0);
    const res = (m: string) => run.fake.toolResults.get(m)![0]!;
    expect(res('plain')).toMatch(/db=agent_e2e_/);
    expect(res('chain')).toMatch(/db=agent_e2e_/);
    expect(res('subst')).toContain('end-subst');
    expect(res('anycmd')).toContain('touched');
    expect(existsSync(proof)).toBe(true); // `touch` is allowed by no rule of the user's: the pgx rule approved it
    expect(res('dollar')).toMatch(DENIED);
    expect(res('heredoc')).toMatch(DENIED);
    expect(await tablesByMarker(p, run)).toEqual({
      plain: ['items', 'plain_t'],
      chain: ['chain_a', 'chain_b', 'items'],
      subst: ['items', 'subst_t'],
      anycmd: ['items'],
      dollar: ['items'],
      heredoc: ['items'],
    });
    figures.allow_rule_trusted = Object.fromEntries(subagents.map((s) => [s.marker, DENIED.test(res(s.marker)) ? 'refused' : 'ran']));
    await finish(p, run);
  });

  it('without --allow-rule but with Bash allowed as a whole: routed commands run, $DATABASE_URL included', async () => {
    source ??= await makeSource();
    const p = makeE2eProject({ source, allowRule: false });
    const subagents = [
      { marker: 'bash_plain', commands: [create('bash_plain_t')] },
      { marker: 'bash_dollar', commands: [`psql "$DATABASE_URL" -X -q -At -c "create table bash_dollar_t (x int); select 'db=' || current_database();"`] },
    ];
    const run = await runScenario(p, { subagents }, { allowedTools: 'Bash,Agent' });
    expect(run.out.code, describeRun(run)).toBe(0);
    for (const m of ['bash_plain', 'bash_dollar']) expect(run.fake.toolResults.get(m)![0]).toMatch(/db=agent_e2e_/);
    expect(await tablesByMarker(p, run)).toEqual({ bash_plain: ['bash_plain_t', 'items'], bash_dollar: ['bash_dollar_t', 'items'] });
    figures.no_allow_rule_bash_allowed = 'ran';
    await finish(p, run);
  });
});
