// `pgx agent install|uninstall claude` at the CLI edge: a dry run names the .pgx.toml it would write (and writes
// nothing); uninstall deletes a settings file that pgx's removal left empty (and an emptied .claude/), nothing else.
// Project scope is portable (decisions/111-portable-project-install.md): the committed .claude/settings.json names
// no path of this machine, and a teammate's clone of it behaves as decided, with pgx on PATH or without.
import { randomUUID } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, sessionStart } from '../helpers/hook-payloads.js';
import { nodeSql } from '../helpers/node-client.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A project (a package.json) with no .pgx.toml yet, and a HOME of its own beside it. */
function bareDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-inst-'));
  const home = mkdtempSync(join(tmpdir(), 'pgx-inst-home-'));
  dirs.push(dir, home);
  writeFileSync(join(dir, 'package.json'), '{}\n');
  return {
    dir,
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: home, PGX_HOME: join(dir, '.pgx-home') } as NodeJS.ProcessEnv,
  };
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
  const r = spawnSync('/bin/sh', ['-c', command], {
    cwd,
    env: { ...env, CLAUDE_PROJECT_DIR: cwd, CLAUDECODE: '1', AI_AGENT: 'claude-code_2-1-328_harness' },
    input: JSON.stringify(payload),
    encoding: 'utf8',
    timeout: 60_000,
  });
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
    if (!pgxHere)
      expect(inst.stdout).toContain(
        'pgx is not on PATH here: the hooks find it there, and refuse every subagent Bash command until it is',
      );
    expect(existsSync(join(p.dir, '.claude', 'settings.json'))).toBe(true);
    expect(existsSync(join(p.dir, '.claude', 'settings.local.json'))).toBe(true);
    const u = jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], p));
    // and the .pgx.toml install wrote, unchanged, with no pgx hooks left to read it
    expect(u).toMatchObject({
      changed: true,
      file_removed: true,
      local: { changed: true, file_removed: true },
      config_removed: join(p.dir, '.pgx.toml'),
      config_kept: null,
    });
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
    expect(existsSync(join(p.dir, '.pgx.toml'))).toBe(false);
    expect(jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], p))).toMatchObject({ changed: false }); // idempotent

    const q = bareDir();
    mkdirSync(join(q.dir, '.claude'));
    writeFileSync(join(q.dir, '.claude', 'settings.json'), JSON.stringify({ model: 'opus' }));
    writeFileSync(
      join(q.dir, '.claude', 'settings.local.json'),
      JSON.stringify({ permissions: { allow: ['Bash(ls:*)'] } }),
    );
    expect(runPgx(['agent', 'install', 'claude'], q).status).toBe(0);
    expect(jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], q))).toMatchObject({
      changed: true,
      file_removed: false,
      local: { changed: true, file_removed: false },
    });
    expect(JSON.parse(readFileSync(join(q.dir, '.claude', 'settings.json'), 'utf8'))).toEqual({ model: 'opus' });
    expect(JSON.parse(readFileSync(join(q.dir, '.claude', 'settings.local.json'), 'utf8'))).toEqual({
      permissions: { allow: ['Bash(ls:*)'] },
    });
  });

  it('project scope, pgx on PATH, in a git clone: no absolute path of this machine in settings.json; the rules in the git-ignored settings.local.json', () => {
    const p = makeProject();
    dirs.push(p.dir);
    const bin = pgxBin(p.dir);
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}` };
    execFileSync('git', ['init', '-q'], { cwd: p.dir });
    const r = runPgx(['agent', 'install', 'claude'], { cwd: p.dir, env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `updated: ${join(p.dir, '.claude', 'settings.json')} (no path of this machine: commit it)`,
    );
    expect(r.stdout).toContain(
      `this machine's permission rules: ${join(p.dir, '.claude', 'settings.local.json')} (kept out of git by ${join(p.dir, '.git', 'info', 'exclude')})`,
    );
    const text = readFileSync(join(p.dir, '.claude', 'settings.json'), 'utf8');
    for (const machinePath of [realpathSync(LAUNCHER), LAUNCHER, bin, p.dir, realpathSync(p.dir), tmpdir()])
      expect(text).not.toContain(machinePath);
    expect(text).not.toMatch(/(^|[\s"'=])\/[A-Za-z]/m); // no absolute path of any kind (a `/dev/null` redirect aside)
    const local = JSON.parse(readFileSync(join(p.dir, '.claude', 'settings.local.json'), 'utf8'));
    expect(local).toEqual({
      permissions: {
        allow: [`Bash(${realpathSync(LAUNCHER)} agent exec --agent * --cwd ${p.dir} -- *)`, 'Bash(exit)'],
      },
    });
    // what `git add -A` would commit: the shared file and .pgx.toml, never this machine's rules
    expect(
      execFileSync('git', ['status', '--porcelain', '-uall'], { cwd: p.dir, encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('.claude')),
    ).toEqual(['?? .claude/settings.json']);
    // doctor reads the new layout: hooks via PATH, rules from settings.local.json
    const d = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env }));
    const byName = Object.fromEntries(d.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.hooks).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining(`launcher pgx on PATH: ${realpathSync(LAUNCHER)}`),
    });
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
    expect(
      runPgx(['agent', 'install', 'claude'], {
        cwd: p.dir,
        env: { ...p.env, PATH: `${pgxBin(p.dir)}:${process.env.PATH}` },
      }).status,
    ).toBe(0);
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
    expect(JSON.parse(start.stdout).systemMessage).toMatch(
      /^pgx is not on PATH on this machine: every subagent Bash command is refused/,
    );
    const denied = runHook(
      settings,
      'PreToolUse',
      preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }),
      clone,
      noPgx,
    );
    expect(denied.status).toBe(2); // Claude Code blocks the call and gives the model stderr
    expect(denied.stderr).toContain('this subagent Bash command is refused');
    const parent = runHook(settings, 'PreToolUse', preToolUseBash(s, 'ls'), clone, noPgx);
    expect([parent.status, parent.stdout, parent.stderr]).toEqual([0, '', '']);

    // The teammate installs pgx (on PATH now), before running `pgx agent install claude`: the hooks route, and the
    // routed command asks (no rule of theirs yet), which the doctor names with its fix.
    const withPgx = { ...p.env, HOME: mate, PGX_HOME: join(mate, '.pgx'), PATH: `${pgxBin(mate)}:${process.env.PATH}` };
    const routed = runHook(
      settings,
      'PreToolUse',
      preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }),
      clone,
      withPgx,
    );
    expect(routed.status, routed.stderr).toBe(0);
    const command: string = JSON.parse(routed.stdout).hookSpecificOutput.updatedInput.command;
    expect(command.startsWith(`'${realpathSync(LAUNCHER)}' agent exec --agent ${agent} --cwd ${clone} -- `)).toBe(true);
    const branch = /# pgx-routed (\S+)\n/.exec(command)![1]!;
    const doctor = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: clone, env: withPgx }));
    expect(doctor.checks.find((c: { name: string }) => c.name === 'permissions')).toMatchObject({
      status: 'warn',
      fix: 'pgx agent install claude',
      detail: expect.stringContaining(`no wrapper rule for ${realpathSync(LAUNCHER)} in ${clone}`),
    });
    const mine = runPgx(['agent', 'install', 'claude', '--json'], { cwd: clone, env: withPgx });
    expect(jsonOf(mine)).toMatchObject({ added: [], updated: [], local: { changed: true } });
    expect(readFileSync(join(clone, '.claude', 'settings.json'), 'utf8')).toBe(shared); // nothing to commit
    expect(JSON.parse(readFileSync(join(clone, '.claude', 'settings.local.json'), 'utf8')).permissions.allow).toEqual([
      `Bash(${realpathSync(LAUNCHER)} agent exec --agent * --cwd ${clone} -- *)`,
      'Bash(exit)',
    ]);
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

