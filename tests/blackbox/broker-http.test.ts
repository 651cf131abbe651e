// The HTTP transport (src/broker/http.ts): the built CLI's `agent broker serve-http` answers Claude Code's HTTP hook
// requests with the bytes `pgx agent hook <event>` prints for the same payload, and refuses every request that
// doesn't carry the user's secret: a missing or wrong one, a foreign Host, a browser's Origin, and any request from
// another Unix user (`nobody`), who can't read the secret either (decision 221).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { BODY_TIMEOUT_MS, FORWARDED_VARS } from '../../src/broker/http.js';
import { MAX_REQUEST_BYTES } from '../../src/broker/protocol.js';
import { LAUNCHER, makeProject, sql } from '../helpers/pgx.js';
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

/** One raw HTTP/1.1 exchange on a socket of its own: what the broker sends back before it closes, and whether it closed. */
function raw(head: string, body: Buffer | string = '', o: { endBody?: boolean } = {}): { answer: Promise<{ status: number | undefined; text: string }>; socket: Socket } {
  const socket = connect(state.port, '127.0.0.1');
  let got = '';
  socket.on('data', (d) => (got += d.toString('latin1')));
  socket.on('error', () => {});
  socket.write(head.replaceAll('\n', '\r\n') + '\r\n');
  if (body.length) socket.write(body);
  if (o.endBody) socket.end();
  const answer = new Promise<{ status: number | undefined; text: string }>((res) => socket.on('close', () => res({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1]) || undefined, text: got.split('\r\n\r\n').slice(1).join('\r\n\r\n') })));
  return { answer, socket };
}

