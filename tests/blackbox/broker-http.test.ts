// The HTTP transport (src/broker/http.ts): the built CLI's `agent broker serve-http` answers Claude Code's HTTP hook
// requests with the bytes `pgx agent hook <event>` prints for the same payload, and refuses every request that
// doesn't carry the user's secret: a missing or wrong one, a foreign Host, a browser's Origin, and any request from
// another Unix user (`nobody`), who can't read the secret either (decision 221).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORWARDED_VARS } from '../../src/broker/http.js';
import { LAUNCHER, makeProject } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, sessionEnd, sessionStart, subagentStart, subagentStop } from '../helpers/hook-payloads.js';
import { hook, hookEnv, pollUntil, rewriteOf, type Project } from '../helpers/hooks.js';

let p: Project;
let runtime: string;
let broker: ChildProcess;
let state: { port: number; secret: string; pid?: number };

/** What an installed HTTP entry sends: the secret and pgx's forwarded variables (unset ones empty), as Claude Code interpolates them. */
function entryHeaders(secret = state.secret): Record<string, string> {
  const forwarded = Object.fromEntries(FORWARDED_VARS.map((k) => [`x-pgx-env-${k.toLowerCase().replaceAll('_', '-')}`, p.env[k] ?? '']));
  return { authorization: `Bearer ${secret}`, ...forwarded };
}

async function post(event: string, body: string, headers: Record<string, string> = entryHeaders()): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${state.port}/hook/${event}?project=${encodeURIComponent(p.dir)}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: r.status, text: await r.text() };
}

beforeAll(async () => {
  p = makeProject();
  runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
  // The broker's own environment says nothing per call: no project dir, no session (the requests carry those).
  const env = { ...hookEnv(p, {}), XDG_RUNTIME_DIR: runtime, CLAUDE_PROJECT_DIR: undefined, CLAUDECODE: undefined, AI_AGENT: undefined };
  broker = spawn(process.execPath, [LAUNCHER, 'agent', 'broker', 'serve-http'], { cwd: runtime, env: env as NodeJS.ProcessEnv, stdio: 'ignore' });
  const file = join(runtime, 'pgx', 'http.json');
  await pollUntil(async () => existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).pid === broker.pid, 15_000);
  state = JSON.parse(readFileSync(file, 'utf8'));
}, 30_000);

afterAll(() => {
  broker?.kill('SIGTERM');
  rmSync(runtime, { recursive: true, force: true });
});