// Codex's project scope is portable too (decisions/206-codex-portable-project-install.md): .codex/hooks.json finds pgx
// on PATH, so its text, and the trusted_hash Codex checks, are the same in every checkout; each user's install only
// records the trust in their own $CODEX_HOME/config.toml. The real binary: tests/e2e/codex-portable.test.ts.
type CodexHooks = { hooks: Record<string, { matcher?: string; hooks: { command: string; timeout?: number }[] }[]> };
const codexHooksOf = (dir: string): CodexHooks => JSON.parse(readFileSync(join(dir, '.codex', 'hooks.json'), 'utf8'));
/** `[hooks.state."<file>:<event>:<g>:<h>"] trusted_hash`, by the key's position part (the file differs by checkout). */
const trustOf = (codexHome: string) => {
  const file = join(codexHome, 'config.toml');
  if (!existsSync(file)) return {};
  return Object.fromEntries(
    [
      ...readFileSync(file, 'utf8').matchAll(
        /^\[hooks\.state\."([^"]*):([a-z_]+:\d+:\d+)"\]\ntrusted_hash = "(sha256:[0-9a-f]+)"$/gm,
      ),
    ].map((m) => [m[2]!, { file: m[1]!, hash: m[3]! }]),
  );
};
/** Runs one hook as Codex does: the command string in a shell, the payload on stdin. */
function runCodexHook(hooks: CodexHooks, event: string, payload: object, cwd: string, env: NodeJS.ProcessEnv) {
  const command = hooks.hooks[event]!.at(-1)!.hooks[0]!.command;
  const r = spawnSync('/bin/sh', ['-c', command], {
    cwd,
    env,
    input: JSON.stringify(payload),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
const codexPre = (cwd: string, command: string, agentId?: string) => ({
  session_id: randomUUID(),
  cwd,
  transcript_path: null,
  turn_id: randomUUID(),
  model: 'fake-model',
  hook_event_name: 'PreToolUse',
  ...(agentId ? { agent_id: agentId, agent_type: 'default' } : {}),
  permission_mode: 'bypassPermissions',
  tool_name: 'Bash',
  tool_input: { command },
  tool_use_id: `call_${randomUUID()}`,
});

describe('agent install / uninstall codex --scope project (CLI)', () => {
  it('two checkouts, two CODEX_HOMEs, two pgx installs: byte-identical .codex/hooks.json and the same trusted_hash; the second install only records trust', () => {
    const a = bareDir();
    const aEnv = { ...a.env, PATH: `${pgxBin(a.dir)}:${process.env.PATH}`, CODEX_HOME: join(a.dir, 'codex-home') };
    const ia = jsonOf(runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: a.dir, env: aEnv }));
    expect(ia).toMatchObject({
      scope: 'project',
      hooks_launcher: 'pgx',
      pgx_on_path: realpathSync(LAUNCHER),
      added: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'SubagentStart', 'SubagentStop'],
    });
    const text = readFileSync(join(a.dir, '.codex', 'hooks.json'), 'utf8');
    expect(text).not.toContain(a.dir);
    expect(text).not.toContain(realpathSync(LAUNCHER));
    for (const [, groups] of Object.entries(codexHooksOf(a.dir).hooks))
      expect(groups[0]!.hooks[0]!.command).toMatch(
        /^command -v pgx >\/dev\/null 2>&1 && (exec pgx|\{ pgx) agent codex-hook /,
      );
    // the fail-closed tail of the absolute form is kept
    expect(codexHooksOf(a.dir).hooks.PreToolUse![0]!.hooks[0]!.command).toContain(
      'agent codex-hook pre-tool-use || { echo "pgx: the hook failed',
    );

    // B: a clone at another path (committed files only), another HOME, CODEX_HOME, and pgx in another bin directory.
    const b = bareDir();
    mkdirSync(join(b.dir, '.codex'));
    cpSync(join(a.dir, '.pgx.toml'), join(b.dir, '.pgx.toml'));
    cpSync(join(a.dir, '.codex', 'hooks.json'), join(b.dir, '.codex', 'hooks.json'));
    const bEnv = {
      ...b.env,
      PATH: `${pgxBin(join(b.dir, 'elsewhere'))}:${process.env.PATH}`,
      CODEX_HOME: join(b.dir, 'codex-home'),
    };
    const dry = jsonOf(
      runPgx(['agent', 'install', 'codex', '--scope', 'project', '--dry-run', '--json'], { cwd: b.dir, env: bEnv }),
    );
    expect(dry).toMatchObject({
      dry_run: true,
      added: [],
      updated: [],
      trusted: expect.arrayContaining([expect.stringContaining(`${b.dir}/.codex/hooks.json:pre_tool_use:0:0`)]),
    });
    expect(existsSync(join(bEnv.CODEX_HOME, 'config.toml'))).toBe(false); // a dry run writes nothing
    const human = runPgx(['agent', 'install', 'codex', '--scope', 'project'], { cwd: b.dir, env: bEnv });
    expect(human.stdout).toContain(
      `unchanged: ${join(b.dir, '.codex', 'hooks.json')} (no path of this machine: commit it)`,
    );
    expect(human.stdout).toContain('trusted in');
    expect(readFileSync(join(b.dir, '.codex', 'hooks.json'), 'utf8')).toBe(text);
    const ta = trustOf(aEnv.CODEX_HOME);
    const tb = trustOf(bEnv.CODEX_HOME);
    expect(Object.keys(ta)).toHaveLength(5);
    expect(Object.fromEntries(Object.entries(tb).map(([k, v]) => [k, v.hash]))).toEqual(
      Object.fromEntries(Object.entries(ta).map(([k, v]) => [k, v.hash])),
    );
    expect(Object.values(tb).map((v) => v.file)).toEqual(Array(5).fill(join(b.dir, '.codex', 'hooks.json'))); // each user's trust names their own checkout
    // idempotent: nothing changes on a second run
    const config = readFileSync(join(bEnv.CODEX_HOME, 'config.toml'), 'utf8');
    expect(
      jsonOf(runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: b.dir, env: bEnv })),
    ).toMatchObject({ changed: false, trusted: [] });
    expect(readFileSync(join(bEnv.CODEX_HOME, 'config.toml'), 'utf8')).toBe(config);
  });

  it('run as Codex runs them: pgx on PATH routes a subagent; no pgx on PATH refuses a subagent (exit 2) and lets the parent run; a pgx that fails blocks', async () => {
    const p = makeProject();
    dirs.push(p.dir);
    const codexHome = join(p.dir, 'codex-home');
    expect(
      runPgx(['agent', 'install', 'codex', '--scope', 'project'], {
        cwd: p.dir,
        env: { ...p.env, CODEX_HOME: codexHome },
      }).status,
    ).toBe(0);
    const hooks = codexHooksOf(p.dir);
    const agent = randomUUID();
    const noPgx = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: p.dir };
    expect(spawnSync('/bin/sh', ['-c', 'command -v pgx'], { env: noPgx }).status).not.toBe(0);
    const denied = runCodexHook(hooks, 'PreToolUse', codexPre(p.dir, 'psql -c "select 1"', agent), p.dir, noPgx);
    expect([denied.status, denied.stdout]).toEqual([2, '']); // exit 2: Codex blocks, stderr is the model's reason
    expect(denied.stderr).toContain('pgx is not on PATH on this machine: this subagent shell command is refused');
    // a parent command quoting the key inside its string is still the parent's (JSON escapes the quotes)
    for (const cmd of ['ls', 'echo "agent_id" here'])
      expect(Object.values(runCodexHook(hooks, 'PreToolUse', codexPre(p.dir, cmd), p.dir, noPgx))).toEqual([0, '', '']);
    const start = runCodexHook(
      hooks,
      'SessionStart',
      { session_id: randomUUID(), cwd: p.dir, hook_event_name: 'SessionStart', source: 'startup' },
      p.dir,
      noPgx,
    );
    expect(start.status).toBe(0);
    expect(JSON.parse(start.stdout)).toMatchObject({
      systemMessage: expect.stringMatching(
        /^pgx is not on PATH on this machine: every subagent shell command is refused/,
      ),
      hookSpecificOutput: { hookEventName: 'SessionStart' },
    });
    const subStart = runCodexHook(
      hooks,
      'SubagentStart',
      { session_id: randomUUID(), cwd: p.dir, hook_event_name: 'SubagentStart', agent_id: agent },
      p.dir,
      noPgx,
    );
    expect(JSON.parse(subStart.stdout).hookSpecificOutput.additionalContext).toContain(
      'your shell commands will be refused',
    );
    for (const e of ['UserPromptSubmit', 'SubagentStop'])
      expect(Object.values(runCodexHook(hooks, e, { session_id: randomUUID(), cwd: p.dir }, p.dir, noPgx))).toEqual([
        0,
        '',
        '',
      ]);

    // A `pgx` on PATH that fails (exit 1): the PreToolUse hook blocks, as the absolute form's `|| exit 2` does.
    const broken = join(p.dir, 'broken-bin');
    mkdirSync(broken);
    writeFileSync(join(broken, 'pgx'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const failed = runCodexHook(hooks, 'PreToolUse', codexPre(p.dir, 'ls'), p.dir, {
      ...noPgx,
      PATH: `${broken}:${noPgx.PATH}`,
    });
    expect(failed.status).toBe(2);
    expect(failed.stderr).toContain('pgx: the hook failed, so this command was not routed');

    // pgx on PATH: the subagent's command is rewritten to its branch (codex exec's bypassPermissions: allow).
    const withPgx = { ...p.env, PATH: `${pgxBin(p.dir)}:${process.env.PATH}`, SHELL: '/bin/bash' };
    const routed = runCodexHook(
      hooks,
      'PreToolUse',
      codexPre(p.dir, nodeSql('select current_database()'), agent),
      p.dir,
      withPgx,
    );
    expect(routed.status, routed.stderr).toBe(0);
    const out = JSON.parse(routed.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('allow');
    expect(
      out.updatedInput.command.startsWith(`'${realpathSync(LAUNCHER)}' agent exec --agent ${agent} --cwd ${p.dir} -- `),
    ).toBe(true);
    const branch = /# pgx-routed (\S+)\n/.exec(out.updatedInput.command)![1]!;
    expect(
      execFileSync('/bin/bash', ['-c', out.updatedInput.command], {
        cwd: p.dir,
        env: withPgx,
        encoding: 'utf8',
      }).trim(),
    ).toBe(branch);
    expect(runPgx(['agent', 'down', '--branch', branch, '--now'], { cwd: p.dir, env: withPgx }).status).toBe(0);
  });

  it("uninstall --scope project removes exactly pgx's hooks and trust entries; an old absolute project install is made portable; user scope keeps the absolute launcher", () => {
    const p = bareDir();
    const env = { ...p.env, CODEX_HOME: join(p.dir, 'codex-home') };
    mkdirSync(join(p.dir, '.codex'));
    // the user's own hook first, trusted by the user (its hash as Codex records it)
    const own = {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard', timeout: 5 }] }] },
    };
    writeFileSync(join(p.dir, '.codex', 'hooks.json'), JSON.stringify(own, null, 2) + '\n');
    mkdirSync(env.CODEX_HOME);
    const ownKey = `${p.dir}/.codex/hooks.json:pre_tool_use:0:0`;
    writeFileSync(
      join(env.CODEX_HOME, 'config.toml'),
      `# mine\n[hooks.state.${JSON.stringify(ownKey)}]\ntrusted_hash = "sha256:0000"\n`,
    );
    expect(runPgx(['agent', 'install', 'codex', '--scope', 'project'], { cwd: p.dir, env }).status).toBe(0);
    expect(codexHooksOf(p.dir).hooks.PreToolUse!.map((g) => g.hooks[0]!.command.slice(0, 14))).toEqual([
      'my-guard',
      'command -v pgx',
    ]);
    expect(Object.keys(trustOf(env.CODEX_HOME))).toHaveLength(6);
    const dry = jsonOf(
      runPgx(['agent', 'uninstall', 'codex', '--scope', 'project', '--dry-run', '--json'], { cwd: p.dir, env }),
    );
    expect(dry).toMatchObject({ dry_run: true, changed: true, untrusted: expect.any(Array) });
    expect(dry.untrusted).toHaveLength(5);
    expect(Object.keys(trustOf(env.CODEX_HOME))).toHaveLength(6); // a dry run writes nothing
    const u = jsonOf(runPgx(['agent', 'uninstall', 'codex', '--scope', 'project', '--json'], { cwd: p.dir, env }));
    expect(u.changed).toBe(true);
    expect([...u.removed].sort()).toEqual([
      'PreToolUse',
      'SessionStart',
      'SubagentStart',
      'SubagentStop',
      'UserPromptSubmit',
    ]);
    expect(codexHooksOf(p.dir)).toEqual(own);
    expect(readFileSync(join(env.CODEX_HOME, 'config.toml'), 'utf8')).toBe(
      `# mine\n[hooks.state.${JSON.stringify(ownKey)}]\ntrusted_hash = "sha256:0000"\n`,
    );
    expect(
      jsonOf(runPgx(['agent', 'uninstall', 'codex', '--scope', 'project', '--json'], { cwd: p.dir, env })),
    ).toMatchObject({ changed: false });

    // An older pgx's project install named the launcher: install rewrites it to the portable form and re-trusts it.
    const old = {
      hooks: {
        SubagentStop: [
          { hooks: [{ type: 'command', command: `'/old/pgx.js' agent codex-hook subagent-stop`, timeout: 30 }] },
        ],
      },
    };
    writeFileSync(join(p.dir, '.codex', 'hooks.json'), JSON.stringify(old, null, 2) + '\n');
    const up = jsonOf(runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: p.dir, env }));
    expect(up.updated).toEqual(['SubagentStop']);
    expect(readFileSync(join(p.dir, '.codex', 'hooks.json'), 'utf8')).not.toContain('/old/pgx.js');
    expect(trustOf(env.CODEX_HOME)['subagent_stop:0:0']).toBeDefined();
    expect(runPgx(['agent', 'uninstall', 'codex', '--scope', 'project'], { cwd: p.dir, env }).status).toBe(0);

    // user scope: $CODEX_HOME/hooks.json names this machine's launcher
    expect(jsonOf(runPgx(['agent', 'install', 'codex', '--json'], { cwd: p.dir, env }))).toMatchObject({
      scope: 'user',
      hooks_launcher: realpathSync(LAUNCHER),
    });
    const user = JSON.parse(readFileSync(join(env.CODEX_HOME, 'hooks.json'), 'utf8')) as CodexHooks;
    expect(user.hooks.SessionStart![0]!.hooks[0]!.command).toBe(
      `'${realpathSync(LAUNCHER)}' agent codex-hook session-start`,
    );
  });
});

