import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminEnv, jsonOf, LAUNCHER, makeProject, REPO, runPgx, sql } from '../helpers/pgx.js';
import { needs } from '../helpers/client-programs.js';

type Check = { name: string; status: 'ok' | 'warn' | 'fail' | 'skip'; detail: string; fix?: string };
type Report = { ok: boolean; checks: Check[] };

function doctor(p: ReturnType<typeof makeProject>): {
  status: number | null;
  report: Report;
  byName: Record<string, Check>;
} {
  const r = runPgx(['agent', 'doctor', '--json'], p);
  const report = jsonOf<Report>(r);
  return { status: r.status, report, byName: Object.fromEntries(report.checks.map((c) => [c.name, c])) };
}

/** Runs a doctor "fix" command in a shell, the admin password in the environment only (as a user would). */
function runFix(fix: string): void {
  const r = spawnSync('sh', ['-c', fix], { env: { ...adminEnv(), PGDATABASE: undefined }, encoding: 'utf8' });
  expect(r.status, `${fix}\n${r.stderr}`).toBe(0);
}

const cleanup: string[] = [];
afterAll(async () => {
  for (const db of cleanup) await sql(`DROP DATABASE IF EXISTS "${db}"`);
});

/** pgx on the project's PATH, as an npm install puts it: the project-scope hooks find it there. */
function pgxOnPath(p: ReturnType<typeof makeProject>): void {
  const bin = join(p.dir, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(LAUNCHER, join(bin, 'pgx'));
  p.env.PATH = `${bin}:${process.env.PATH}`;
}

/** What accepting Claude Code's trust dialog for the project records in ~/.claude.json. */
function trust(p: ReturnType<typeof makeProject>): void {
  writeFileSync(
    join(p.env.HOME!, '.claude.json'),
    JSON.stringify({ projects: { [p.dir]: { hasTrustDialogAccepted: true } } }),
  );
}

describe('pgx agent doctor: will routed commands prompt, and why', () => {
  it("an older install's blanket rule fails, naming it; install narrows it and says so", () => {
    const p = makeProject();
    mkdirSync(join(p.dir, '.claude'));
    const blanket = `Bash('${realpathSync(LAUNCHER)}' agent exec:*)`;
    writeFileSync(
      join(p.dir, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { allow: [blanket], deny: ['Bash(rm:*)'] } }),
    );
    trust(p);
    let d = doctor(p);
    expect(d.byName.permissions).toMatchObject({
      status: 'fail',
      fix: 'pgx agent install claude (replaces it with the narrow rules)',
    });
    expect(d.byName.permissions!.detail).toContain(blanket);
    expect(d.status).toBe(8);
    const install = runPgx(['agent', 'install', 'claude'], p);
    expect(install.stdout).toContain(`removed the blanket rule ${blanket}`);
    d = doctor(p);
    expect(d.byName.permissions!.status, d.byName.permissions!.detail).toBe('ok');
  });

  it('no rules (--no-rules): warns that every routed command asks, with the install command', () => {
    const p = makeProject();
    expect(runPgx(['agent', 'install', 'claude', '--no-rules'], p).status).toBe(0);
    trust(p);
    const c = doctor(p).byName.permissions!;
    expect(c).toMatchObject({ status: 'warn', fix: 'pgx agent install claude' });
    expect(c.detail).toMatch(/no wrapper rule .* every routed subagent command asks/);
  });

  it('project-scope rules in an untrusted workspace: warns that they are ignored until trusted', () => {
    const p = makeProject();
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    const c = doctor(p).byName.permissions!;
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('ignores project-scope rules until the workspace is trusted');
    expect(c.fix).toContain('accept the trust dialog');
    // A user-scope install (a HOME of its own here: makeProject's HOME is the project) needs no trust.
    expect(runPgx(['agent', 'uninstall', 'claude'], p).status).toBe(0);
    const user = { ...p, env: { ...p.env, HOME: mkdtempSync(join(tmpdir(), 'pgx-home-')) } };
    expect(runPgx(['agent', 'install', 'claude', '--scope', 'user'], user).status).toBe(0);
    expect(doctor(user).byName.permissions!.status, doctor(user).byName.permissions!.detail).toBe('ok');
  });

  it('a Claude Code version the rewrite is not verified on (from the hook log): warns, says what happens and how to opt in', () => {
    const p = makeProject();
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    trust(p);
    const payload = JSON.stringify({
      session_id: 's-doctor',
      cwd: p.dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'true' },
      permission_mode: 'acceptEdits',
    });
    const hook = runPgx(['agent', 'hook', 'pre-tool-use'], {
      ...p,
      input: payload,
      env: { ...p.env, AI_AGENT: 'claude-code_2-9-1_harness', CLAUDE_PROJECT_DIR: p.dir },
    });
    expect(hook.status).toBe(0);
    const c = doctor(p).byName.permissions!;
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('last ran under Claude Code 2.9.1');
    expect(c.detail).toContain('mode last seen: acceptEdits');
    expect(c.fix).toContain(`set [agent] unverified_claude_code = "rules" in ${join(p.dir, '.pgx.toml')}`); // the file, not ".pgx.toml"

    // Another project (same pgx home, no hook call of its own): the version is the machine's, the mode is not its.
    const other = makeProject();
    other.env.PGX_HOME = p.env.PGX_HOME;
    expect(runPgx(['agent', 'install', 'claude'], other).status).toBe(0);
    const o = doctor(other).byName.permissions!;
    expect(o.detail).not.toContain('acceptEdits');
    expect(o.detail).not.toContain('mode last seen');
  });
});

