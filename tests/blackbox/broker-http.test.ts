// The HTTP transport (src/broker/http.ts): the built CLI's `agent broker serve-http` answers Claude Code's HTTP hook
// requests with the bytes `pgx agent hook <event>` prints for the same payload, and refuses every request that
// doesn't carry the user's secret: a missing or wrong one, a foreign Host, a browser's Origin, and any request from
// another Unix user (`nobody`), who can't read the secret either (decision 221).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCHER, makeProject } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, subagentStart, subagentStop } from '../helpers/hook-payloads.js';
import { hook, hookEnv, pollUntil, type Project } from '../helpers/hooks.js';

let p: Project;
let runtime: string;
let broker: ChildProcess;
let state: { port: number; secret: string; pid?: number };

/** What an installed HTTP entry sends (hooks-http.ts): the secret and pgx's forwarded variables. */
function entryHeaders(secret = state.secret): Record<string, string> {
  return { authorization: `Bearer ${secret}`, 'x-pgx-env-pgx-home': p.env.PGX_HOME ?? '', 'x-pgx-env-pgx-database-url': p.env.PGX_DATABASE_URL ?? '' };
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

  // Measured, not yet equal: over HTTP no AI_AGENT reaches the broker (Claude Code's own environment has none), so the
  // version is unknown and the routed rewrite carries permissionDecision "ask" (stricter); and the ticket's middle
  // part differs from the command hook's. Decision 222 says what closes it.
  it.todo("a subagent's routed rewrite over HTTP is byte-for-byte the command hook's");

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