/** The hook log's line count: a request that did no work adds none. */
const logCount = () => (existsSync(join(p.home, 'agent', 'hooks.log')) ? readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8').trim().split('\n').length : 0);

describe('hostile HTTP requests (decision 226)', () => {
  const headLines = (event: string, extra: string[], query = `?project=${encodeURIComponent(p.dir)}`) =>
    [`POST /hook/${event}${query} HTTP/1.1`, `Host: 127.0.0.1:${state.port}`, ...Object.entries(entryHeaders()).map(([k, v]) => `${k}: ${v}`), ...extra, ''].join('\n');

  it('an oversize body gets a 413 and no work, whether its Content-Length says so or it streams past the 4 MiB cap; the broker answers the next request', async () => {
    const before = logCount();
    const big = Buffer.alloc(MAX_REQUEST_BYTES + 1024, 'x');
    const declared = raw(headLines('pre-tool-use', [`Content-Length: ${big.length}`, 'Content-Type: application/json']), big.subarray(0, 65536));
    expect((await declared.answer).status).toBe(413);
    // chunked, no length: read until the cap, then refused
    const chunked = raw(headLines('pre-tool-use', ['Transfer-Encoding: chunked', 'Content-Type: application/json']));
    for (let i = 0; i < 5; i++) chunked.socket.write(`${(1 << 20).toString(16)}\r\n${'y'.repeat(1 << 20)}\r\n`);
    expect((await chunked.answer).status).toBe(413);
    // Without the secret, a big body is refused at its headers: 401, nothing read.
    const anon = raw([`POST /hook/pre-tool-use HTTP/1.1`, `Host: 127.0.0.1:${state.port}`, `Content-Length: ${big.length}`, ''].join('\n'), 'x');
    expect((await anon.answer).status).toBe(401);
    expect(logCount()).toBe(before);
    const s = session(p.dir, p.dir);
    expect((await post('pre-tool-use', JSON.stringify(preToolUseBash(s, 'ls')))).status).toBe(200);
    expect(logCount()).toBe(before + 1);
  }, 60_000);

  it('a body that trickles in (slowloris) is cut with a 408 once BODY_TIMEOUT_MS passes, and holds up no other request meanwhile', async () => {
    const before = logCount();
    const slow = raw(headLines('subagent-start', ['Content-Length: 1000', 'Content-Type: application/json']), '{"session_id":');
    const headersOnly = raw(`POST /hook/subagent-start HTTP/1.1\nHost: 127.0.0.1:${state.port}`); // never finishes its headers (no blank line)
    const order: string[] = [];
    void slow.answer.then(() => order.push('slow closed'));
    void headersOnly.answer.then(() => order.push('headers closed'));
    await new Promise((r) => setTimeout(r, 500));
    const s = session(p.dir, p.dir);
    const served = await post('subagent-start', JSON.stringify(subagentStart(s, newAgentId())));
    expect(served.status).toBe(200);
    order.push('served');
    const t0 = Date.now();
    expect((await slow.answer).status).toBe(408);
    await headersOnly.answer; // node closes a connection that never finished its headers (no status line needed)
    expect(order[0]).toBe('served');
    expect(Date.now() - t0).toBeLessThan(BODY_TIMEOUT_MS + 5000); // bounded by the cap, not node's 300 s default
    expect(logCount()).toBe(before + 1);
  }, 40_000);

  it("a wrong or missing content type changes nothing: the body is the hook's stdin whatever it is labelled", async () => {
    const s = session(p.dir, p.dir);
    const agent = newAgentId();
    await post('subagent-start', JSON.stringify(subagentStart(s, agent)));
    const body = JSON.stringify(preToolUseBash(s, 'echo hi', { agentId: agent }));
    const json = await post('pre-tool-use', body);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']) {
      const r = await fetch(`http://127.0.0.1:${state.port}/hook/pre-tool-use?project=${encodeURIComponent(p.dir)}`, { method: 'POST', headers: { ...entryHeaders(), 'content-type': type }, body });
      expect(r.status, type).toBe(200);
      expect(await r.text(), type).toBe(json.text);
    }
  });

  it('?project= must be one absolute path (else 400, no work); missing, the payload cwd decides; a path through .. to another project answers for that project only', async () => {
    const s = session(p.dir, p.dir);
    const body = JSON.stringify(subagentStart(s, newAgentId()));
    const before = logCount();
    const url = (q: string) => `http://127.0.0.1:${state.port}/hook/subagent-start${q}`;
    for (const q of ['?project=', '?project=.', '?project=..%2F..%2Fetc', '?project=relative%2Fdir', `?project=${encodeURIComponent(p.dir)}%00x`, `?project=${encodeURIComponent(p.dir)}&project=%2F`, `?project=${'%2Fa'.repeat(2100)}`]) {
      const r = await fetch(url(q), { method: 'POST', headers: entryHeaders(), body });
      expect(r.status, q.slice(0, 60)).toBe(400);
    }
    expect(logCount()).toBe(before);
    // Missing: the payload's cwd (the project) decides, as for a command hook without CLAUDE_PROJECT_DIR.
    const missing = await fetch(url(''), { method: 'POST', headers: entryHeaders(), body });
    expect(missing.status).toBe(200);
    expect(await missing.text()).toContain('your own PostgreSQL database branch');
    // Through .. to another project: that project's branch, in that project's registry rows; none of this one's.
    const other = makeProject();
    const s2 = session(other.dir, other.dir);
    const agent = newAgentId();
    const mine = await sql<{ name: string }>(`SELECT name FROM pgx_branch WHERE project = $1 ORDER BY name`, [p.name], 'pgx_registry');
    const traversal = `${p.dir}/../${basename(other.dir)}`;
    const r = await fetch(url(`?project=${encodeURIComponent(traversal)}`), { method: 'POST', headers: entryHeaders(), body: JSON.stringify(subagentStart(s2, agent)) });
    expect(r.status).toBe(200);
    const branch = /branch \\"([^"\\]+)\\"/.exec(await r.text())?.[1];
    const rows = await sql<{ project: string }>(`SELECT project FROM pgx_branch WHERE name = $1 AND state = 'active'`, [branch], 'pgx_registry');
    expect(rows.map((x) => x.project)).toEqual([other.name]);
    expect(await sql<{ name: string }>(`SELECT name FROM pgx_branch WHERE project = $1 ORDER BY name`, [p.name], 'pgx_registry')).toEqual(mine);
  });

  it("another session's request replayed (same bytes, same secret) is that session's request: its own branch again, never a new one or another's", async () => {
    const a = session(p.dir, p.dir);
    const b = session(p.dir, p.dir);
    const agent = newAgentId();
    const start = JSON.stringify(subagentStart(a, agent));
    const first = await post('subagent-start', start);
    const branchOf = (t: string) => /branch \\"([^"\\]+)\\"/.exec(t)?.[1];
    const pre = JSON.stringify(preToolUseBash(a, "psql -X -Atc 'select 1'", { agentId: agent }));
    const rewrite = await post('pre-tool-use', pre);
    // Replayed, also from session B's entry (the URL and headers are per user, not per session: the payload decides)
    for (let i = 0; i < 3; i++) {
      expect(branchOf((await post('subagent-start', start)).text)).toBe(branchOf(first.text));
      expect((await post('pre-tool-use', pre)).text).toBe(rewrite.text);
    }
    // The same agent id under session B: B's own branch, not A's.
    const inB = await post('subagent-start', JSON.stringify(subagentStart(b, agent)));
    expect(branchOf(inB.text)).toBeTruthy();
    expect(branchOf(inB.text)).not.toBe(branchOf(first.text));
    const active = await sql<{ session_id: string }>(`SELECT session_id FROM pgx_branch WHERE project = $1 AND agent_id = $2 AND state = 'active' ORDER BY session_id`, [p.name, agent], 'pgx_registry');
    expect(active.map((x) => x.session_id)).toEqual([a.sessionId, b.sessionId].sort());
  });
});


