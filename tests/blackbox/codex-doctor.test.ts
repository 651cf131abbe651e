// `pgx agent doctor` on a Codex install: the codex check (hooks present and trusted as Codex checks it, the sandbox),
// and the Claude Code checks skipped instead of failing when there is no Claude Code install. No Codex install: no line.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx } from '../helpers/pgx.js';

const doctor = (p: ReturnType<typeof makeProject>, env: NodeJS.ProcessEnv) => {
  const checks = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env })).checks as { name: string; status: string; detail: string; fix?: string }[];
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
    expect(d.codex).toMatchObject({ status: 'warn', fix: `add [sandbox_workspace_write] network_access = true to ${join(codexHome, 'config.toml')}` });
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
});
