/**
 * The reduced permissions matrix on the NEWEST Claude Code release CI checks (NEWEST in scripts/install-claude-code.sh;
 * the full matrix, pgx-permissions.test.ts, and the rest of the e2e suite stay on the pinned one). Its cells are
 * `pgx agent verify claude`'s own (src/verify/cells.ts), but run through pgx's REAL install, hooks, database
 * branches and `agent exec`, not the probe: what a verdict of the probe stands for is checked here against the real
 * thing. PGX_VERIFIED_CLAUDE_CODE names the version, so the hook adds no ask of its own and the rules alone decide.
 * The verified list holds a version once this passed on it ("the verified list is the versions CI proved").
 */
import { afterAll, describe, expect, it } from 'vitest';
import { realpathSync } from 'node:fs';
import { LAUNCHER } from '../helpers/pgx.js';
import { claudeMissing, findClaudeBinary, NEWEST_CLAUDE_CODE } from './claude.js';
import {
  cleanupRoots,
  describeRun,
  hookLog,
  makeE2eProject,
  makeSource,
  runScenario,
  type Source,
} from './pgx-harness.js';
import {
  classify,
  judgeCell,
  VERIFY_COMMANDS,
  VERIFY_RULE_SETS,
  VERIFY_RUNS,
  writeFixture,
  type CellResult,
  type ModeName,
  type Observed,
  type RuleSetName,
  type Who,
} from '../../src/verify/cells.js';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const bin = findClaudeBinary(NEWEST_CLAUDE_CODE);
if (!bin) console.warn(`SKIPPED: ${claudeMissing(NEWEST_CLAUDE_CODE)}`);
afterAll(cleanupRoots);

const launcher = realpathSync(LAUNCHER);
const MODE: Record<ModeName, 'default' | 'acceptEdits' | 'bypass'> = {
  default: 'default',
  acceptEdits: 'acceptEdits',
  bypass: 'bypass',
};

async function runOnce(
  source: Source,
  rules: RuleSetName,
  mode: ModeName,
  routed: boolean,
): Promise<{ cells: Map<string, Observed>; hooks: string }> {
  const env = { PGX_VERIFIED_CLAUDE_CODE: NEWEST_CLAUDE_CODE };
  const p = makeE2eProject({ source, env, installArgs: ['--no-verify'] });
  if (!routed) {
    writeFileSync(join(p.cwd, '.claude', 'settings.json'), '{}\n'); // no pgx at all
    rmSync(join(p.cwd, '.claude', 'settings.local.json'), { force: true }); // nor pgx's rules (the portable layout)
  }
  writeFixture(p.cwd, p.home, VERIFY_RULE_SETS[rules]);
  const ctx = { cwd: p.cwd, launcher };
  const forWho = (who: Who) => VERIFY_COMMANDS.filter((c) => c.who === who);
  const run = await runScenario(
    p,
    {
      subagents: (['plain', 'disguised'] as const).map((who) => ({
        marker: who,
        commands: forWho(who).map((c) => c.cmd(ctx)),
      })),
      parentCommands: forWho('parent').map((c) => c.cmd(ctx)),
    },
    { bin, allowedTools: 'Agent', permissionMode: MODE[mode], timeoutMs: 180_000 },
  );
  expect(run.out.code, describeRun(run)).toBe(0);
  expect(run.fake.errors, describeRun(run)).toEqual([]);
  const cells = new Map<string, Observed>();
  for (const who of ['plain', 'disguised', 'parent'] as const) {
    const texts = who === 'parent' ? run.fake.parentBashResults : (run.fake.toolResults.get(who) ?? []);
    forWho(who).forEach((c, i) =>
      cells.set(c.id, { decision: classify(texts[i]), effect: c.effect ? c.effect(p.cwd) : null, text: texts[i] }),
    );
  }
  const hooks = hookLog(p)
    .filter((l) => l.event === 'pre-tool-use')
    .map((l) => `${l.agent_id ?? 'parent'}:${l.outcome}`)
    .join(', ');
  return { cells, hooks: `${hooks} (run dir ${p.root})` };
}

describe.skipIf(!bin)(
  `the reduced permissions matrix (the verify cells) through pgx's real hooks: Claude Code ${NEWEST_CLAUDE_CODE}`,
  () => {
    let source: Source;
    it.each(VERIFY_RUNS.map((r) => [`${r.rules}/${r.mode}`, r] as const))(
      '%s: every cell holds',
      async (_name, pair) => {
        source ??= await makeSource();
        const [u, r] = await Promise.all([
          runOnce(source, pair.rules, pair.mode, false),
          runOnce(source, pair.rules, pair.mode, true),
        ]);
        const results: CellResult[] = VERIFY_COMMANDS.map((c) =>
          judgeCell(c, pair.rules, pair.mode, u.cells.get(c.id)!, r.cells.get(c.id)!),
        );
        const bad = results
          .filter((c) => !c.ok)
          .map((c) => `${c.command}: ${c.why}; routed text: ${r.cells.get(c.command)?.text?.slice(0, 200)}`);
        expect(bad, `routed hooks: ${r.hooks}`).toEqual([]);
        // Routed through pgx: every subagent command that ran went through the hook's rewrite.
        expect(r.hooks).toMatch(/rewritten:/);
        expect(r.hooks).not.toMatch(/ask-unverified/);
      },
      300_000,
    );
  },
);
