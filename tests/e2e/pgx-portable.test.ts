// The portable project-scope install with the real Claude Code (decisions/111-portable-project-install.md): the
// committed .claude/settings.json finds pgx on PATH. On a teammate's machine where pgx is not on PATH, the hooks'
// shell fallback refuses every subagent Bash command (exit 2: Claude Code blocks it and gives the model the reason),
// lets the parent's commands run, and tells the session and each subagent why. The other side, pgx on PATH with the
// rules in settings.local.json, is what every other e2e file runs (pgx-harness.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  makeE2eProject,
  makeSource,
  runScenario,
  warnIfSkipped,
} from './pgx-harness.js';
import { sql } from '../helpers/pgx.js';

warnIfSkipped();
afterAll(cleanupRoots);

describe.skipIf(!claudeBin)(`portable project install with real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  it("pgx not on PATH (a teammate's clone): the subagent's Bash is refused and never runs, the parent's runs; both are told why", async () => {
    const source = await makeSource();
    const p = makeE2eProject({ source });
    // The teammate's PATH: node, the system, no pgx.
    const PATH = [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
    expect(
      spawnSync('/bin/sh', ['-c', 'command -v pgx'], { env: { PATH } }).status,
      'a pgx on the system PATH',
    ).not.toBe(0);
    p.claudeEnv.PATH = PATH;
    const dumpDir = mkdtempSync(join(p.root, 'dump-'));
    const run = await runScenario(
      p,
      {
        subagents: [{ marker: 'mate', commands: ['touch subagent-ran'] }],
        parentCommands: ['touch parent-ran'],
        dumpDir,
      },
      { allowedTools: 'Agent,Bash(touch:*)' },
    );
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors, describeRun(run)).toEqual([]);
    const sub = run.fake.toolResults.get('mate')!;
    expect(sub[0], describeRun(run)).toMatch(
      /pgx is not on PATH on this machine: this subagent Bash command is refused/,
    );
    expect(readdirSync(p.cwd)).not.toContain('subagent-ran');
    expect(readdirSync(p.cwd)).toContain('parent-ran'); // the parent's work goes on
    // What the model was told: SessionStart's context (the parent) and SubagentStart's (the subagent).
    const bodies = readdirSync(dumpDir)
      .map((f) => readFileSync(join(dumpDir, f), 'utf8'))
      .join('\n');
    expect(bodies).toContain('subagents cannot run Bash commands (refused, so that they never share one database)');
    expect(bodies).toContain('pgx is not on PATH on this machine: your Bash commands will be refused');
    // pgx never ran under Claude Code: no hook log line, no template of this project on the server
    expect(existsSync(join(p.pgxHome, 'agent', 'hooks.log'))).toBe(false);
    expect(await sql(`SELECT datname FROM pg_database WHERE datname = $1`, [p.template])).toEqual([]);
    await sql(`DROP DATABASE IF EXISTS ${source.name}`);
  }, 180_000);
});
