// `pgx agent install|uninstall claude` at the CLI edge: a dry run names the .pgx.toml it would write (and writes
// nothing); uninstall deletes a settings file that pgx's removal left empty (and an emptied .claude/), nothing else.
// Project scope is portable (decisions/111-portable-project-install.md): the committed .claude/settings.json names
// no path of this machine, and a teammate's clone of it behaves as decided, with pgx on PATH or without.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, sessionStart } from '../helpers/hook-payloads.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function bareDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-inst-'));
  dirs.push(dir);
  return { dir, cwd: dir, env: { PATH: process.env.PATH, HOME: dir, PGX_HOME: join(dir, '.pgx-home') } as NodeJS.ProcessEnv };
}

/** A bin directory holding `pgx` (a symlink to this checkout's launcher), as an npm install's bin/ does. */
function pgxBin(under: string): string {
  const bin = join(under, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(LAUNCHER, join(bin, 'pgx'));
  return bin;
}

type Settings = { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]>; permissions?: unknown };
const settingsOf = (dir: string): Settings => JSON.parse(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8'));

/** Runs one hook as Claude Code does: the settings file's command string in a shell, the payload on stdin. */
function runHook(settings: Settings, event: string, payload: object, cwd: string, env: NodeJS.ProcessEnv) {
  const command = settings.hooks[event]![0]!.hooks[0]!.command;
  const r = spawnSync('/bin/sh', ['-c', command], { cwd, env: { ...env, CLAUDE_PROJECT_DIR: cwd, CLAUDECODE: '1', AI_AGENT: 'claude-code_2-1-328_harness' }, input: JSON.stringify(payload), encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent install / uninstall claude (CLI)', () => {
  it('--dry-run names the .pgx.toml it would write, and writes nothing', () => {
    const p = bareDir();
    const j = jsonOf(runPgx(['agent', 'install', 'claude', '--dry-run', '--json'], p));
    expect(j).toMatchObject({ dryRun: true, config_written: join(p.dir, '.pgx.toml') });
    const human = runPgx(['agent', 'install', 'claude', '--dry-run'], p);
    expect(human.stdout).toContain(`would write ${join(p.dir, '.pgx.toml')}`);
    expect(existsSync(join(p.dir, '.pgx.toml'))).toBe(false);
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
    // with a .pgx.toml already there, nothing to write
    writeFileSync(join(p.dir, '.pgx.toml'), '[project]\nname = "x"\n');
    expect(jsonOf(runPgx(['agent', 'install', 'claude', '--dry-run', '--json'], p)).config_written).toBeNull();
  });

  it('uninstall after install leaves no settings file (nor .claude/) that only held pgx; a file with other keys stays', () => {
    const p = bareDir();
    const inst = runPgx(['agent', 'install', 'claude'], p);
    expect(inst.status).toBe(0);
    const pgxHere = spawnSync('/bin/sh', ['-c', 'command -v pgx'], { env: p.env }).status === 0;
    if (!pgxHere) expect(inst.stdout).toContain('pgx is not on PATH here: the hooks find it there, and refuse every subagent Bash command until it is');
    expect(existsSync(join(p.dir, '.claude', 'settings.json'))).toBe(true);
    expect(existsSync(join(p.dir, '.claude', 'settings.local.json'))).toBe(true);
    const u = jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], p));
    expect(u).toMatchObject({ changed: true, file_removed: true, local: { changed: true, file_removed: true } });
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
    expect(jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], p))).toMatchObject({ changed: false }); // idempotent

    const q = bareDir();
    mkdirSync(join(q.dir, '.claude'));
    writeFileSync(join(q.dir, '.claude', 'settings.json'), JSON.stringify({ model: 'opus' }));
    writeFileSync(join(q.dir, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { allow: ['Bash(ls:*)'] } }));
    expect(runPgx(['agent', 'install', 'claude'], q).status).toBe(0);
    expect(jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], q))).toMatchObject({ changed: true, file_removed: false, local: { changed: true, file_removed: false } });
    expect(JSON.parse(readFileSync(join(q.dir, '.claude', 'settings.json'), 'utf8'))).toEqual({ model: 'opus' });
    expect(JSON.parse(readFileSync(join(q.dir, '.claude', 'settings.local.json'), 'utf8'))).toEqual({ permissions: { allow: ['Bash(ls:*)'] } });
  });

  it('project scope, pgx on PATH, in a git clone: no absolute path of this machine in settings.json; the rules in the git-ignored settings.local.json', () => {
    const p = makeProject();
    dirs.push(p.dir);
    const bin = pgxBin(p.dir);
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}` };
    execFileSync('git', ['init', '-q'], { cwd: p.dir });
    const r = runPgx(['agent', 'install', 'claude'], { cwd: p.dir, env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`updated: ${join(p.dir, '.claude', 'settings.json')} (no path of this machine: commit it)`);
    expect(r.stdout).toContain(`this machine's permission rules: ${join(p.dir, '.claude', 'settings.local.json')} (kept out of git by ${join(p.dir, '.git', 'info', 'exclude')})`);
    const text = readFileSync(join(p.dir, '.claude', 'settings.json'), 'utf8');
    for (const machinePath of [realpathSync(LAUNCHER), LAUNCHER, bin, p.dir, realpathSync(p.dir), tmpdir()]) expect(text).not.toContain(machinePath);
    expect(text).not.toMatch(/(^|[\s"'=])\/[A-Za-z]/m); // no absolute path of any kind (a `/dev/null` redirect aside)
    const local = JSON.parse(readFileSync(join(p.dir, '.claude', 'settings.local.json'), 'utf8'));
    expect(local).toEqual({ permissions: { allow: [`Bash(${realpathSync(LAUNCHER)} agent exec --agent * --cwd ${p.dir} -- *)`, 'Bash(exit)'] } });
    // what `git add -A` would commit: the shared file and .pgx.toml, never this machine's rules
    expect(execFileSync('git', ['status', '--porcelain', '-uall'], { cwd: p.dir, encoding: 'utf8' }).split('\n').filter((l) => l.includes('.claude'))).toEqual(['?? .claude/settings.json']);
    // doctor reads the new layout: hooks via PATH, rules from settings.local.json
    const d = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env }));
    const byName = Object.fromEntries(d.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.hooks).toMatchObject({ status: 'ok', detail: expect.stringContaining(`launcher pgx on PATH: ${realpathSync(LAUNCHER)}`) });
    expect(byName.permissions.detail).toContain(join(p.dir, '.claude', 'settings.local.json'));
    expect(byName.permissions.detail).not.toContain('no wrapper rule');
    // uninstall: both files, and exactly the exclude lines install added
    const u = jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], { cwd: p.dir, env }));
    expect(u).toMatchObject({ changed: true, local: { file_removed: true, gitExcludeRemoved: true } });
    expect(readFileSync(join(p.dir, '.git', 'info', 'exclude'), 'utf8')).not.toContain('pgx');
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
  });

  it("a teammate's clone: without pgx on PATH a subagent's Bash is refused and the session warns; with pgx, routed, then install writes only their rules", async () => {
    const p = makeProject();
    dirs.push(p.dir);
    expect(runPgx(['agent', 'install', 'claude'], { cwd: p.dir, env: { ...p.env, PATH: `${pgxBin(p.dir)}:${process.env.PATH}` } }).status).toBe(0);
    // The teammate: another directory, another HOME, the committed files only (.pgx.toml and .claude/settings.json).
    const mate = mkdtempSync(join(tmpdir(), 'pgx-mate-'));
    dirs.push(mate);
    const clone = join(mate, 'shop');
    mkdirSync(join(clone, '.claude'), { recursive: true });
    cpSync(join(p.dir, '.pgx.toml'), join(clone, '.pgx.toml'));
    cpSync(join(p.dir, '.claude', 'settings.json'), join(clone, '.claude', 'settings.json'));
    const shared = readFileSync(join(clone, '.claude', 'settings.json'), 'utf8');
    const settings = settingsOf(clone);
    const noPgx = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: mate };
    expect(spawnSync('/bin/sh', ['-c', 'command -v pgx'], { env: noPgx }).status).not.toBe(0);
    const s = session(clone, mate);
    const agent = newAgentId();

    const start = runHook(settings, 'SessionStart', sessionStart(s), clone, noPgx);
    expect(start.status).toBe(0);
    expect(JSON.parse(start.stdout).systemMessage).toMatch(/^pgx is not on PATH on this machine: every subagent Bash command is refused/);
    const denied = runHook(settings, 'PreToolUse', preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }), clone, noPgx);
    expect(denied.status).toBe(2); // Claude Code blocks the call and gives the model stderr
    expect(denied.stderr).toContain('this subagent Bash command is refused');
    const parent = runHook(settings, 'PreToolUse', preToolUseBash(s, 'ls'), clone, noPgx);
    expect([parent.status, parent.stdout, parent.stderr]).toEqual([0, '', '']);

    // The teammate installs pgx (on PATH now), before running `pgx agent install claude`: the hooks route, and the
    // routed command asks (no rule of theirs yet), which the doctor names with its fix.
    const withPgx = { ...p.env, HOME: mate, PGX_HOME: join(mate, '.pgx'), PATH: `${pgxBin(mate)}:${process.env.PATH}` };
    const routed = runHook(settings, 'PreToolUse', preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }), clone, withPgx);
    expect(routed.status, routed.stderr).toBe(0);
    const command: string = JSON.parse(routed.stdout).hookSpecificOutput.updatedInput.command;
    expect(command.startsWith(`'${realpathSync(LAUNCHER)}' agent exec --agent ${agent} --cwd ${clone} -- `)).toBe(true);
    const branch = /# pgx-routed (\S+)\n/.exec(command)![1]!;
    const doctor = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: clone, env: withPgx }));
    expect(doctor.checks.find((c: { name: string }) => c.name === 'permissions')).toMatchObject({ status: 'warn', fix: 'pgx agent install claude', detail: expect.stringContaining(`no wrapper rule for ${realpathSync(LAUNCHER)} in ${clone}`) });
    const mine = runPgx(['agent', 'install', 'claude', '--json'], { cwd: clone, env: withPgx });
    expect(jsonOf(mine)).toMatchObject({ added: [], updated: [], local: { changed: true } });
    expect(readFileSync(join(clone, '.claude', 'settings.json'), 'utf8')).toBe(shared); // nothing to commit
    expect(JSON.parse(readFileSync(join(clone, '.claude', 'settings.local.json'), 'utf8')).permissions.allow).toEqual([`Bash(${realpathSync(LAUNCHER)} agent exec --agent * --cwd ${clone} -- *)`, 'Bash(exit)']);
    expect(runPgx(['agent', 'down', '--branch', branch, '--now'], { cwd: clone, env: withPgx }).status).toBe(0);
  });

  it('user and local scope keep absolute launcher paths (files nobody shares)', () => {
    const p = bareDir();
    expect(runPgx(['agent', 'install', 'claude', '--scope', 'local'], p).status).toBe(0);
    const local = JSON.parse(readFileSync(join(p.dir, '.claude', 'settings.local.json'), 'utf8'));
    expect(local.hooks.SessionStart[0].hooks[0].command).toBe(`'${realpathSync(LAUNCHER)}' agent hook session-start`);
    expect(existsSync(join(p.dir, '.claude', 'settings.json'))).toBe(false);
  });
});
