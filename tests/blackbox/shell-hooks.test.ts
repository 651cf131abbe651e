// Hooks with no node process (decision 441): the installed entry `'<launcher>' agent hook <event>` runs bin/pgx.js's
// sh part, which hands stdin to this user's broker (with perl's bare socket calls, else curl: decision 445) and prints
// its answer. These tests run the BUILT launcher
// as Claude Code runs a command hook (`/bin/sh -c <command>`, the payload on stdin), against the real server, with a
// `node` first on PATH that counts its starts; and check that the sh path prints exactly what the node path prints,
// starts no node, falls back to node with stdin whole whenever the broker refuses or is absent, and fails closed
// once stdin is gone. Also: one broker per user whatever the PG* variables (decision 442).
import { spawn } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
  cpSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, REPO, runPgx } from '../helpers/pgx.js';
import {
  newAgentId,
  preToolUseBash,
  session,
  sessionStart,
  subagentStart,
  subagentStop,
  userPromptSubmit,
} from '../helpers/hook-payloads.js';
import {
  hookEnv,
  knownSecrets,
  launcherReal,
  pollUntil,
  registryRows,
  rewriteOf,
  type Project,
} from '../helpers/hooks.js';
import { isBroker, processes } from '../helpers/leftovers.js';

const projects: Project[] = [];
const temps: string[] = [];

/** A project whose hooks use the broker, with a private socket directory of its own. */
function brokerProject(extra: NodeJS.ProcessEnv = {}): Project & { sockets: string } {
  const p = makeProject();
  const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
  temps.push(runtime);
  Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '60000', XDG_RUNTIME_DIR: runtime }, extra);
  projects.push(p);
  return { ...p, sockets: join(runtime, 'pgx') };
}

afterAll(() => {
  for (const p of projects) runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: hookEnv(p, {}) });
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

/** A `node` first on PATH that appends a line to `count` per start, then runs the real one. */
function countingNode(): { path: string; starts: () => number } {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-nodecount-'));
  temps.push(dir);
  const count = join(dir, 'count');
  writeFileSync(join(dir, 'node'), `#!/bin/sh\necho x >> '${count}'\nexec '${process.execPath}' "$@"\n`, {
    mode: 0o755,
  });
  return {
    path: `${dir}:${process.env.PATH}`,
    starts: () => (existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

/**
 * A PATH holding only `node` and one client, each a wrapper that logs its start (and the client its argv) before it
 * runs the real one: with perl there, the hook asks with perl; with no perl, with curl.
 */
function oneClientPath(client: 'perl' | 'curl'): { path: string; calls: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), `pgx-${client}-`));
  temps.push(dir);
  const log = join(dir, 'calls.log');
  writeFileSync(join(dir, 'node'), `#!/bin/sh\necho node >> '${log}'\nexec '${process.execPath}' "$@"\n`, {
    mode: 0o755,
  });
  writeFileSync(
    join(dir, client),
    `#!/bin/sh\nprintf '%s %s\\n' ${client} "$*" >> '${log}'\nexec /usr/bin/${client} "$@"\n`,
    { mode: 0o755 },
  );
  return { path: dir, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Claude Code's command hook: `/bin/sh -c "'<launcher>' agent hook <event>"`, the payload on stdin. */
function entry(
  event: string,
  input: string | Buffer,
  env: NodeJS.ProcessEnv,
  cwd: string,
  launcher = launcherReal(),
): Promise<Ran> {
  return new Promise((res) => {
    const c = spawn('/bin/sh', ['-c', `'${launcher}' agent hook ${event}`], { cwd, env });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.stdin.on('error', () => {});
    c.stdin.end(input);
    c.on('close', (status) => res({ status, stdout, stderr }));
  });
}

/** A copy of the launcher and its dist/ whose build id differs: this build's broker refuses it before reading its body. */
function anotherBuildLauncher(): string {
  const copy = mkdtempSync(join(tmpdir(), 'pgx-copy-'));
  temps.push(copy);
  mkdirSync(join(copy, 'bin'));
  cpSync(join(REPO, 'dist'), join(copy, 'dist'), { recursive: true });
  cpSync(join(REPO, 'bin', 'pgx.js'), join(copy, 'bin', 'pgx.js'));
  symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'));
  writeFileSync(join(copy, 'dist', 'build-id'), 'another-build\n');
  return join(copy, 'bin', 'pgx.js');
}

const startBroker = (p: Project): number =>
  jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) })).pid as number;