describe('port squatting (decision 225)', () => {
  it("a broker that finds its recorded port held by another user refuses it, warns with the fix, and burns the port and secret", async () => {
    const own = mkdtempSync(join(tmpdir(), 'pgx-run-'));
    try {
      const env = { ...hookEnv(p, {}), XDG_RUNTIME_DIR: own, CLAUDE_PROJECT_DIR: undefined, AI_AGENT: undefined } as NodeJS.ProcessEnv;
      const first = spawn(process.execPath, [LAUNCHER, 'agent', 'broker', 'serve-http'], { cwd: own, env, stdio: 'ignore' });
      const file = join(own, 'pgx', 'http.json');
      const was = await pollUntil(async () => { try { const j = JSON.parse(readFileSync(file, 'utf8')); return j.pid === first.pid ? j : undefined; } catch { return undefined; } }, 15_000); // prettier-ignore
      first.kill('SIGTERM');
      await new Promise((r) => first.once('exit', r));
      // While it is down, `nobody` binds the port.
      const squatter = spawn('runuser', ['-u', 'nobody', '--', process.execPath, '-e', `require('net').createServer().listen(${was.port}, '127.0.0.1', () => console.log('up')); setTimeout(() => process.exit(0), 30000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        await new Promise<void>((r) => squatter.stdout!.once('data', () => r()));
        const again = spawnSync(process.execPath, [LAUNCHER, 'agent', 'broker', 'serve-http'], { cwd: own, env, encoding: 'utf8', timeout: 20_000 });
        expect(again.status).toBe(1);
        const nobody = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim();
        expect(again.stderr).toContain(`127.0.0.1:${was.port}, the port your HTTP hooks post to, is held by another user (uid ${nobody})`);
        expect(again.stderr).toContain('pgx agent install claude --transport http');
        const now = JSON.parse(readFileSync(file, 'utf8'));
        expect(now.port).not.toBe(was.port);
        expect(now.secret).not.toBe(was.secret);
        expect(now.pid).toBeUndefined(); // no broker serves
        expect(statSync(file).mode & 0o077).toBe(0);
      } finally {
        squatter.kill('SIGTERM'); // runuser passes it on; the squatter also exits by itself after 30 s
        await new Promise((r) => (squatter.exitCode !== null ? r(null) : squatter.once('exit', r)));
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  }, 60_000);
});