describe('the HTTP broker', () => {
  it('answers byte-for-byte what the command hook prints, for the parent and for subagents', async () => {
    const s = session(p.dir, p.dir);
    const typed = preToolUseBash(s, `'${LAUNCHER}' agent exec --agent x -- psql`, { agentId: newAgentId() }); // a typed launcher: denied
    const cases: [string, string][] = [
      ['pre-tool-use', JSON.stringify(preToolUseBash(s, 'ls'))], // the parent: nothing
      ['pre-tool-use', JSON.stringify(typed)],
      ['pre-tool-use', '{"not json'], // malformed
      ['subagent-stop', JSON.stringify(subagentStop(s, newAgentId()))], // an agent pgx never saw
      ['user-prompt-submit', JSON.stringify({ ...preToolUseBash(s, 'x'), hook_event_name: 'UserPromptSubmit', prompt: 'hi' })],
    ];
    for (const [event, body] of cases) {
      const cmd = await hook(event as never, body, p, { env: { PGX_BROKER: '0' } });
      const http = await post(event, body);
      expect(http.status, body).toBe(200);
      expect(http.text, `${event} ${body}`).toBe(cmd.stdout.replace(/\n$/, ''));
    }
    // A subagent's start over HTTP names a branch, and its Bash is rewritten to it, as the command hooks do.
    const agent = newAgentId();
    const started = await post('subagent-start', JSON.stringify(subagentStart(s, agent)));
    expect(started.status).toBe(200);
    const branch = /branch "([^"]+)"/.exec(JSON.parse(started.text).hookSpecificOutput.additionalContext)?.[1];
    expect(branch).toBeTruthy();
    const body = JSON.stringify(preToolUseBash(s, "psql -X -Atc 'select 1'", { agentId: agent }));
    const viaHttp = await post('pre-tool-use', body);
    expect(viaHttp.status).toBe(200);
    expect(JSON.parse(viaHttp.text).hookSpecificOutput.updatedInput.command).toContain(`--agent ${agent}`);
  }, 120_000);

  // Over HTTP no AI_AGENT reaches the broker (Claude Code's own environment has none): the version is the one the
  // session's SessionStart command hook recorded (hooks/claude/session-claude-code.ts), so the routed rewrite is the
  // command hook's, byte for byte; a session that recorded none asks (stricter), never the other way round.
  it("a subagent's routed rewrite over HTTP is byte-for-byte the command hook's, on the version SessionStart recorded", async () => {
    const s = session(p.dir, p.dir);
    await hook('session-start', sessionStart(s), p, { env: { PGX_BROKER: '0' } });
    const record = readdirSync(join(p.home, 'agent', 'sessions')).filter((f) => f.endsWith('.claude-code'));
    expect(record.length).toBeGreaterThan(0);
    const agent = newAgentId();
    const started = await post('subagent-start', JSON.stringify(subagentStart(s, agent)));
    expect(started.status).toBe(200);
    for (const command of ["psql -X -Atc 'select 1'", 'echo "it\'s $HOME" | wc -c', 'npm test']) {
      const body = JSON.stringify(preToolUseBash(s, command, { agentId: agent }));
      const viaHttp = await post('pre-tool-use', body);
      const viaCommand = await hook('pre-tool-use', body, p, { env: { PGX_BROKER: '0' } });
      expect(viaHttp.status).toBe(200);
      expect(rewriteOf(viaCommand).command).toContain(`--agent ${agent}`);
      expect(viaCommand.json.hookSpecificOutput.permissionDecision).toBeUndefined(); // 2.1.328 is verified
      expect(viaHttp.text, command).toBe(viaCommand.stdout.replace(/\n$/, ''));
    }
    // The session's end drops its record: a later request naming it is an unknown version again, and asks.
    const ended = await post('session-end', JSON.stringify(sessionEnd(s)));
    expect(ended.status).toBe(200);
    const after = await post('pre-tool-use', JSON.stringify(preToolUseBash(s, 'true', { agentId: agent })));
    expect(after.status).toBe(200);
    expect(JSON.parse(after.text).hookSpecificOutput.permissionDecision).toBe('ask');
  }, 120_000);

  it('a session whose SessionStart recorded no version, or a record that is not one, asks over HTTP: stricter, never weaker', async () => {
    const unrecorded = session(p.dir, p.dir);
    const agent = newAgentId();
    expect((await post('subagent-start', JSON.stringify(subagentStart(unrecorded, agent)))).status).toBe(200);
    const body = JSON.stringify(preToolUseBash(unrecorded, 'true', { agentId: agent }));
    const asked = JSON.parse((await post('pre-tool-use', body)).text).hookSpecificOutput;
    expect(asked.permissionDecision).toBe('ask');
    expect(asked.permissionDecisionReason).toContain('an unknown version');
    expect(asked.updatedInput.command).toContain(`--agent ${agent}`);
    // A SessionStart without AI_AGENT (a Claude Code that doesn't say) records nothing, and drops an earlier record.
    const s = session(p.dir, p.dir);
    await hook('session-start', sessionStart(s), p, { env: { PGX_BROKER: '0' } });
    await hook('session-start', sessionStart(s, 'resume'), p, { env: { PGX_BROKER: '0', AI_AGENT: undefined } });
    const a2 = newAgentId();
    await post('subagent-start', JSON.stringify(subagentStart(s, a2)));
    expect(JSON.parse((await post('pre-tool-use', JSON.stringify(preToolUseBash(s, 'true', { agentId: a2 })))).text).hookSpecificOutput.permissionDecision).toBe('ask');
    // A record edited into something that is not a version is not trusted.
    const s3 = session(p.dir, p.dir);
    await hook('session-start', sessionStart(s3), p, { env: { PGX_BROKER: '0' } });
    const file = join(p.home, 'agent', 'sessions', createHash('sha256').update(s3.sessionId).digest('hex').slice(0, 24) + '.claude-code');
    expect(readFileSync(file, 'utf8')).toBe('2.1.328\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, '2.1.328; rm -rf /\n');
    const a3 = newAgentId();
    await post('subagent-start', JSON.stringify(subagentStart(s3, a3)));
    expect(JSON.parse((await post('pre-tool-use', JSON.stringify(preToolUseBash(s3, 'true', { agentId: a3 })))).text).hookSpecificOutput.permissionDecision).toBe('ask');
    // An AI_AGENT header (what an older entry forwarded) is not taken: it would be Claude Code's own environment's.
    const forged = await post('pre-tool-use', body, { ...entryHeaders(), 'x-pgx-env-ai-agent': 'claude-code_2-1-328_harness' });
    expect(JSON.parse(forged.text).hookSpecificOutput.permissionDecision).toBe('ask');
  }, 120_000);

  it('refuses a request without the secret, with a wrong one, with another Host or a browser Origin: 401 and no work', async () => {
    const s = session(p.dir, p.dir);
    const body = JSON.stringify(subagentStart(s, newAgentId()));
    const { authorization: _, ...noSecret } = entryHeaders();
    expect((await post('subagent-start', body, noSecret)).status).toBe(401);
    expect((await post('subagent-start', body, entryHeaders('0'.repeat(64)))).status).toBe(401);
    expect((await post('subagent-start', body, entryHeaders(state.secret.slice(0, 63) + (state.secret.endsWith('0') ? '1' : '0')))).status).toBe(401);
    expect((await post('subagent-start', body, { ...entryHeaders(), origin: 'http://evil.example' })).status).toBe(401);
    const wrongHost = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-H', 'Host: evil.example', '-H', `authorization: Bearer ${state.secret}`, '--data', body, `http://127.0.0.1:${state.port}/hook/subagent-start`], { encoding: 'utf8' });
    expect(wrongHost.stdout).toBe('401');
  });

  it('another Unix user can read neither the secret nor its directory, and is refused', () => {
    const file = join(runtime, 'pgx', 'http.json');
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(statSync(join(runtime, 'pgx')).mode & 0o077).toBe(0);
    const read = spawnSync('runuser', ['-u', 'nobody', '--', 'cat', file], { encoding: 'utf8' });
    expect(read.status).not.toBe(0);
    expect(read.stdout).toBe('');
    const asked = spawnSync('runuser', ['-u', 'nobody', '--', 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-H', 'authorization: Bearer guess', '--data', '{}', `http://127.0.0.1:${state.port}/hook/subagent-start`], { encoding: 'utf8' });
    expect(asked.stdout).toBe('401');
  });
});