const hookLog = (p: Project) =>
  readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('hooks through the sh launcher', () => {
  it('a subagent PreToolUse: no node process, the same bytes as the node path, answered by the broker', async () => {
    const p = brokerProject();
    startBroker(p);
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const node = countingNode();
    const env = hookEnv(p, { session_id: s.sessionId }, { PATH: node.path });
    const start = await entry('subagent-start', JSON.stringify(subagentStart(s, a)), env, p.dir);
    expect(start.status).toBe(0);
    const payload = JSON.stringify(preToolUseBash(s, "psql -c 'select 1'", { agentId: a }));
    const viaSh = await entry('pre-tool-use', payload, env, p.dir);
    expect(node.starts()).toBe(0); // neither hook started node
    const viaNode = await entry('pre-tool-use', payload, { ...env, PGX_SHELL_LAUNCHER: '0' }, p.dir);
    expect(node.starts()).toBe(1);
    expect(viaSh.status).toBe(0);
    expect(viaSh.stderr).toBe('');
    expect(viaSh.stdout).toBe(viaNode.stdout); // byte for byte, the trailing newline included
    expect(rewriteOf({ ...viaSh, signal: null, elapsedMs: 0, json: JSON.parse(viaSh.stdout) }).command).toContain(
      `--agent ${a}`,
    );
    // the parent's Bash and the other events: the node path's bytes too (nothing, for most)
    const parent = JSON.stringify(preToolUseBash(s, 'ls'));
    for (const [event, input] of [
      ['pre-tool-use', parent],
      ['user-prompt-submit', JSON.stringify(userPromptSubmit(s))],
      ['subagent-stop', JSON.stringify(subagentStop(s, a))],
    ] as const) {
      const before = node.starts();
      const sh = await entry(event, input, env, p.dir);
      expect(node.starts(), event).toBe(before);
      expect(sh.status, event).toBe(0);
      if (event !== 'subagent-stop')
        expect(sh.stdout, event).toBe((await entry(event, input, { ...env, PGX_SHELL_LAUNCHER: '0' }, p.dir)).stdout);
    }
    const lines = hookLog(p).filter((l) => l.agent_id === a && l.event === 'pre-tool-use');
    expect(lines.map((l) => l.via)).toEqual(['broker', 'broker']); // the sh path's and the node path's, both the broker's
  });

  for (const client of ['perl', 'curl'] as const) {
    it(`asking with ${client}: the broker's answer, no node; refused before the body (another build), node gets the payload whole; no secret in the client's argv`, async () => {
      const p = brokerProject();
      startBroker(p);
      const s = session(p.dir, p.dir);
      const a = newAgentId();
      const one = oneClientPath(client);
      const env = hookEnv(p, { session_id: s.sessionId }, { PATH: one.path });
      expect((await entry('subagent-start', JSON.stringify(subagentStart(s, a)), env, p.dir)).status).toBe(0);
      const payload = JSON.stringify(preToolUseBash(s, "psql -c 'select 1'", { agentId: a }));
      const viaClient = await entry('pre-tool-use', payload, env, p.dir);
      const calls = one.calls();
      expect(calls.map((c) => c.split(' ')[0])).toEqual([client, client]); // two hooks, two asks, no node
      for (const c of calls) {
        expect(c).toMatch(
          client === 'perl'
            ? /^perl -e .+ \d+ \S+\/h-[0-9a-f]{24}\.sock pid=\d+&build=[0-9a-f]{16}&event=(subagent-start|pre-tool-use)$/
            : /--unix-socket \S+\/h-[0-9a-f]{24}\.sock -H Expect: 100-continue -T - -X POST http:\/\/pgx\/hook\?pid=\d+&build=[0-9a-f]{16}&event=(subagent-start|pre-tool-use)$/,
        );
        for (const secret of knownSecrets()) expect(c).not.toContain(secret);
      }
      expect(viaClient.stdout).toBe(
        (await entry('pre-tool-use', payload, { ...env, PGX_SHELL_LAUNCHER: '0' }, p.dir)).stdout,
      );
      expect(
        rewriteOf({ ...viaClient, signal: null, elapsedMs: 0, json: JSON.parse(viaClient.stdout) }).command,
      ).toContain(`--agent ${a}`);
      // A launcher of another build: the broker refuses it before its body (409); the client read none of stdin, so
      // its node fallback (which asks this broker through PGX_LAUNCHER) answers the whole payload.
      const before = one.calls().length;
      const other = await entry(
        'pre-tool-use',
        payload,
        { ...env, PGX_LAUNCHER: launcherReal() },
        p.dir,
        anotherBuildLauncher(),
      );
      expect(
        one
          .calls()
          .slice(before)
          .map((c) => c.split(' ')[0]),
      ).toEqual([client, 'node']);
      expect(other.stdout).toBe(viaClient.stdout);
    });
  }

  it('a SessionStart with a broker running: no node; the env file gets the branch as node writes it, and the same answer; then a burst of prompts heartbeats the branch once', async () => {
    const p = brokerProject();
    startBroker(p);
    const node = countingNode();
    const envFiles = mkdtempSync(join(tmpdir(), 'pgx-envfile-'));
    temps.push(envFiles);
    const run = async (via: 'sh' | 'node') => {
      const s = session(p.dir, p.dir);
      const envFile = join(envFiles, via);
      const env = hookEnv(
        p,
        { session_id: s.sessionId },
        { PATH: node.path, CLAUDE_ENV_FILE: envFile, ...(via === 'node' ? { PGX_SHELL_LAUNCHER: '0' } : {}) },
      );
      const r = await entry('session-start', JSON.stringify(sessionStart(s)), env, p.dir);
      expect(r.status).toBe(0);
      return { r, s, file: readFileSync(envFile, 'utf8') };
    };
    const sh = await run('sh');
    expect(node.starts()).toBe(0); // the broker answered it: no node
    const viaNode = await run('node');
    expect(node.starts()).toBe(1);
    const branchOf = (out: string) =>
      /branch "([^"]+)"/.exec(JSON.parse(out).hookSpecificOutput.additionalContext)![1]!;
    const [b1, b2] = [branchOf(sh.r.stdout), branchOf(viaNode.r.stdout)];
    // the same answer and the same exports, but for each session's own branch (and its passfile)
    expect(sh.r.stdout.replaceAll(b1, 'B')).toBe(viaNode.r.stdout.replaceAll(b2, 'B'));
    expect(sh.file).toMatch(new RegExp(`^export PGDATABASE='?${b1}'?$`, 'm'));
    // (each session's branch has a role of its own, too)
    const plain = (file: string, b: string) =>
      file.replaceAll(b, 'B').replaceAll(/^export PGUSER='?([^'\n]+)'?$/m.exec(file)![1]!, 'R');
    expect(plain(sh.file, b1)).toBe(plain(viaNode.file, b2));
    for (const secret of knownSecrets()) expect(sh.file).not.toContain(secret);
    expect(
      hookLog(p)
        .filter((l) => l.event === 'session-start')
        .map((l) => l.via),
    ).toEqual(['broker', undefined]);

    // A burst of prompts (a fan-out's task notifications): the broker moves the session branch's idle deadline once.
    const env = hookEnv(p, { session_id: sh.s.sessionId }, { PATH: node.path });
    const row = async () => (await registryRows(p.name)).find((r) => r.name === b1)!;
    const prompts = [];
    for (let i = 0; i < 3; i++) {
      expect((await entry('user-prompt-submit', JSON.stringify(userPromptSubmit(sh.s)), env, p.dir)).stdout).toBe('');
      prompts.push((await row()).last_seen_at.getTime());
    }
    expect(
      hookLog(p)
        .filter((l) => l.event === 'user-prompt-submit')
        .map((l) => [l.outcome, l.branch, l.via]),
    ).toEqual([
      ['heartbeat', b1, 'broker'],
      ['heartbeat:recent', b1, 'broker'],
      ['heartbeat:recent', b1, 'broker'],
    ]);
    expect(new Set(prompts).size).toBe(1); // one UPDATE for the three
    expect(node.starts()).toBe(1); // (the node path's SessionStart above)
  });

  it('no broker, a stale socket, or a broker of another build: node does the work with the whole payload', async () => {
    const p = brokerProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const env = hookEnv(p, { session_id: s.sessionId });
    const payload = JSON.stringify(preToolUseBash(s, 'echo hi', { agentId: a }));
    // none at all: node answers (and starts the broker for next time)
    const first = await entry('pre-tool-use', payload, env, p.dir);
    expect(rewriteOf({ ...first, signal: null, elapsedMs: 0, json: JSON.parse(first.stdout) }).command).toContain(
      `--agent ${a}`,
    );
    await pollUntil(async () => readdirSync(p.sockets).some((f) => f.startsWith('h-')) || undefined, 15_000);
    runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env });
    // a stale socket file (a killed broker's): curl can't connect, and reads none of stdin
    await pollUntil(async () => !readdirSync(p.sockets).some((f) => f.startsWith('h-')) || undefined, 10_000);
    const stale = join(p.sockets, 'h-000000000000000000000000.sock');
    const holder = spawn(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(stale)}, () => console.log('up'))`,
    ]);
    await new Promise((r) => holder.stdout.once('data', r));
    holder.kill('SIGKILL'); // its socket file stays, and refuses connections
    await new Promise((r) => holder.once('exit', r));
    expect(existsSync(stale)).toBe(true);
    const second = await entry('pre-tool-use', payload, env, p.dir);
    expect(second.stdout).toBe(first.stdout);
    // a launcher of another build (a copy whose dist/build-id differs) meets this build's broker: refused before its
    // body is read (409), and its node fallback gets the payload whole
    startBroker(p);
    // (PGX_LAUNCHER: its node fallback then asks this broker too, and starts none of its own)
    const other = await entry(
      'pre-tool-use',
      payload,
      { ...env, PGX_LAUNCHER: launcherReal() },
      p.dir,
      anotherBuildLauncher(),
    );
    expect(JSON.parse(other.stdout).hookSpecificOutput.updatedInput.command).toContain(`--agent ${a}`);
    rmSync(stale, { force: true });
  });

  it('a broker that took the payload and went silent: a subagent PreToolUse is denied, never run unrouted', async () => {
    const p = brokerProject({ PGX_HOOK_DEADLINE_MS: '1000' }); // curl's --max-time: 3 s
    const pid = startBroker(p);
    const s = session(p.dir, p.dir);
    const env = hookEnv(p, { session_id: s.sessionId });
    process.kill(pid, 'SIGSTOP');
    try {
      const r = await entry(
        'pre-tool-use',
        JSON.stringify(preToolUseBash(s, 'echo hi', { agentId: newAgentId() })),
        env,
        p.dir,
      );
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout).hookSpecificOutput;
      expect(out.permissionDecision).toBe('deny');
      expect(out.permissionDecisionReason).toMatch(/did not run/);
      const quiet = await entry('user-prompt-submit', JSON.stringify(userPromptSubmit(s)), env, p.dir);
      expect([quiet.status, quiet.stdout]).toEqual([0, '']); // isolates nothing: says nothing, blocks nothing
      // The session's own commands go on with their database, and the user is told why (fail open, loudly).
      const started = await entry('session-start', JSON.stringify(sessionStart(s)), env, p.dir);
      expect(started.status).toBe(0);
      expect(JSON.parse(started.stdout).systemMessage).toMatch(
        /^pgx WARNING: its broker took this session's SessionStart hook but did not answer/,
      );
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it("a payload past the broker's 4 MiB: the answer node gives an oversized payload", async () => {
    const p = brokerProject();
    startBroker(p);
    const s = session(p.dir, p.dir);
    const env = hookEnv(p, { session_id: s.sessionId });
    const huge = JSON.stringify(preToolUseBash(s, 'echo ' + 'x'.repeat(5 * 1024 * 1024), { agentId: newAgentId() }));
    const sh = await entry('pre-tool-use', huge, env, p.dir);
    const viaNode = await entry('pre-tool-use', huge, { ...env, PGX_SHELL_LAUNCHER: '0' }, p.dir);
    expect(JSON.parse(sh.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(sh.stdout).toBe(viaNode.stdout);
  });

  it('ten sessions with different PG* environments: one broker, its connections bounded and shown by `broker status`', async () => {
    const p = brokerProject();
    const runtime = p.env.XDG_RUNTIME_DIR!;
    const payloads = Array.from({ length: 10 }, (_, i) => {
      const s = session(p.dir, p.dir);
      const pg = {
        PGHOST: `/nowhere/${i}`,
        PGPORT: String(6000 + i),
        PGUSER: `u${i}`,
        PGDATABASE: `session_${i}`,
        PGSSLMODE: 'disable',
        PGAPPNAME: `s${i}`,
      };
      return { s, env: hookEnv(p, { session_id: s.sessionId }, pg) };
    });
    // SessionStart (node: it starts the broker) for each, at once; then a subagent's PreToolUse for each, through sh
    await Promise.all(
      payloads.map(({ s, env }) =>
        entry(
          'session-start',
          JSON.stringify({
            session_id: s.sessionId,
            cwd: p.dir,
            hook_event_name: 'SessionStart',
            source: 'startup',
            transcript_path: '/dev/null',
          }),
          env,
          p.dir,
        ),
      ),
    );
    await pollUntil(async () => readdirSync(p.sockets).some((f) => f.startsWith('h-')) || undefined, 15_000);
    const answers = await Promise.all(
      payloads.map(({ s, env }) =>
        entry('pre-tool-use', JSON.stringify(preToolUseBash(s, 'echo hi', { agentId: newAgentId() })), env, p.dir),
      ),
    );
    for (const r of answers)
      expect(JSON.parse(r.stdout).hookSpecificOutput.updatedInput.command).toContain('pgx-routed');
    // Two starts racing (a start slower than the 5 s single-flight marker, on a loaded machine) leave a second
    // process for at most one watch tick (15 s here): the one whose socket was replaced sees it and exits.
    const ours = () =>
      processes().filter(
        (x) => isBroker(x) && readFileSync(`/proc/${x.pid}/environ`, 'utf8').includes(`XDG_RUNTIME_DIR=${runtime}\0`),
      );
    expect((await pollUntil(async () => (ours().length === 1 ? ours() : undefined), 20_000))?.length).toBe(1);
    const st = jsonOf(runPgx(['agent', 'broker', 'status', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
    expect(st.brokers.length).toBe(1);
    const b = st.brokers[0];
    expect(b.pool_limit).toBeGreaterThan(0);
    expect(b.pooled_connections).toBeLessThanOrEqual(b.pool_limit);
    expect(b.rss_bytes).toBeGreaterThan(0);
    console.log(
      `one broker for 10 PG* environments: ${b.requests} requests, ${b.pooled_connections}/${b.pool_limit} kept connection(s) to ${b.pooled_servers} server(s), RSS ${(b.rss_bytes / 1048576).toFixed(1)} MiB`,
    );
  });
});
