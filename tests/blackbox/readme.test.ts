// The README's shell blocks run as written: the first screen's two commands (the demo on the embedded default;
// the tests — this suite itself, so only its text is checked) and the "in your project" block.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, REPO, jsonOf, makeProject, runPgx } from '../helpers/pgx.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const shBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean));

describe('README', () => {
  it('first screen: the demo command and the test command', () => {
    expect(shBlocks[0]).toEqual(['npm ci && npm run demo', 'npm test']);
    expect(readme.indexOf('npm run demo')).toBeLessThan(readme.indexOf('pgx agent install claude'));
  });

  it('`npm run demo` runs the main job end to end on the embedded default server', () => {
    const home = mkdtempSync(join(tmpdir(), 'pgx-demo-home-'));
    const env = { PATH: process.env.PATH, HOME: home, PGX_HOME: join(home, '.pgx') };
    try {
      const r = spawnSync('npm', ['run', 'demo'], { cwd: REPO, env, encoding: 'utf8', timeout: 240_000 });
      expect(r.status, r.stderr + r.stdout).toBe(0);
      // each agent saw the source's table plus only its own migration
      expect(r.stdout).toMatch(/_a1users0: users,users_migration\n/);
      expect(r.stdout).toMatch(/_a2accoun: accou_migration,users\n/);
      expect(r.stdout).toMatch(/_a3bookin: booki_migration,users\n/);
      expect(r.stdout).toMatch(/# the source is untouched\S*\nusers\n/);
      expect(r.stdout.match(/^agent_\S+ .*retiring\s+in \d+m/gm)?.length).toBe(3);
      expect(r.stdout.match(/^agent_\S+\s+dropped\b/gm)?.length).toBe(3);
    } finally {
      const status = JSON.parse(execFileSync(process.execPath, [LAUNCHER, 'local', 'status', '--json'], { env: { PATH: process.env.PATH, PGX_HOME: join(home, '.pgx') }, encoding: 'utf8' }));
      spawnSync(process.execPath, [LAUNCHER, 'local', 'down'], { env: { PATH: process.env.PATH, PGX_HOME: join(home, '.pgx') } });
      if (status.data_dir?.startsWith('/var/lib/pgx/')) rmSync(dirname(dirname(status.data_dir)), { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('the "in your project" block runs as written', () => {
    const block = shBlocks[1]!;
    expect(block).toEqual(['pgx agent install claude', 'pgx agent doctor']);
    const p = makeProject();
    const bin = mkdtempSync(join(tmpdir(), 'pgx-bin-'));
    mkdirSync(bin, { recursive: true });
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    for (const line of block) {
      const r = spawnSync('bash', ['-c', line], { cwd: p.cwd, env: { ...p.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });
      expect(r.status, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
    }
    const settings = JSON.parse(readFileSync(join(p.cwd, '.claude', 'settings.json'), 'utf8'));
    expect(Object.keys(settings.hooks).sort()).toEqual(['PreToolUse', 'SessionEnd', 'SessionStart', 'SubagentStart', 'SubagentStop', 'UserPromptSubmit']);
    expect(settings.permissions.allow).toEqual([`Bash(${realpathSync(LAUNCHER)} agent exec --agent * --cwd ${p.cwd} -- *)`, 'Bash(exit)']);
    expect(jsonOf(runPgx(['agent', 'doctor', '--json'], p)).ok).toBe(true);
  });
});