describe('pgx agent doctor', () => {
  it('a healthy project: every check ok, exit 0, one line per check in text mode', () => {
    const p = makeProject();
    pgxOnPath(p);
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    trust(p);
    expect(runPgx(['agent', 'exec', '--id', 'd1', '--keep', '--', 'true'], p).status).toBe(0);
    const d = doctor(p);
    expect(d.status, JSON.stringify(d.report, null, 1)).toBe(0);
    expect(d.report.ok).toBe(true);
    expect(d.report.checks.map((c) => c.name)).toEqual([
      'config',
      'server',
      'role',
      'roles',
      'template',
      'origin',
      'mask',
      'pool',
      'disk',
      'client-tools',
      'broker',
      'hooks',
      'permissions',
      'mcp',
      'hook-log',
      'branches',
      'orphans',
      'frozen-copies',
      'session-forks',
      'guards',
      'env-files',
    ]);
    for (const name of [
      'config',
      'server',
      'role',
      'roles',
      'template',
      'pool',
      'broker',
      'hooks',
      'permissions',
      'mcp',
      'hook-log',
      'branches',
      'session-forks',
      'guards',
    ]) {
      // roles is server-wide: branch roles other tests left behind on this shared server make it warn, rightly
      const excused = name === 'roles' && d.byName[name]!.detail.includes('left without a branch');
      expect(d.byName[name]!.status, `${name}: ${d.byName[name]!.detail}`).toBe(excused ? 'warn' : 'ok');
    }
    expect(d.byName.hooks!.detail).toContain('6/6');
    expect(d.byName.hooks!.detail).toContain(`launcher pgx on PATH: ${realpathSync(LAUNCHER)}`);
    expect(d.byName.permissions!.detail).toContain(
      `wrapper rule and Bash(exit) in ${join(p.dir, '.claude', 'settings.local.json')}, workspace trusted`,
    );
    expect(d.byName.branches!.detail).toMatch(/1 active, 0 retiring, 0 past deadline/);
    expect(d.byName.pool!.detail).toBe('off ([agent] pool = 0)'); // the test projects run without a pool (PGX_POOL=0)
    expect(d.byName.guards!.detail).toBe(
      'client_connection_check_interval=5000ms, idle_in_transaction_session_timeout=900000ms, statement_timeout=3600000ms on all 1 active branch(es)',
    );
    expect(d.byName.server!.detail).toMatch(/^PostgreSQL \d+\.\d+/);
    // Orphans are server-wide: another test may have left one; never a fail.
    expect(['ok', 'warn']).toContain(d.byName.orphans!.status);

    const text = runPgx(['agent', 'doctor'], p);
    expect(text.status).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines.length).toBe(d.report.checks.length + 1); // one per check, then the tally
    expect(lines[0]).toMatch(/^ok\s+config\s+/);
  });

  it('an unreachable server: server fails with a fix, exit 8, the checks that need no server still run', () => {
    const p = makeProject();
    p.env.PGX_DATABASE_URL = 'postgresql://pgx:nope@127.0.0.1:1/postgres';
    const d = doctor(p);
    expect(d.status).toBe(8);
    expect(d.report.ok).toBe(false);
    expect(d.byName.server).toMatchObject({ status: 'fail' });
    expect(d.byName.server!.detail).toContain('127.0.0.1:1');
    expect(d.byName.server!.fix).toBeTruthy();
    for (const name of ['role', 'template', 'pool', 'branches', 'orphans', 'guards'])
      expect(d.byName[name]!.status).toBe('skip');
    expect(d.byName.config!.status).toBe('ok');
    expect(d.byName.hooks).toMatchObject({ status: 'fail', fix: 'pgx agent install claude' });
    expect(d.byName['hook-log']!.status).toBe('ok');
  });

  it('no [server] url and no local server yet: reports it with `pgx local up`, and does not start one itself', () => {
    const p = makeProject();
    delete p.env.PGX_DATABASE_URL;
    const d = doctor(p);
    const server = d.byName.server!;
    if (server.status === 'warn')
      expect(server).toMatchObject({ fix: 'pgx local up' }); // binaries found
    else expect(server.status).toBe('fail'); // no PostgreSQL binaries on this machine
    expect(server.detail).toMatch(/no \[server\] url/);
    for (const name of ['role', 'template', 'pool', 'branches', 'orphans', 'guards'])
      expect(d.byName[name]!.status).toBe('skip');
    expect(existsSync(join(p.home, 'local', 'state.json'))).toBe(false);
  });

  it('detects an older 4-entry install, and its fix makes it 6/6', () => {
    const p = makeProject();
    pgxOnPath(p);
    const entry = (cli: string, matcher?: string) => [
      {
        ...(matcher ? { matcher } : {}),
        hooks: [{ type: 'command', command: `${LAUNCHER} agent hook ${cli}`, timeout: 30 }],
      },
    ];
    mkdirSync(join(p.dir, '.claude'));
    writeFileSync(
      join(p.dir, '.claude', 'settings.json'),
      JSON.stringify({
        hooks: {
          SessionStart: entry('session-start'),
          UserPromptSubmit: entry('user-prompt-submit'),
          PreToolUse: entry('pre-tool-use', 'Bash'),
          SessionEnd: entry('session-end'),
        },
      }),
    );
    const d = doctor(p);
    expect(d.status).toBe(8);
    expect(d.byName.hooks!.status).toBe('fail');
    expect(d.byName.hooks!.detail).toMatch(/older 4-entry/);
    expect(d.byName.hooks!.detail).toContain('SubagentStart, SubagentStop');
    expect(d.byName.hooks!.fix).toBe('pgx agent install claude');
    expect(runPgx(d.byName.hooks!.fix!.split(' ').slice(1), p).status).toBe(0);
    expect(doctor(p).byName.hooks).toMatchObject({ status: 'ok' });
  });

  it('a PreToolUse entry without "onFailure": "block" (an older pgx) warns that it fails open; install adds it', () => {
    const p = makeProject();
    pgxOnPath(p);
    expect(runPgx(['agent', 'install', 'claude', '--no-verify'], p).status).toBe(0);
    const file = join(p.dir, '.claude', 'settings.json');
    const s = JSON.parse(readFileSync(file, 'utf8'));
    expect(s.hooks.PreToolUse[0].hooks[0].onFailure).toBe('block');
    expect(doctor(p).byName.hooks!.status).toBe('ok');
    delete s.hooks.PreToolUse[0].hooks[0].onFailure;
    writeFileSync(file, JSON.stringify(s));
    const d = doctor(p);
    expect(d.byName.hooks).toMatchObject({ status: 'warn', fix: 'pgx agent install claude' });
    expect(d.byName.hooks!.detail).toContain(`the PreToolUse entry in ${file} has no "onFailure": "block"`);
    expect(runPgx(['agent', 'install', 'claude', '--no-verify'], p).status).toBe(0);
    expect(doctor(p).byName.hooks!.status).toBe('ok');
  });

  it('a claude on PATH older than 2.1.295 (it ignores onFailure) warns; 2.1.295 and later do not', () => {
    const p = makeProject();
    pgxOnPath(p);
    expect(runPgx(['agent', 'install', 'claude', '--no-verify'], p).status).toBe(0);
    // A stand-in that answers only --version, as every release does ("2.1.294 (Claude Code)").
    const claude = join(p.dir, 'bin', 'claude');
    for (const [version, status] of [
      ['2.1.294', 'warn'],
      ['2.0.77', 'warn'],
      ['2.1.295', 'ok'],
      ['2.1.332', 'ok'],
    ] as const) {
      writeFileSync(claude, `#!/bin/sh\necho '${version} (Claude Code)'\n`, { mode: 0o755 });
      const hooks = doctor(p).byName.hooks!;
      expect(hooks.status, `${version}: ${hooks.detail}`).toBe(status);
      if (status === 'warn')
        expect(hooks.detail).toContain(`Claude Code ${version} ignores "onFailure" (honoured since 2.1.295)`);
    }
  });

  it('recognises the pgx plugin enabled in a settings file (no hook entries needed)', () => {
    const p = makeProject();
    mkdirSync(join(p.dir, '.claude'));
    writeFileSync(join(p.dir, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'pgx@pgx': true } }));
    const d = doctor(p);
    expect(d.byName.hooks).toMatchObject({ status: 'ok' });
    expect(d.byName.hooks!.detail).toContain('"pgx@pgx" enabled');
    writeFileSync(join(p.dir, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'pgx@pgx': false } }));
    expect(doctor(p).byName.hooks!.status).toBe('fail');
  });

  it('detects a launcher that no longer exists', () => {
    const p = makeProject();
    p.env.PGX_LAUNCHER = join(p.dir, 'gone', 'pgx.js');
    expect(runPgx(['agent', 'install', 'claude', '--scope', 'local'], p).status).toBe(0); // local scope names the launcher
    delete p.env.PGX_LAUNCHER;
    const d = doctor(p);
    expect(d.byName.hooks!.status).toBe('fail');
    expect(d.byName.hooks!.detail).toContain(`${join(p.dir, 'gone', 'pgx.js')} named in`);
    expect(d.byName.permissions!.status).toBe('warn');
  });

  it("project scope on a machine where pgx is not on PATH (a teammate's clone): hooks fail, naming PATH; on PATH, ok", () => {
    const p = makeProject();
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    trust(p);
    const d = doctor(p);
    expect(d.byName.hooks!.status).toBe('fail');
    expect(d.byName.hooks!.detail).toContain(
      `pgx is not on PATH, where the hooks in ${join(p.dir, '.claude', 'settings.json')} find it: every subagent Bash command is refused`,
    );
    expect(d.byName.hooks!.fix).toMatch(/^put the directory holding pgx on PATH/);
    pgxOnPath(p);
    expect(doctor(p).byName.hooks).toMatchObject({ status: 'ok' });
  });

  it('detects orphans both ways: a stamped database with no record (never suggesting a DROP), a record with no database', async (ctx) => {
    needs(ctx, ['psql'], "it runs the doctor's fix as printed: psql, for a [server] url");
    const p = makeProject();
    const orphan = `pgx_orphan_${Math.random().toString(36).slice(2, 8)}`;
    cleanup.push(orphan);
    await sql(`CREATE DATABASE "${orphan}"`);
    await sql(`COMMENT ON DATABASE "${orphan}" IS 'pgx:branch:deadbeef'`);
    expect(runPgx(['agent', 'exec', '--id', 'gone', '--keep', '--', 'true'], p).status).toBe(0);
    await sql(`DROP DATABASE exec_${p.host}_gone WITH (FORCE)`);

    const d = doctor(p);
    expect(d.byName.orphans!.status).toBe('warn');
    expect(d.byName.orphans!.detail).toContain(orphan);
    expect(d.byName.orphans!.detail).toContain('pgx cannot prove they are its own');
    expect(d.byName.orphans!.detail).toContain(`record(s) whose database is gone: exec_${p.host}_gone`);
    // A stamp is text anyone can copy: no DROP of what no record vouches for, only a read-only look.
    expect(d.byName.orphans!.fix).not.toMatch(/DROP/i);
    expect(d.byName.orphans!.fix).toContain(`pgx agent down --branch exec_${p.host}_gone`);
    expect(d.byName.orphans!.fix).not.toContain(adminEnv().PGPASSWORD!);

    runFix(
      d.byName
        .orphans!.fix!.split(' && ')
        .filter((c) => c.startsWith('psql') && c.includes(orphan))
        .join(' && '),
    );
    expect((await sql(`SELECT 1 FROM pg_database WHERE datname = $1`, [orphan])).length).toBe(1);
    expect(runPgx(['agent', 'down', '--branch', `exec_${p.host}_gone`], p).status).toBe(0);
    const after = doctor(p).byName.orphans!;
    expect(after.detail).not.toContain(`exec_${p.host}_gone`);
  });

  it('a record whose database was replaced by a foreign one: named with `pgx agent forget`; down and gc report it and exit 0; forget clears only the record', async () => {
    const p = makeProject();
    const name = `exec_${p.host}_swap`;
    cleanup.push(name);
    expect(runPgx(['agent', 'exec', '--id', 'swap', '--keep', '--', 'true'], p).status).toBe(0);
    await sql(`DROP DATABASE ${name} WITH (FORCE)`);
    await sql(`CREATE DATABASE ${name}`);
    await sql(`CREATE TABLE theirs (v int); INSERT INTO theirs VALUES (42)`, [], name);

    const d = doctor(p);
    expect(d.byName.orphans!.status).toBe('warn');
    expect(d.byName.orphans!.detail).toContain(`whose database is not the one pgx made`);
    expect(d.byName.orphans!.fix).toContain(`pgx agent forget --branch ${name}`);
    expect(d.byName.orphans!.fix).not.toMatch(/DROP/i);

    const exec = runPgx(['agent', 'exec', '--id', 'swap', '--', 'true'], p);
    expect(exec.status).toBe(6);
    expect(exec.stderr).toContain('pgx agent forget --id swap');
    const down = runPgx(['agent', 'down', '--id', 'swap', '--now', '--json'], p);
    expect(down.status).toBe(0);
    expect(jsonOf<{ branches: { action: string; fix: string }[] }>(down).branches).toEqual([
      expect.objectContaining({ action: 'foreign', fix: `pgx agent forget --branch ${name}` }),
    ]);
    await sql(`UPDATE pgx_branch SET deadline = now() - interval '1 second' WHERE name = $1`, [name], 'pgx_registry');
    const gc = runPgx(['agent', 'gc', '--json'], p);
    expect(gc.status, gc.stdout).toBe(0);
    expect(jsonOf<{ foreign: { name: string }[] }>(gc).foreign.map((f) => f.name)).toContain(name);

    const forget = runPgx(['agent', 'forget', '--branch', name, '--json'], p);
    expect(forget.status, forget.stdout).toBe(0);
    expect(jsonOf<{ branches: { action: string }[] }>(forget).branches).toEqual([
      expect.objectContaining({ name, action: 'forgotten' }),
    ]);
    expect(await sql(`SELECT v FROM theirs`, [], name)).toEqual([{ v: 42 }]);
    expect(doctor(p).byName.orphans!.detail).not.toContain(name);
    // The name is someone else's now: the next exec makes the branch under the hash name.
    expect(runPgx(['agent', 'exec', '--id', 'swap', '--', 'true'], p).status).toBe(0);
  });

  it('detects guards missing on an active branch (RESET ALL), and its fix restores them', async (ctx) => {
    needs(ctx, ['psql'], "it runs the doctor's fix as printed: psql, for a [server] url");
    const p = makeProject();
    expect(runPgx(['agent', 'exec', '--id', 'g', '--keep', '--', 'true'], p).status).toBe(0);
    expect(doctor(p).byName.guards!.status).toBe('ok');
    await sql(`ALTER DATABASE exec_${p.host}_g RESET ALL`);
    const d = doctor(p);
    expect(d.status).toBe(8);
    expect(d.byName.guards!.status, d.byName.guards!.detail).toBe('fail');
    expect(d.byName.guards!.detail).toContain(
      `exec_${p.host}_g (client_connection_check_interval, idle_in_transaction_session_timeout, statement_timeout)`,
    );
    runFix(d.byName.guards!.fix!);
    const again = doctor(p);
    expect(again.byName.guards!.status, again.byName.guards!.detail).toBe('ok');
  });

  it('template: in step with the source, behind after a schema change, in step after `pgx template refresh`', async () => {
    const source = `pgx_docsrc_${Math.random().toString(36).slice(2, 8)}`;
    cleanup.push(source);
    await sql(`CREATE DATABASE "${source}"`);
    await sql('CREATE TABLE t(a int)', [], source);
    const p = makeProject({ source });
    expect(runPgx(['agent', 'exec', '--id', 't', '--', 'true'], p).status).toBe(0);
    expect(doctor(p).byName.template!.detail).toMatch(/in step with/);
    await sql('ALTER TABLE t ADD COLUMN b text', [], source);
    const behind = doctor(p).byName.template!;
    expect(behind).toMatchObject({ status: 'warn', fix: 'pgx template refresh' });
    expect(behind.detail).toMatch(/is behind/);
    expect(runPgx(['template', 'refresh'], p).status).toBe(0);
    expect(doctor(p).byName.template).toMatchObject({ status: 'ok' });
  });

  it('summarises the hook log: outcome counts, denials with ids, old lines ignored', () => {
    const p = makeProject();
    const now = new Date().toISOString();
    const old = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const line = (time: string, event: string, outcome: string, agent: string | null) =>
      JSON.stringify({
        time,
        event,
        session_id: 'sess12345678',
        agent_id: agent,
        branch: null,
        outcome,
        elapsed_ms: 5,
      });
    mkdirSync(join(p.home, 'agent'), { recursive: true });
    writeFileSync(
      join(p.home, 'agent', 'hooks.log'),
      [
        line(old, 'pre-tool-use', 'denied:error', 'a-old'),
        line(now, 'pre-tool-use', 'rewritten:clone', 'a1'),
        line(now, 'pre-tool-use', 'rewritten:attach', 'a1'),
        line(now, 'pre-tool-use', 'denied:error', 'a2'),
        'not json',
      ].join('\n') + '\n',
    );
    const c = doctor(p).byName['hook-log']!;
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^3 calls in the last 24 h/);
    expect(c.detail).toContain('1 denied, 0 errors');
    expect(c.detail).toContain('agent a2 denied:error');
    expect(c.detail).not.toContain('a-old');
  });

  it("hook-log counts only this project's calls (its directory or below); hooks record the project directory", () => {
    const p = makeProject();
    const other = makeProject();
    const now = new Date().toISOString();
    const line = (dir: string, outcome: string, agent: string) =>
      JSON.stringify({
        time: now,
        event: 'pre-tool-use',
        session_id: 'sess12345678',
        agent_id: agent,
        branch: null,
        outcome,
        elapsed_ms: 5,
        project_dir: dir,
      });
    mkdirSync(join(p.home, 'agent'), { recursive: true });
    writeFileSync(
      join(p.home, 'agent', 'hooks.log'),
      [
        line(other.dir, 'denied:error', 'theirs'),
        line(join(p.dir, 'sub'), 'rewritten:clone', 'mine'),
        line(`${p.dir}-sibling`, 'denied:error', 'sibling'),
      ].join('\n') + '\n',
    );
    const c = doctor(p).byName['hook-log']!;
    expect(c.status, c.detail).toBe('ok');
    expect(c.detail).toMatch(/^1 calls in the last 24 h: pre-tool-use rewritten:clone ×1$/);
    // a real hook call writes its project directory into the log
    const payload = JSON.stringify({
      session_id: 'sess-log-dir',
      cwd: p.dir,
      hook_event_name: 'UserPromptSubmit',
      prompt: 'hi',
    });
    expect(runPgx(['agent', 'hook', 'user-prompt-submit'], { ...p, input: payload }).status).toBe(0);
    const last = JSON.parse(
      readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8')
        .trim()
        .split('\n')
        .pop()!,
    );
    expect(last).toMatchObject({ event: 'user-prompt-submit', project_dir: p.dir });
  });

  it('an invalid .pgx.toml fails the config check with a fix, and the server checks are skipped', () => {
    const p = makeProject({ toml: '[agent]\nidle_tll = "1h"\n' });
    const d = doctor(p);
    expect(d.status).toBe(8);
    expect(d.byName.config!.status).toBe('fail');
    expect(d.byName.config!.detail).toContain('"idle_tll" (line 4; did you mean "idle_ttl"?)');
    expect(d.byName.config!.fix).toBe(
      `Fix or remove [agent] idle_tll in ${join(p.dir, '.pgx.toml')}; every key is documented in ${join(REPO, '.pgx.toml.example')}; or rewrite it: pgx init --force`,
    );
    expect(d.byName.server!.status).toBe('skip');
  });

  it('a TOML syntax error: the config check names the file, the line and the problem, and the fix names the line', () => {
    const p = makeProject({ toml: '[agent\nidle_ttl = "1h"\n' });
    const c = doctor(p).byName.config!;
    expect(c.status).toBe('fail');
    expect(c.detail).toMatch(
      new RegExp(
        `^${join(p.dir, '.pgx.toml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: not valid TOML: illegal character in key\\.$`,
      ),
    );
    expect(c.fix).toMatch(/^Fix the syntax at line 3 of \S+\.pgx\.toml/);
    expect(c.fix).not.toMatch(/keys named above/);
  });

  it('env-files: warns when .env / .env.local names a database (the source called out), with what routing covers and what it cannot', () => {
    const p = makeProject({ source: 'shop_dev', toml: '' });
    expect(doctor(p).byName['env-files']!.status).toBe('ok');
    writeFileSync(
      join(p.dir, '.env'),
      'NODE_ENV=development\nDATABASE_URL="postgresql://me@localhost:5432/shop_dev"\n',
    );
    writeFileSync(join(p.dir, '.env.local'), 'export PGDATABASE=other_db # mine\nPGPASSWORD=hunter2\n');
    const c = doctor(p).byName['env-files']!;
    expect(c.status).toBe('warn');
    expect(c.detail).toContain(`${join(p.dir, '.env')} sets DATABASE_URL (database "shop_dev": the SOURCE)`);
    expect(c.detail).toContain('PGDATABASE (database "other_db")');
    expect(c.detail).not.toContain('hunter2');
    expect(c.detail).toMatch(
      /override: true.*dotenv -o.*dotenv run --override.*load_dotenv\(override=True\).*set -a; \. \.\/\.env/,
    );
    expect(c.fix).toMatch(/override/);
  });
});
