// The broker (src/broker/): hooks and routed commands hand their work to a resident pgx over a unix socket. These
// tests run the BUILT CLI the way Claude Code does, with the broker on, and check two things: that the broker's
// answers are the in-process ones (routing, exec, retire), and that every way a broker can fail (absent, killed with
// a stale socket, closing without an answer, garbage, never answering, a socket directory others can enter) leaves
// the hook answering correctly in its own process, or, for a subagent's command, denied: never run unrouted.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, subagentStart, subagentStop } from '../helpers/hook-payloads.js';
import {
  bash,
  bashEnv,
  branchFromContext,
  hook,
  hookEnv,
  lsBranches,
  pollUntil,
  rewriteOf,
  routeAndRun,
  type Project,
} from '../helpers/hooks.js';

const projects: Project[] = [];

/** A project whose hooks use the broker, with a private socket directory of its own. */
function brokerProject(extra: NodeJS.ProcessEnv = {}): Project & { sockets: string } {
  const p = makeProject();
  const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
  Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '60000', XDG_RUNTIME_DIR: runtime }, extra);
  projects.push(p);
  return { ...p, sockets: join(runtime, 'pgx') };
}

afterAll(() => {
  for (const p of projects) runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: hookEnv(p, {}) });
});

/** `agent broker status --json` in the hooks' environment (the broker is per environment). */
function status(p: Project, env: NodeJS.ProcessEnv = {}) {
  return jsonOf(
    runPgx(['agent', 'broker', 'status', '--json'], { cwd: p.dir, env: { ...hookEnv(p, {}), ...env } }),
  ) as {
    enabled: boolean;
    socket: string | null;
    running: boolean;
    brokers: { pid: number; requests: number; this_environment: boolean }[];
  };
}

const ownBroker = (p: Project) => status(p).brokers.find((b) => b.this_environment);

/** The hook log's lines, newest last. */
function logLines(p: Project): { event: string; outcome: string; agent_id: string | null; via?: string }[] {
  const file = join(p.home, 'agent', 'hooks.log');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [];
}
const lastLog = (p: Project) => logLines(p).at(-1)!;

