// The hook answers even when its work cannot finish, and a project that runs pgx's hooks stays fail-closed when
// its .pgx.toml disappears mid-session.
import { renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { identityKey } from '../../src/identity.js';
import { makeProject, pgInfo, runPgx } from '../helpers/pgx.js';
import { hook } from '../helpers/hooks.js';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';

describe('hook resilience', () => {
  it('PreToolUse denies (never runs unrouted) when the branch cannot be ready before its deadline', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agent = newAgentId();
    // Another pgx process "holds" this identity: take its advisory lock from a plain client.
    const key = identityKey({ project: p.name, host: 'testhost', sessionId: s.sessionId, agentId: agent });
    const info = pgInfo();
    const holder = new pg.Client({ host: info.host, port: info.port, user: info.user, password: info.password, database: 'pgx_registry' });
    runPgx(['agent', 'up', '--id', 'bootstrap-registry', '--json'], p); // the registry database exists from here on
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [BigInt('0x' + key.slice(0, 15)).toString()]);
      const t0 = Date.now();
      const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: agent }), p, { env: { PGX_HOOK_DEADLINE_MS: '1500' } });
      const took = Date.now() - t0;
      expect(r.status).toBe(0);
      expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
      expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(/within 2 s/);
      expect(took).toBeLessThan(10_000); // answered at its deadline, not after the lock (held forever here)
      // and no statement of the hook outlives it: its lock wait is cancelled by the server (statement_timeout)
      const waiting = async () =>
        (await holder.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'pgx' AND wait_event_type = 'Lock' AND wait_event = 'advisory'")).rows[0].n;
      const until = Date.now() + 5000;
      while ((await waiting()) > 0 && Date.now() < until) await new Promise((res) => setTimeout(res, 100));
      expect(await waiting()).toBe(0);
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

  it('the inner shell is $SHELL only for POSIX-syntax shells (fish falls back to bash)', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agent = newAgentId();
    const fishy = join(p.dir, 'bin');
    mkdirSync(fishy);
    writeFileSync(join(fishy, 'fish'), '#!/bin/sh\nexit 99\n', { mode: 0o755 });
    const r = await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: agent }), p, { env: { SHELL: join(fishy, 'fish') } });
    expect(r.json.hookSpecificOutput.updatedInput.command).toMatch(/ -- \/bin\/bash -c 'echo hi'; exit # pgx-routed \S+\necho hi$/);
    const z = await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: agent }), p, { env: { SHELL: '/bin/sh' } });
    expect(z.json.hookSpecificOutput.updatedInput.command).toMatch(/ -- \/bin\/sh -c 'echo hi'; exit # pgx-routed \S+\necho hi$/);
  });

  it('a user-scope install in $HOME, or a project with compact settings JSON: scope is read from the parsed file', async () => {
    const { writeFileSync: write, readFileSync: read, rmSync } = await import('node:fs');
    // user scope: the project dir IS the home directory, whose .claude/settings.json is the user file
    const home = makeProject();
    expect(runPgx(['agent', 'install', 'claude', '--scope', 'user'], { ...home, env: { ...home.env, HOME: home.dir } }).status).toBe(0);
    rmSync(join(home.dir, '.pgx.toml'));
    const s = session(home.dir, home.dir);
    const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: newAgentId() }), home, { env: { HOME: home.dir } });
    expect(r.stdout).toBe('');
    // project scope, settings minified onto one line: still recognised, still fail-closed
    const p = makeProject();
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    const file = join(p.dir, '.claude', 'settings.json');
    write(file, JSON.stringify(JSON.parse(read(file, 'utf8'))));
    rmSync(join(p.dir, '.pgx.toml'));
    const d = await hook('pre-tool-use', preToolUseBash(session(p.dir, p.dir), 'psql -c "select 1"', { agentId: newAgentId() }), p, { env: { HOME: join(p.dir, 'home-elsewhere') } });
    expect(d.json.hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('SessionEnd forgets the session even when .pgx.toml is gone by then', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    expect((await hook('session-start', sessionStart(s), p)).status).toBe(0);
    renameSync(join(p.dir, '.pgx.toml'), join(p.dir, 'moved.toml'));
    await hook('session-end', { session_id: s.sessionId, cwd: p.dir, hook_event_name: 'SessionEnd', reason: 'other' }, p);
    const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "select 1"', { agentId: newAgentId() }), p);
    expect(r.stdout).toBe(''); // the session is over: the directory is out of scope again
  });

  it('an unexpected failure inside the hook still answers: PreToolUse denies with exit 0 (never exit 1, which runs the command)', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { spawnSync } = await import('node:child_process');
    const { LAUNCHER } = await import('../helpers/pgx.js');
    const gone = mkdtempSync(join(tmpdir(), 'pgx-gone-'));
    const payload = JSON.stringify({ session_id: 's', agent_id: 'a1', tool_name: 'Bash', tool_input: { command: 'ls' } });
    // no CLAUDE_PROJECT_DIR, no payload cwd, and a deleted working directory: process.cwd() throws inside the hook
    const r = spawnSync('bash', ['-c', `cd ${gone} && rmdir ${gone} && exec "${process.execPath}" "${LAUNCHER}" agent hook pre-tool-use`], { input: payload, encoding: 'utf8', env: { PATH: process.env.PATH, PGX_HOME: join(gone, '..', 'pgx-gone-home') } });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});

