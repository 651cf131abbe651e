// `pgx agent doctor` on a Codex install: the codex check (hooks present and trusted as Codex checks it, the sandbox),
// and the Claude Code checks skipped instead of failing when there is no Claude Code install; a portable project install
// (decisions/206) checked for pgx on PATH. No Codex install: no line.
import { appendFileSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';

const doctor = (p: ReturnType<typeof makeProject>, env: NodeJS.ProcessEnv) => {
  const checks = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env })).checks as {
    name: string;
    status: string;
    detail: string;
    fix?: string;
  }[];
  return Object.fromEntries(checks.map((c) => [c.name, c]));
};

describe('doctor: the Codex CLI install', () => {
  it('no Codex install: no codex line', () => {
    const p = makeProject();
    expect(doctor(p, { ...p.env, CODEX_HOME: join(p.dir, 'no-codex') }).codex).toBeUndefined();
  });

  it('installed: the sandbox warns until network_access; an edited hook is untrusted (fail); Claude checks skip', () => {
    const p = makeProject();
    const codexHome = join(p.dir, 'codex-home');
    const env = { ...p.env, CODEX_HOME: codexHome };
    expect(runPgx(['agent', 'install', 'codex'], { cwd: p.dir, env }).status).toBe(0);
    let d = doctor(p, env);
    expect(d.codex).toMatchObject({
      status: 'warn',
      fix: `add [sandbox_workspace_write] network_access = true to ${join(codexHome, 'config.toml')}`,
    });
    expect(d.hooks!.status).toBe('skip');
    appendFileSync(join(codexHome, 'config.toml'), '\n[sandbox_workspace_write]\nnetwork_access = true\n');
    d = doctor(p, env);
    expect(d.codex!.status).toBe('ok');
    const hooks = join(codexHome, 'hooks.json');
    writeFileSync(hooks, readFileSync(hooks, 'utf8').replace('codex-hook subagent-stop', 'codex-hook subagent-stop '));
    d = doctor(p, env);
    expect(d.codex).toMatchObject({ status: 'fail', fix: 'pgx agent install codex --scope user' });
    expect(d.codex!.detail).toMatch(/not trusted .*SubagentStop/);
    expect(runPgx(['agent', 'install', 'codex'], { cwd: p.dir, env }).status).toBe(0);
    expect(doctor(p, env).codex!.status).toBe('ok');
  });

  it('a portable project install (decisions/206): the launcher is pgx on PATH; no pgx there: fail, with the PATH fix', () => {
    const p = makeProject();
    const codexHome = join(p.dir, 'codex-home');
    const bin = join(p.dir, 'bin');
    mkdirSync(bin);
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    const env = { ...p.env, CODEX_HOME: codexHome, PATH: `${bin}:${process.env.PATH}` };
    expect(runPgx(['agent', 'install', 'codex', '--scope', 'project'], { cwd: p.dir, env }).status).toBe(0);
    let d = doctor(p, env);
    expect(d.codex).toMatchObject({
      status: 'warn',
      fix: `trust ${p.dir} when Codex asks, or: pgx agent install codex --scope user`,
    }); // the project is not trusted in Codex yet
    appendFileSync(
      join(codexHome, 'config.toml'),
      `\n[projects.${JSON.stringify(p.dir)}]\ntrust_level = "trusted"\n\n[sandbox_workspace_write]\nnetwork_access = true\n`,
    );
    d = doctor(p, env);
    expect(d.codex).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining(`launcher pgx on PATH: ${realpathSync(LAUNCHER)}`),
    });
    // the same checkout on a PATH without pgx: node and the system only
    const noPgx = { ...env, PATH: [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':') };
    expect(spawnSync('/bin/sh', ['-c', 'command -v pgx'], { env: noPgx }).status, 'a pgx on the system PATH').not.toBe(
      0,
    );
    d = doctor(p, noPgx);
    expect(d.codex).toMatchObject({
      status: 'fail',
      fix: 'put the directory holding pgx on PATH (an npm --prefix ~/.local install: ~/.local/bin), or install pgx (README), then pgx agent install codex --scope project',
    });
    expect(d.codex!.detail).toBe(
      `pgx is not on PATH, where the hooks in ${join(p.dir, '.codex', 'hooks.json')} find it: every subagent shell command is refused (the session goes on, with a warning)`,
    );
  });
});
