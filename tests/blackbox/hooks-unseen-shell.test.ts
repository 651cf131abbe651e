// PreToolUse for the Claude Code tools that run something pgx can't route to a subagent's branch (decision 520), through
// the built CLI as Claude Code runs it: a subagent's CronCreate and REPL are refused with what to do instead; its
// Skill is refused when the skill's file runs inline shell commands (`!`…`` or a ```! block), wherever pgx looks for
// it (a plugin's through Claude Code's install record; one it can't find is refused unless inline shell is off), and
// left alone otherwise; the parent's calls to all three go on; a broken project still refuses the subagent's.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject } from '../helpers/pgx.js';
import { newAgentId, preToolUseTool, session } from '../helpers/hook-payloads.js';
import { hook } from '../helpers/hooks.js';
import { PRE_TOOL_USE_MATCHER } from '../../src/hooks/claude/events.js';

const decision = (r: { json?: any }) => r.json?.hookSpecificOutput?.permissionDecision;
const reason = (r: { json?: any }) => String(r.json?.hookSpecificOutput?.permissionDecisionReason ?? '');

function writeSkill(dir: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), text);
}
const skillMd = (body: string) => `---\nname: x\ndescription: a skill\n---\n${body}\n`;

describe('PreToolUse: CronCreate, REPL, Skill', () => {
  it('the matcher names them, anchored, and nothing else new', () => {
    const re = new RegExp(PRE_TOOL_USE_MATCHER);
    for (const t of ['CronCreate', 'Skill', 'REPL', 'Bash', 'Monitor', 'mcp__pg__query']) expect(re.test(t)).toBe(true);
    for (const t of ['CronList', 'CronDelete', 'Workflow', 'ScheduleWakeup', 'Read', 'SkillX', 'XREPL', 'TaskStop'])
      expect(re.test(t)).toBe(false);
  });

  it("a subagent's CronCreate and REPL are refused with what to do; the parent's go on", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const cron = { cron: '7 * * * *', prompt: 'psql -c "insert into t values (1)"', recurring: true };
    const r1 = await hook('pre-tool-use', preToolUseTool(s, 'CronCreate', cron, { agentId: a }), p);
    expect(decision(r1)).toBe('deny');
    expect(reason(r1)).toContain('runs later in the main session');
    expect(reason(r1)).toContain('Bash tool');
    const r2 = await hook('pre-tool-use', preToolUseTool(s, 'REPL', { code: 'await $`psql`' }, { agentId: a }), p);
    expect(decision(r2)).toBe('deny');
    expect(reason(r2)).toContain('Run shell commands with the Bash tool instead');
    expect((await hook('pre-tool-use', preToolUseTool(s, 'CronCreate', cron), p)).stdout).toBe('');
    expect((await hook('pre-tool-use', preToolUseTool(s, 'REPL', { code: '1' }), p)).stdout).toBe('');
  });

  it("a subagent's Skill: refused when the skill runs inline shell, wherever it is; left alone otherwise", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const userClaude = join(p.env.HOME!, '.claude');
    writeSkill(join(p.dir, '.claude', 'skills', 'dbcheck'), skillMd('Tables: !`psql -c "\\dt"`'));
    writeSkill(join(userClaude, 'skills', 'fenced'), skillMd('```!\npsql -c "select 1"\n```'));
    mkdirSync(join(p.dir, '.claude', 'commands', 'ops'), { recursive: true });
    writeFileSync(join(p.dir, '.claude', 'commands', 'ops', 'seed.md'), 'Seed: !`psql -f seed.sql`\n');
    writeSkill(join(p.dir, 'apps', 'web', '.claude', 'skills', 'deploy'), skillMd('Now: !`date`'));
    writeSkill(join(p.dir, '.claude', 'skills', 'plain'), skillMd('Say `hello` and use !important in CSS.'));
    const call = (skill: string, agentId?: string) =>
      hook('pre-tool-use', preToolUseTool(s, 'Skill', { skill }, { agentId }), p);

    for (const [skill, file] of [
      ['dbcheck', '.claude/skills/dbcheck/SKILL.md'],
      ['fenced', '.claude/skills/fenced/SKILL.md'],
      ['ops:seed', '.claude/commands/ops/seed.md'],
      ['apps/web:deploy', 'apps/web/.claude/skills/deploy/SKILL.md'],
    ]) {
      const r = await call(skill!, a);
      expect(decision(r), skill).toBe('deny');
      expect(reason(r)).toContain(`the skill "${skill}" runs shell commands as it loads`);
      expect(reason(r)).toContain(file);
      expect((await call(skill!)).stdout, `parent's ${skill}`).toBe('');
    }
    for (const skill of ['plain', 'pgx:pgx', 'missing', '../../etc/passwd'])
      expect((await call(skill, a)).stdout).toBe('');
  });

  it("a subagent's plugin skill: read where Claude Code installed it; refused when pgx can't find it, unless inline shell is off", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const userClaude = join(p.env.HOME!, '.claude');
    const root = join(userClaude, 'plugins', 'cache', 'market', 'dbtools', '1.0.0');
    writeSkill(join(root, 'skills', 'peek'), skillMd('Rows: !`psql -c "select count(*) from t"`'));
    writeSkill(join(root, 'skills', 'explain'), skillMd('Explain the plan in words.'));
    mkdirSync(join(userClaude, 'plugins'), { recursive: true });
    writeFileSync(
      join(userClaude, 'plugins', 'installed_plugins.json'),
      JSON.stringify({ version: 2, plugins: { 'dbtools@market': [{ scope: 'user', installPath: root }] } }),
    );
    const call = (skill: string, agentId?: string) =>
      hook('pre-tool-use', preToolUseTool(s, 'Skill', { skill }, { agentId }), p);

    const shell = await call('dbtools:peek', a);
    expect(decision(shell)).toBe('deny');
    expect(reason(shell)).toContain(join(root, 'skills', 'peek', 'SKILL.md'));
    expect((await call('dbtools:explain', a)).stdout).toBe('');
    const unfound = await call('elsewhere:peek', a);
    expect(decision(unfound)).toBe('deny');
    expect(reason(unfound)).toContain('could not find');
    expect(reason(unfound)).toContain('disableSkillShellExecution');
    for (const skill of ['dbtools:peek', 'elsewhere:peek'])
      expect((await call(skill)).stdout, `parent's ${skill}`).toBe('');

    // The user turned inline shell off (a restrictive setting: any settings file): nothing a skill loads runs a command.
    mkdirSync(join(p.dir, '.claude'), { recursive: true });
    writeFileSync(join(p.dir, '.claude', 'settings.local.json'), JSON.stringify({ disableSkillShellExecution: true }));
    for (const skill of ['dbtools:peek', 'elsewhere:peek']) expect((await call(skill, a)).stdout, skill).toBe('');
  });

  it("pgx's own plugin skills run no inline shell (the hook trusts `pgx:…` by that)", () => {
    const dir = join(import.meta.dirname, '..', '..', 'plugins', 'claude', 'pgx', 'skills');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8'), f).not.toMatch(/(^|[^\w`])!`[^`\n]+`|^\s*```!/m);
  });

  it("fails closed for a subagent's call when the project is broken; the parent's goes on", async () => {
    const p = makeProject();
    writeFileSync(join(p.dir, '.pgx.toml'), 'this is = not [valid toml');
    const s = session(p.dir, p.dir);
    for (const [tool, input] of [
      ['CronCreate', { cron: '* * * * *', prompt: 'x' }],
      ['Skill', { skill: 'plain' }],
      ['REPL', { code: '1' }],
    ] as const) {
      const r = await hook('pre-tool-use', preToolUseTool(s, tool, input, { agentId: newAgentId() }), p);
      expect(decision(r), tool).toBe('deny');
      expect((await hook('pre-tool-use', preToolUseTool(s, tool, input), p)).stdout, tool).toBe('');
    }
  });
});
