// The hook answers even when its work cannot finish, and a project that runs pgx's hooks stays fail-closed when
// its .pgx.toml disappears mid-session.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { identityKey } from '../../src/engine/identity.js';
import { LOCK } from '../../src/registry/locks.js';
import { makeProject, pgInfo, runPgx } from '../helpers/pgx.js';
import { hook, rewriteOf } from '../helpers/hooks.js';
import { pollUntil } from '../helpers/poll.js';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';

describe('hook resilience', () => {
  it('PreToolUse denies (never runs unrouted) when the branch cannot be ready before its deadline', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agent = newAgentId();
    // Another pgx process "holds" this identity: take its advisory lock from a plain client.
    const key = identityKey({ project: p.name, host: p.host, sessionId: s.sessionId, agentId: agent });
    const info = pgInfo();
    const holder = new pg.Client({
      host: info.host,
      port: info.port,
      user: info.user,
      password: info.password,
      database: 'pgx_registry',
    });
    runPgx(['agent', 'up', '--id', 'bootstrap-registry', '--json'], p); // the registry database exists from here on
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [LOCK.identity(key)]);
      const t0 = Date.now();
      const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }), p, {
        env: { PGX_HOOK_DEADLINE_MS: '1500' },
      });
      const took = Date.now() - t0;
      expect(r.status).toBe(0);
      expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
      expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(/within 2 s/);
      expect(took).toBeLessThan(10_000); // answered at its deadline, not after the lock (held forever here)
      // and no statement of the hook outlives it: its lock wait is cancelled by the server (statement_timeout)
      const waiting = async () =>
        (
          await holder.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'pgx' AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
          )
        ).rows[0].n;
      expect(await pollUntil(async () => (await waiting()) === 0, 5000, 100)).toBe(true);
    } finally {
      await holder.end();
    }
  });

  it('a subagent Bash is denied when .pgx.toml vanished from a project whose settings run pgx', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    renameSync(join(p.dir, '.pgx.toml'), join(p.dir, 'moved.toml'));
    const agent = newAgentId();
    const elsewhere = { env: { HOME: join(p.dir, 'home-elsewhere') } }; // the project is not $HOME (see the $HOME test)
    const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }), p, elsewhere);
    expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(/no \.pgx\.toml was found/);
    // the parent's Bash is not a subagent's: it goes on (fail open), and a SessionStart warns visibly
    const parent = await hook('pre-tool-use', preToolUseBash(s, 'ls'), p, elsewhere);
    expect(parent.stdout).toBe('');
    const start = await hook('session-start', sessionStart(s), p, elsewhere);
    expect(start.json.systemMessage).toMatch(/no \.pgx\.toml was found/);
  });

  it('...and when it vanished after the session started in scope, even without settings hooks', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agent = newAgentId();
    expect((await hook('subagent-start', subagentStart(s, agent), p)).status).toBe(0);
    renameSync(join(p.dir, '.pgx.toml'), join(p.dir, 'moved.toml'));
    const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }), p);
    expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
    // an unrelated session in the same (now config-less, hook-less) directory is out of scope: no output
    const other = session(p.dir, p.dir);
    const o = await hook('pre-tool-use', preToolUseBash(other, 'psql -c "select 1"', { agentId: newAgentId() }), p);
    expect(o.stdout).toBe('');
  });

  it("the inner shell is the one Claude Code's Bash tool uses: SHELL=/bin/sh (dash) or fish still gets bash/zsh", async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agent = newAgentId();
    const bin = join(p.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'fish'), '#!/bin/sh\nexit 99\n', { mode: 0o755 });
    const innerOf = async (env: NodeJS.ProcessEnv) => {
      const r = await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: agent }), p, { env });
      return / -- (\S+) -c 'echo hi'; exit # pgx-routed /.exec(r.json.hookSpecificOutput.updatedInput.command)?.[1];
    };
    // this machine has bash and no zsh (as Claude Code would see it: zsh on PATH or in /bin, /usr/bin, … first)
    const zshInstalled = ['/bin/zsh', '/usr/bin/zsh', '/usr/local/bin/zsh', '/opt/homebrew/bin/zsh'].some((f) =>
      existsSync(f),
    );
    const fallback = zshInstalled ? expect.stringMatching(/zsh$/) : '/bin/bash';
    expect(await innerOf({ SHELL: '/bin/sh' })).toEqual(fallback); // today's code used /bin/sh: dash
    expect(await innerOf({ SHELL: join(bin, 'fish') })).toEqual(fallback);
    expect(await innerOf({ SHELL: '/bin/bash' })).toBe('/bin/bash');
    // CLAUDE_CODE_SHELL wins when it names an executable bash/zsh; a zsh on PATH comes before bash unless SHELL is bash
    writeFileSync(join(bin, 'zsh'), '#!/bin/sh\nexec /bin/bash "$@"\n', { mode: 0o755 });
    expect(await innerOf({ SHELL: '/bin/bash', CLAUDE_CODE_SHELL: join(bin, 'zsh') })).toBe(join(bin, 'zsh'));
    expect(await innerOf({ SHELL: '/bin/sh', PATH: `${bin}:${process.env.PATH}` })).toBe(join(bin, 'zsh'));
    expect(
      await innerOf({ SHELL: '/bin/bash', PATH: `${bin}:${process.env.PATH}`, CLAUDE_CODE_SHELL: '/nonexistent/zsh' }),
    ).toMatch(/\/bash$/);
  });

  it('with SHELL=/bin/sh a routed command with bash syntax ([[ ]], arrays) runs as it would unrouted', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const original = 'a=(x y); [[ -n "$PGDATABASE" ]] && echo "ok ${a[1]} $PGDATABASE"';
    const r = await hook('pre-tool-use', preToolUseBash(s, original, { agentId: newAgentId() }), p, {
      env: { SHELL: '/bin/sh' },
    });
    const routed = rewriteOf(r);
    // Claude Code runs the rewritten command in its own shell (bash here): so does this test
    const out = spawnSync('/bin/bash', ['-c', routed.command], {
      cwd: p.dir,
      env: { ...p.env, SHELL: '/bin/sh', CLAUDE_CODE_SESSION_ID: s.sessionId },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe(`ok y ${routed.branch}`);
    // control: under dash, the same original fails (what routed commands did before)
    expect(spawnSync('/bin/sh', ['-c', original], { encoding: 'utf8' }).status).not.toBe(0);
  });

  it('a user-scope install in $HOME, or a project with compact settings JSON: scope is read from the parsed file', async () => {
    const { writeFileSync: write, readFileSync: read, rmSync } = await import('node:fs');
    // user scope: the project dir IS the home directory, whose .claude/settings.json is the user file
    const home = makeProject();
    expect(
      runPgx(['agent', 'install', 'claude', '--scope', 'user'], { ...home, env: { ...home.env, HOME: home.dir } })
        .status,
    ).toBe(0);
    rmSync(join(home.dir, '.pgx.toml'));
    const s = session(home.dir, home.dir);
    const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: newAgentId() }), home, {
      env: { HOME: home.dir },
    });
    expect(r.stdout).toBe('');
    // project scope, settings minified onto one line: still recognised, still fail-closed
    const p = makeProject();
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    const file = join(p.dir, '.claude', 'settings.json');
    write(file, JSON.stringify(JSON.parse(read(file, 'utf8'))));
    rmSync(join(p.dir, '.pgx.toml'));
    const d = await hook(
      'pre-tool-use',
      preToolUseBash(session(p.dir, p.dir), 'psql -c "select 1"', { agentId: newAgentId() }),
      p,
      { env: { HOME: join(p.dir, 'home-elsewhere') } },
    );
    expect(d.json.hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('SessionEnd forgets the session even when .pgx.toml is gone by then', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    expect((await hook('session-start', sessionStart(s), p)).status).toBe(0);
    renameSync(join(p.dir, '.pgx.toml'), join(p.dir, 'moved.toml'));
    await hook(
      'session-end',
      { session_id: s.sessionId, cwd: p.dir, hook_event_name: 'SessionEnd', reason: 'other' },
      p,
    );
    const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: newAgentId() }), p);
    expect(r.stdout).toBe(''); // the session is over: the directory is out of scope again
  });

  it('an unexpected failure inside the hook still answers: PreToolUse denies with exit 0 (never exit 1, which runs the command)', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { spawnSync } = await import('node:child_process');
    const { LAUNCHER } = await import('../helpers/pgx.js');
    const gone = mkdtempSync(join(tmpdir(), 'pgx-gone-'));
    const payload = JSON.stringify({
      session_id: 's',
      agent_id: 'a1',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
    });
    // no CLAUDE_PROJECT_DIR, no payload cwd, and a deleted working directory: process.cwd() throws inside the hook
    const r = spawnSync(
      'bash',
      ['-c', `cd ${gone} && rmdir ${gone} && exec "${process.execPath}" "${LAUNCHER}" agent hook pre-tool-use`],
      {
        input: payload,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, PGX_HOME: join(gone, '..', 'pgx-gone-home') },
      },
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});
