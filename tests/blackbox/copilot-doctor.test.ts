// `pgx agent doctor` on a GitHub Copilot CLI install: the copilot check (all six hooks, pgx on PATH for the portable
// project file, the launcher for user scope, hooks not switched off, the folder trusted or the prompt-mode opt-in),
// and the Claude Code checks skipped instead of failing when there is no Claude Code install. No Copilot install: no
// line.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';

type P = ReturnType<typeof makeProject>;
const doctor = (p: P, env: NodeJS.ProcessEnv) => {
  const checks = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env })).checks as {
    name: string;
    status: string;
    detail: string;
    fix?: string;
  }[];
  return Object.fromEntries(checks.map((c) => [c.name, c]));
};
/** pgx on PATH (a link to this checkout's launcher), and Copilot's home in the project's temp dir. */
function setup(p: P) {
  const bin = join(p.dir, '.bin');
  mkdirSync(bin);
  symlinkSync(LAUNCHER, join(bin, 'pgx'));
  const copilotHome = join(p.dir, '.copilot');
  mkdirSync(copilotHome);
  return { copilotHome, env: { ...p.env, PATH: `${bin}:${process.env.PATH}`, COPILOT_HOME: copilotHome } };
}

describe('doctor: the GitHub Copilot CLI install', () => {
  it('no Copilot install: no copilot line', () => {
    const p = makeProject();
    expect(doctor(p, { ...p.env, COPILOT_HOME: join(p.dir, 'none') }).copilot).toBeUndefined();
  });

  it('project scope: warn until the folder is trusted; pgx off PATH, a missing hook, disableAllHooks: fail; Claude checks skip', () => {
    const p = makeProject();
    const { copilotHome, env } = setup(p);
    expect(runPgx(['agent', 'install', 'copilot'], { cwd: p.dir, env }).status).toBe(0);
    let d = doctor(p, env);
    expect(d.copilot).toMatchObject({ status: 'warn' });
    expect(d.copilot!.detail).toMatch(/not a trusted folder/);
    expect(d.hooks!.status).toBe('skip');
    expect(d.permissions!.status).toBe('skip');
    writeFileSync(
      join(copilotHome, 'config.json'),
      `// managed by Copilot\n${JSON.stringify({ trustedFolders: [p.dir] })}\n`,
    );
    d = doctor(p, env);
    expect(d.copilot).toMatchObject({ status: 'ok' });
    expect(d.copilot!.detail).toMatch(/folder trusted/);
    // pgx not on PATH: every subagent command would be refused
    expect(doctor(p, { ...env, PATH: '/usr/bin:/bin' }).copilot).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/pgx is not on PATH/),
    });
    // an event gone from the file
    const file = join(p.dir, '.github', 'hooks', 'pgx.json');
    const text = readFileSync(file, 'utf8');
    const parsed = JSON.parse(text) as { hooks: Record<string, unknown> };
    delete parsed.hooks.subagentStop;
    writeFileSync(file, JSON.stringify(parsed));
    expect(doctor(p, env).copilot).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/lack subagentStop/),
      fix: 'pgx agent install copilot --scope project',
    });
    writeFileSync(file, text);
    // hooks switched off in the user's settings
    writeFileSync(join(copilotHome, 'settings.json'), JSON.stringify({ disableAllHooks: true }));
    expect(doctor(p, env).copilot).toMatchObject({ status: 'fail', detail: expect.stringMatching(/disableAllHooks/) });
  });

  it('user scope: no trust needed; a launcher that no longer exists fails', () => {
    const p = makeProject();
    const { copilotHome, env } = setup(p);
    expect(runPgx(['agent', 'install', 'copilot', '--scope', 'user'], { cwd: p.dir, env }).status).toBe(0);
    expect(doctor(p, env).copilot).toMatchObject({ status: 'ok' });
    const file = join(copilotHome, 'settings.json');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(LAUNCHER.replace(/\/bin\/pgx\.js$/, ''), '/gone'));
    expect(doctor(p, env).copilot).toMatchObject({ status: 'fail', detail: expect.stringMatching(/no longer exists/) });
  });
});