describe('broker', () => {
  it('SubagentStart, PreToolUse, the routed command and SubagentStop all go through a running broker, with the in-process answers', async () => {
    const p = brokerProject();
    const started = jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
    expect(started.pid).toBeGreaterThan(0);
    const s = session(p.dir, p.dir);
    const agents = [newAgentId(), newAgentId(), newAgentId()];
    const branches = (await Promise.all(agents.map((a) => hook('subagent-start', subagentStart(s, a), p)))).map(
      branchFromContext,
    );
    expect(new Set(branches).size).toBe(3);
    // Each subagent's command lands on its own branch, through the broker's exec.
    const runs = await Promise.all(agents.map((a) => routeAndRun(p, s, a, "psql -X -Atc 'select current_database()'")));
    for (const [i, { rewrite, run }] of runs.entries()) {
      expect(run.status, run.stderr).toBe(0);
      expect(rewrite.branch).toBe(branches[i]);
      expect(run.stdout.trim()).toBe(branches[i]);
    }
    const stopped = await hook('subagent-stop', subagentStop(s, agents[0]!), p);
    expect(stopped.status).toBe(0);
    const ls = await lsBranches(p);
    expect(ls.find((b) => b.name === branches[0])?.state ?? 'gone').not.toBe('active');
    expect(
      ls
        .filter((b) => b.state === 'active')
        .map((b) => b.name)
        .sort(),
    ).toEqual(branches.slice(1).sort());
    // Every hook of this session was answered by the broker, and it served the three routed commands too.
    const lines = logLines(p).filter((l) => l.agent_id !== null);
    expect(lines.length).toBe(7);
    expect(
      lines.every((l) => l.via === 'broker'),
      JSON.stringify(lines),
    ).toBe(true);
    const b = ownBroker(p)!;
    expect(b.pid).toBe(started.pid);
    expect(b.requests).toBeGreaterThanOrEqual(10); // 7 hooks + 3 execs (+ the status calls)
  });

  it('a refusal comes back from the broker as the in-process exec says it: the exit code and the hint', async () => {
    const p = brokerProject();
    runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) });
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const rw = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, 'true', { agentId: a }), p));
    // The same launcher form, with a command its hook never routed (no ticket): refused, exit 6.
    const forged = rw.command.replace("-c 'true'", "-c 'psql -c select'");
    const out = await bash(forged, { cwd: p.dir, env: bashEnv(p, s) });
    expect(out.status).toBe(6);
    expect(out.stderr).toMatch(/its hook did not route this command/);
    const before = ownBroker(p)!.requests;
    expect(before).toBeGreaterThanOrEqual(2);
  });

  it('no broker running: the first hook answers in-process and starts one, which answers the next', async () => {
    const p = brokerProject();
    expect(status(p).running).toBe(false);
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const first = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, 'echo one', { agentId: a }), p));
    expect(lastLog(p).via).toBeUndefined();
    await pollUntil(async () => status(p).running || undefined, 15_000, 100);
    const second = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, 'echo one', { agentId: a }), p));
    expect(lastLog(p).via).toBe('broker');
    expect(second.command).toBe(first.command);
  });

  it('a broker killed with SIGKILL leaves its socket behind: hooks still answer, and a new broker takes the name', async () => {
    const p = brokerProject();
    const { pid } = jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
    const socket = status(p).socket!;
    process.kill(pid, 'SIGKILL');
    await pollUntil(async () => { try { process.kill(pid, 0); return undefined; } catch { return true; } }, 5000); // prettier-ignore
    expect(existsSync(socket)).toBe(true); // stale: nobody listens
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const { run, rewrite } = await routeAndRun(p, s, a, "psql -X -Atc 'select current_database()'");
    expect(run.stdout.trim()).toBe(rewrite.branch);
    const next = await pollUntil(async () => ownBroker(p), 15_000, 100);
    expect(next?.pid).not.toBe(pid);
  });

  describe('a broker that misbehaves (a fake one on the socket)', () => {
    /** Listens on the project's broker socket and answers every request with `reply` (or never). */
    async function fakeBroker(
      p: Project & { sockets: string },
      reply: 'close' | 'garbage' | 'fallback' | 'silent',
    ): Promise<Server> {
      const open = new Set<Socket>();
      mkdirSync(p.sockets, { recursive: true, mode: 0o700 });
      const socket = status(p).socket!;
      expect(socket).toContain(p.sockets);
      const server = createServer({ allowHalfOpen: true }, (c) => {
        open.add(c);
        c.on('close', () => open.delete(c));
        c.on('error', () => {});
        c.on('end', () => {
          if (reply === 'close') c.destroy();
          else if (reply === 'garbage') c.end('{"ok": tru');
          else if (reply === 'fallback') c.end('{"fallback":"test"}\n');
          // silent: keeps the connection open, answers nothing
        });
        c.resume();
      });
      await new Promise<void>((r) => server.listen(socket, () => r()));
      server.on('close', () => open.forEach((c) => c.destroy()));
      const close = server.close.bind(server);
      server.close = ((cb?: (err?: Error) => void) => {
        open.forEach((c) => c.destroy());
        return close(cb);
      }) as typeof server.close;
      return server;
    }

    for (const reply of ['close', 'garbage', 'fallback'] as const) {
      it(`answers ${reply}: the hook and the routed command do the work in their own process`, async () => {
        const p = brokerProject();
        const server = await fakeBroker(p, reply);
        try {
          const s = session(p.dir, p.dir);
          const a = newAgentId();
          const start = await hook('subagent-start', subagentStart(s, a), p);
          const { run, rewrite } = await routeAndRun(p, s, a, "psql -X -Atc 'select current_database()'");
          expect(rewrite.branch).toBe(branchFromContext(start));
          expect(run.status, run.stderr).toBe(0);
          expect(run.stdout.trim()).toBe(rewrite.branch);
          expect(logLines(p).every((l) => l.via === undefined)).toBe(true);
        } finally {
          server.close();
        }
      });
    }

    it('takes the request and never answers: a subagent hears its branch is not ready, its command is denied (never run unrouted); other hooks answer nothing', async () => {
      const p = brokerProject({ PGX_HOOK_DEADLINE_MS: '1000' });
      const server = await fakeBroker(p, 'silent');
      try {
        const s = session(p.dir, p.dir);
        const a = newAgentId();
        const start = await hook('subagent-start', subagentStart(s, a), p);
        expect(start.json?.hookSpecificOutput?.hookEventName).toBe('SubagentStart');
        expect(start.json.hookSpecificOutput.additionalContext).toMatch(/broker did not answer in time/);
        expect(start.json.hookSpecificOutput.additionalContext).toMatch(
          /refused \(never run against a shared database\)/,
        );
        const r = await hook('pre-tool-use', preToolUseBash(s, 'psql -c "drop table users"', { agentId: a }), p);
        expect(r.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
        expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(/broker did not answer/);
        expect(r.elapsedMs).toBeLessThan(20_000);
        const stop = await hook('subagent-stop', subagentStop(s, a), p);
        expect(stop.stdout).toBe('');
        // The parent's commands never need the broker.
        const parent = await hook('pre-tool-use', preToolUseBash(s, 'ls'), p);
        expect(parent.stdout).toBe('');
      } finally {
        server.close();
      }
    });
  });

  it('a socket directory others can enter is not used: no broker, every hook in its own process', async () => {
    const p = brokerProject();
    mkdirSync(p.sockets, { recursive: true, mode: 0o700 });
    chmodSync(p.sockets, 0o755);
    try {
      // said with an exit code (decision 443), never passed over as "no broker"
      const st = runPgx(['agent', 'broker', 'status'], { cwd: p.dir, env: hookEnv(p, {}) });
      expect(st.status).toBe(6);
      expect(st.stderr).toContain('not a private directory of yours');
      const s = session(p.dir, p.dir);
      const a = newAgentId();
      const { run, rewrite } = await routeAndRun(p, s, a, "psql -X -Atc 'select current_database()'");
      expect(run.stdout.trim()).toBe(rewrite.branch);
      expect(lastLog(p).via).toBeUndefined();
      expect(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }).status).toBe(6);
    } finally {
      rmSync(p.sockets, { recursive: true, force: true });
    }
  });

  it('PGX_BROKER=0: no broker is started or used', async () => {
    const p = brokerProject({ PGX_BROKER: '0' });
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    rewriteOf(await hook('pre-tool-use', preToolUseBash(s, 'true', { agentId: a }), p));
    rewriteOf(await hook('pre-tool-use', preToolUseBash(s, 'true', { agentId: a }), p));
    expect(logLines(p).every((l) => l.via === undefined)).toBe(true);
    expect(existsSync(p.sockets)).toBe(false);
    const st = status(p);
    expect(st.enabled).toBe(false);
  });

  it('stop: every broker of the user in that socket directory ends, and removes its socket', async () => {
    const p = brokerProject();
    jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
    const socket = status(p).socket!;
    const r = jsonOf(runPgx(['agent', 'broker', 'stop', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
    expect(r.stopped.length).toBe(1);
    await pollUntil(async () => !existsSync(socket) || undefined, 5000);
    expect(status(p).running).toBe(false);
  });
});