describe('install never makes a directory a project by accident; uninstall takes back the .pgx.toml it wrote (decision 421)', () => {
  it('refuses $HOME, a directory with no marker, and a stray ~/.pgx.toml above a project, writing nothing; --here and --scope user', () => {
    const p = bareDir();
    const home = p.env.HOME!;
    const inHome = runPgx(['agent', 'install', 'claude', '--json'], { cwd: home, env: p.env });
    expect(inHome.status).toBe(2);
    expect(jsonOf(inHome).error).toMatchObject({
      code: 'NOT_A_PROJECT',
      hint: expect.stringContaining('pgx agent install claude --scope user'),
    });
    expect(readdirSync(home)).toEqual([]); // nothing written, not even by a dry run
    expect(runPgx(['agent', 'install', 'claude', '--dry-run'], { cwd: home, env: p.env }).status).toBe(2);
    const codex = runPgx(['agent', 'install', 'codex', '--scope', 'project'], {
      cwd: home,
      env: { ...p.env, CODEX_HOME: join(p.dir, 'codex-home') },
    });
    expect(codex.status).toBe(2);
    expect(codex.stderr).toContain('pgx agent install codex --here');

    const bare = mkdtempSync(join(tmpdir(), 'pgx-inst-bare-'));
    dirs.push(bare);
    const r = runPgx(['agent', 'install', 'claude'], { cwd: bare, env: p.env });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${bare} has no project marker`);
    expect(readdirSync(bare)).toEqual([]);
    // --scope user: the user's own file, never refused; no .pgx.toml where there is no project
    const user = jsonOf(
      runPgx(['agent', 'install', 'claude', '--scope', 'user', '--no-verify', '--json'], { cwd: bare, env: p.env }),
    );
    expect(user).toMatchObject({
      config_written: null,
      config_skipped: expect.stringContaining(`${bare} is not a project`),
    });
    expect(existsSync(join(home, '.claude', 'settings.json'))).toBe(true);
    expect(readdirSync(bare)).toEqual([]);
    expect(runPgx(['agent', 'uninstall', 'claude', '--scope', 'user'], { cwd: bare, env: p.env }).status).toBe(0);
    // --here: meant
    const here = jsonOf(
      runPgx(['agent', 'install', 'claude', '--here', '--no-verify', '--json'], { cwd: bare, env: p.env }),
    );
    expect(here.config_written).toBe(join(bare, '.pgx.toml'));

    // An older pgx's ~/.pgx.toml above a real project: refused, naming that file
    const stray = mkdtempSync(join(tmpdir(), 'pgx-inst-strayhome-'));
    dirs.push(stray);
    writeFileSync(join(stray, '.pgx.toml'), '[project]\nname = "newbie"\n');
    const app = join(stray, 'code', 'app');
    mkdirSync(join(app, '.git'), { recursive: true });
    const s = runPgx(['agent', 'install', 'claude'], { cwd: app, env: { ...p.env, HOME: stray } });
    expect(s.status).toBe(2);
    expect(s.stderr).toContain(`${app} resolves to it through ${join(stray, '.pgx.toml')}`);
    expect(existsSync(join(stray, '.claude'))).toBe(false);
  });

  it('uninstall deletes the .pgx.toml install wrote only while unchanged and no pgx hooks are left; says why it keeps it', () => {
    const p = bareDir();
    const toml = join(p.dir, '.pgx.toml');
    const codexEnv = { ...p.env, CODEX_HOME: join(p.dir, 'codex-home') };
    expect(runPgx(['agent', 'install', 'claude', '--no-verify'], p).status).toBe(0);
    expect(readFileSync(toml, 'utf8')).toContain('# Written by `pgx agent install`');
    expect(runPgx(['agent', 'install', 'codex', '--scope', 'project'], { ...p, env: codexEnv }).status).toBe(0);
    // Claude's hooks go; Codex's still read it
    const u1 = jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], { ...p, env: codexEnv }));
    expect(u1).toMatchObject({
      config_removed: null,
      config_kept: expect.stringContaining('.codex/hooks.json still use it'),
    });
    expect(existsSync(toml)).toBe(true);
    const dry = jsonOf(
      runPgx(['agent', 'uninstall', 'codex', '--scope', 'project', '--dry-run', '--json'], { ...p, env: codexEnv }),
    );
    expect(dry.config_kept).toContain('.codex/hooks.json still use it'); // a dry run removes no hook, so they still would
    const u2 = runPgx(['agent', 'uninstall', 'codex', '--scope', 'project'], { ...p, env: codexEnv });
    expect(u2.stdout).toContain(
      `deleted ${toml} (written by \`pgx agent install\`, unchanged, and no pgx hooks left to read it)`,
    );
    expect(existsSync(toml)).toBe(false);

    // changed by the user: kept
    expect(runPgx(['agent', 'install', 'claude', '--no-verify'], p).status).toBe(0);
    writeFileSync(toml, readFileSync(toml, 'utf8').replace('idle_ttl = "2h"', 'idle_ttl = "4h"'));
    const u3 = runPgx(['agent', 'uninstall', 'claude'], p);
    expect(u3.stdout).toContain(`kept ${toml}: changed since \`pgx agent install\` wrote it`);
    expect(existsSync(toml)).toBe(true);
  });
});
