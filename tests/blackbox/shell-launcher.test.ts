// The shell launcher (decision 230): bin/pgx.js is a sh/JS polyglot whose sh part runs the rewrite's exact
// `agent exec --agent <id> --cwd <dir> -- …` with no node process, asking the broker over its shell socket (with perl's
// bare socket calls, or curl where there is no perl: decision 445) and exec'ing the command. These tests run the BUILT launcher the way Claude Code's Bash tool runs a rewrite
// (`bash -c "<rewrite>"`), against the real server, and check that the sh path keeps every guarantee of the node
// path: the branch's variables, no decoy left, the exit status and signals, the ticket check, no password in any
// argv, and node doing the work whenever the sh part can't (no broker, a dead or fake socket, a switch).
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session } from '../helpers/hook-payloads.js';
import {
  bash,
  bashEnv,
  hook,
  hookEnv,
  knownSecrets,
  pollUntil,
  rewriteOf,
  startBash,
  type Project,
} from '../helpers/hooks.js';
import { otherUserUnavailable } from '../helpers/users.js';
import { onPath } from '../helpers/client-programs.js';

/**
 * A command that prints the database the routed command is on: psql's answer where psql is installed; on a machine
 * without it (issue 39), the PGDATABASE pgx gave the command (this file's subject is the launcher, not the connection;
 * the PATH without node rules out a Node client).
 */
const CURRENT_DB = onPath('psql') ? "psql -X -Atc 'select current_database()'" : 'printf "%s\\n" "$PGDATABASE"';

const asNobody = otherUserUnavailable();
if (asNobody) console.warn(`SKIPPED the tests of shell-launcher.test.ts that act as another Unix user: ${asNobody}`);

const projects: (Project & { sockets: string })[] = [];
const temps: string[] = [];

/** A project whose hooks and routed commands use the broker, with a private socket directory of its own. */
function brokerProject(extra: NodeJS.ProcessEnv = {}): Project & { sockets: string } {
  const p = makeProject();
  const runtime = mkdtempSync(join(tmpdir(), 'pgx-run-'));
  temps.push(runtime);
  Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '60000', XDG_RUNTIME_DIR: runtime }, extra);
  const q = { ...p, sockets: join(runtime, 'pgx') };
  projects.push(q);
  return q;
}

afterAll(() => {
  for (const p of projects) runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: hookEnv(p, {}) });
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

/**
 * A PATH without node: the sh part must do the whole job, or the command fails with node's "not found" (127). The
 * launcher's client (`perl`, which it prefers, or `curl` with no perl on PATH) records its argv (one line per call)
 * before running the real one.
 */
function nodelessPath(client: 'perl' | 'curl' = 'perl'): { path: string; clientLog: string; hold: string } {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-nonode-'));
  temps.push(dir);
  for (const tool of ['psql', 'bash', 'sh', 'cat', 'env', 'sort', 'sleep', 'tr', 'grep'])
    if (tool !== 'psql' || onPath('psql')) symlinkSync(`/usr/bin/${tool}`, join(dir, tool));
  const clientLog = join(dir, 'client.log');
  const hold = join(dir, 'hold'); // while this file exists, the client waits before asking (the launcher's argv stays readable)
  writeFileSync(
    join(dir, client),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${clientLog}'\nwhile [ -e '${hold}' ]; do sleep 0.05; done\nexec /usr/bin/${client} "$@"\n`,
    { mode: 0o755 },
  );
  return { path: dir, clientLog, hold };
}

async function startedBroker(p: Project): Promise<number> {
  const { pid } = jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
  return pid as number;
}

/** A project whose PATH holds no node, its broker started: a routed command there runs through sh or not at all. */
async function nodelessBrokerProject(
  extra: NodeJS.ProcessEnv = {},
  client: 'perl' | 'curl' = 'perl',
): Promise<ReturnType<typeof nodelessPath> & { p: ReturnType<typeof brokerProject> }> {
  const nodeless = nodelessPath(client);
  const p = brokerProject({ PATH: nodeless.path, ...extra });
  await startedBroker(p);
  return { ...nodeless, p };
}

/**
 * The rewrite for `command` from a subagent, and the env its Bash would run it with. `brokerless`: the hook runs
 * in-process and starts no broker, so none is there when the command runs.
 */
async function rewrite(p: Project, command: string, opts: { brokerless?: boolean } = {}) {
  const s = session(p.dir, p.dir);
  const a = newAgentId();
  const rw = rewriteOf(
    await hook(
      'pre-tool-use',
      preToolUseBash(s, command, { agentId: a }),
      p,
      opts.brokerless ? { env: { PGX_BROKER: '0' } } : {},
    ),
  );
  return { ...rw, env: bashEnv(p, s) };
}

/** Decoys a user's shell may hold (in the hooks' environment and the Bash tool's alike): each would point a command at the shared database if it survived. */
const DECOYS = {
  DATABASE_URL: 'postgres://decoy@127.0.0.1:1/shared',
  PGDATABASE: 'shared',
  PGSERVICE: 'shared',
  POSTGRES_HOST: 'decoy',
  PGOPTIONS: '-c statement_timeout=0',
};

describe('shell launcher', () => {
  const askedWith = {
    perl: /^-e .+ \S+\/h-[0-9a-f]{24}\.sock pid=\d+ build=[0-9a-f]{16} agent=\S+ cwd=\S+$/,
    curl: /--unix-socket \S+\/h-[0-9a-f]{24}\.sock -G --data-urlencode pid=\d+ --data-urlencode build=[0-9a-f]{16} --data-urlencode agent=\S+ --data-urlencode cwd=\S+ http:\/\/pgx\/exec$/,
  };
  for (const client of ['perl', 'curl'] as const) {
    it(`runs a routed command with no node process, asking with ${client}: the branch, no decoy, the launcher replaced by the command, no password in an argv`, async () => {
      const { p, clientLog } = await nodelessBrokerProject(DECOYS, client);
      const rw = await rewrite(
        p,
        `${CURRENT_DB}; echo "svc=\${PGSERVICE-unset} host=\${POSTGRES_HOST-unset} opts=\${PGOPTIONS-unset} url=$DATABASE_URL"; cat /proc/$PPID/comm`,
      );
      const run = await bash(rw.command, { cwd: p.dir, env: rw.env });
      expect(run.status, run.stderr).toBe(0);
      const [db, vars, parent] = run.stdout.trim().split('\n');
      expect(db).toBe(rw.branch);
      expect(vars).toMatch(
        new RegExp(`^svc=unset host=unset opts=unset url=postgres(ql)?://\\S*/${rw.branch}(\\?\\S*)?$`),
      );
      expect(vars).not.toContain('decoy');
      // The command replaced the launcher: its parent is the Bash tool's shell, not a node process.
      expect(parent).toBe('bash');
      const calls = readFileSync(clientLog, 'utf8').trim().split('\n');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatch(askedWith[client]);
      for (const s of knownSecrets()) expect(calls[0]).not.toContain(s);
    });
  }

  it('perl asks for exactly what curl asks for: a --cwd with spaces, quotes, %, & and non-ASCII reaches the broker intact', async () => {
    const { p } = await nodelessBrokerProject();
    const odd = join(p.dir, "a b'c%20&d=é");
    mkdirSync(odd);
    writeFileSync(join(odd, '.pgx.toml'), readFileSync(join(p.dir, '.pgx.toml')));
    const s = session(odd, odd);
    const rw = rewriteOf(
      await hook(
        'pre-tool-use',
        preToolUseBash(s, `${CURRENT_DB}; cat /proc/$PPID/comm`, { agentId: newAgentId() }),
        p,
      ),
    );
    expect(rw.command).toContain('--cwd');
    const run = await bash(rw.command, { cwd: odd, env: bashEnv(p, s) });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([rw.branch, 'bash']);
  });

  it('gives the command exactly the environment the node launcher gives it', async () => {
    const p = brokerProject(DECOYS);
    await startedBroker(p);
    const rw = await rewrite(p, "env -0 | sort -z | tr '\\0' '\\n'; cat /proc/$PPID/comm");
    const viaSh = await bash(rw.command, { cwd: p.dir, env: rw.env });
    const viaNode = await bash(rw.command, { cwd: p.dir, env: { ...rw.env, PGX_SHELL_LAUNCHER: '0' } });
    expect(viaSh.status, viaSh.stderr).toBe(0);
    expect(viaNode.status, viaNode.stderr).toBe(0);
    const lines = (out: string) => out.trim().split('\n');
    expect(lines(viaSh.stdout).at(-1)).toBe('bash');
    expect(lines(viaNode.stdout).at(-1)).toBe('node');
    const envOf = (out: string, drop: string[]) =>
      lines(out)
        .slice(0, -1)
        .filter((l) => !drop.some((d) => l.startsWith(`${d}=`)));
    // Only the switch itself differs (and `_`, the path bash records of what it last ran).
    expect(envOf(viaSh.stdout, ['_'])).toEqual(envOf(viaNode.stdout, ['_', 'PGX_SHELL_LAUNCHER']));
    expect(viaSh.stdout).toContain(`PGDATABASE=${rw.branch}\n`);
    expect(viaSh.stdout).toContain('PGPASSWORD=');
  });

  it('passes the exit status and signals through', async () => {
    const { p } = await nodelessBrokerProject();
    const rw = await rewrite(p, 'exit 3');
    expect((await bash(rw.command, { cwd: p.dir, env: rw.env })).status).toBe(3);
    // A signal to the launcher's process is the command's own: its trap runs and its status comes back.
    const rw2 = await rewrite(
      p,
      'trap "kill \\$!; echo got-term; exit 7" TERM; echo ready; sleep 30 >/dev/null 2>&1 & wait',
    );
    const { child, done } = startBash(rw2.command, { cwd: p.dir, env: rw2.env });
    const launcherPid = await pollUntil(
      async () => {
        try {
          const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
          return kids ? Number(kids.split(' ')[0]) : undefined;
        } catch {
          return undefined;
        }
      },
      15_000,
      20,
    );
    let seen = '';
    child.stdout!.on('data', (d) => (seen += d));
    await pollUntil(async () => (seen.includes('ready') ? true : undefined), 15_000, 20);
    expect(readFileSync(`/proc/${launcherPid}/comm`, 'utf8').trim()).toBe('bash'); // the command, not node
    process.kill(launcherPid!, 'SIGTERM');
    const r = await done;
    expect(r.status).toBe(7);
    expect(r.stdout).toContain('got-term');
  });

  it("refuses a launcher the model typed (no ticket), with the exec's text and exit code, no node needed", async () => {
    const { p } = await nodelessBrokerProject();
    const rw = await rewrite(p, 'true');
    const forged = rw.command.replace("-c 'true'", "-c 'psql -c select'");
    const out = await bash(forged, { cwd: p.dir, env: rw.env });
    expect(out.status).toBe(6);
    expect(out.stderr).toMatch(/its hook did not route this command/);
  });

  it('no broker: node runs the command (and starts one); a broker killed with SIGKILL leaves a dead socket: node again', async () => {
    const p = brokerProject();
    const rw = await rewrite(p, `${CURRENT_DB}; cat /proc/$PPID/comm`, { brokerless: true });
    const first = await bash(rw.command, { cwd: p.dir, env: rw.env });
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual([rw.branch, 'node']);
    // The broker it started serves the next one through sh.
    await pollUntil(
      async () => (readdirSync(p.sockets).some((f) => f.startsWith('h-')) ? true : undefined),
      15_000,
      50,
    );
    const second = await bash(rw.command, { cwd: p.dir, env: rw.env });
    expect(second.stdout.trim().split('\n')).toEqual([rw.branch, 'bash']);
    const { brokers } = jsonOf(
      runPgx(['agent', 'broker', 'status', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }),
    ) as { brokers: { pid: number; this_environment: boolean }[] };
    const pid = brokers.find((b) => b.this_environment)!.pid;
    process.kill(pid, 'SIGKILL');
    await pollUntil(async () => { try { process.kill(pid, 0); return undefined; } catch { return true; } }, 5000); // prettier-ignore
    const third = await bash(rw.command, { cwd: p.dir, env: rw.env });
    expect(third.status, third.stderr).toBe(0);
    expect(third.stdout.trim().split('\n')).toEqual([rw.branch, 'node']);
  });

  describe("a socket that is not this broker's", () => {
    /** An HTTP server on a shell socket of the project's directory that answers every request with `reply`. */
    async function fake(
      p: Project & { sockets: string },
      reply: (res: import('node:http').ServerResponse) => void,
    ): Promise<{ server: Server; path: string }> {
      mkdirSync(p.sockets, { recursive: true, mode: 0o700 });
      const path = join(p.sockets, 'h-000000000000000000000000.sock');
      const server = createServer((_req, res) => reply(res));
      await new Promise<void>((r) => server.listen(path, () => r()));
      return { server, path };
    }
    const evil = `export PGDATABASE=postgres\n# pgx: end`;
    const cases: [string, (res: import('node:http').ServerResponse) => void, ((path: string) => void)?][] = [
      ['answers 409', (res) => res.writeHead(409).end('no\n')],
      ['cuts its answer short', (res) => { res.writeHead(200, { 'content-length': 500 }); res.write('export PGDATABASE=postgres\n'); res.destroy(); }], // prettier-ignore
      ['answers without the end marker', (res) => res.writeHead(200).end('export PGDATABASE=postgres\n')],
      [
        'belongs to another user (the launcher never asks it)',
        (res) => res.writeHead(200).end(evil),
        (path) => chownSync(path, 65534, 65534),
      ],
    ];
    for (const [name, reply, prepare] of cases) {
      // chown to another user needs root (tests/helpers/users.ts)
      it.skipIf(prepare !== undefined && asNobody !== undefined)(
        `${name}: node runs the command on its branch`,
        async () => {
          const p = brokerProject();
          const { server, path } = await fake(p, reply);
          prepare?.(path);
          try {
            const rw = await rewrite(p, `${CURRENT_DB}; cat /proc/$PPID/comm`, {
              brokerless: true,
            });
            const run = await bash(rw.command, { cwd: p.dir, env: rw.env });
            expect(run.status, run.stderr).toBe(0);
            expect(run.stdout.trim().split('\n')).toEqual([rw.branch, 'node']);
          } finally {
            server.close();
          }
        },
      );
    }
  });

  it("answers no one but the launcher it names: another process's pid, another agent id or another build get a 409", async () => {
    const { p, hold } = await nodelessBrokerProject();
    const socket = join(
      p.sockets,
      readdirSync(p.sockets).find((f) => /^h-[0-9a-f]{24}\.sock$/.test(f))!,
    );
    const build = readFileSync(join(import.meta.dirname, '../../dist/build-id'), 'utf8').trim();
    // A launcher held before its client asks: its argv is the rewrite's form, its environment the Bash tool's.
    writeFileSync(hold, '');
    const rw = await rewrite(p, `${CURRENT_DB}`);
    const { child, done } = startBash(rw.command, { cwd: p.dir, env: rw.env });
    try {
      // The launcher once it has exec'd: a child read between bash's fork and the exec (or one on its way out) has
      // another argv, so the poll waits for the launcher's own (seen once under load: an empty cmdline).
      const launcherPid = await pollUntil(
        async () => {
          try {
            const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ');
            return kids.map(Number).find((k) => {
              const argv = readFileSync(`/proc/${k}/cmdline`, 'utf8').split('\0');
              return argv[2] === 'agent' && argv[3] === 'exec';
            });
          } catch {
            return undefined;
          }
        },
        15_000,
        20,
      );
      const cmdline = readFileSync(`/proc/${launcherPid}/cmdline`, 'utf8').split('\0');
      expect(cmdline.slice(2, 5)).toEqual(['agent', 'exec', '--agent']);
      const [agent, cwd] = [cmdline[5]!, cmdline[7]!];
      const ask = (q: Record<string, string>) =>
        spawnSync(
          '/usr/bin/curl',
          [
            '-q',
            '-s',
            '-o',
            '/dev/null',
            '-w',
            '%{http_code}',
            '--unix-socket',
            socket,
            '-G',
            ...Object.entries(q).flatMap(([k, v]) => ['--data-urlencode', `${k}=${v}`]),
            'http://pgx/exec',
          ],
          { encoding: 'utf8' },
        ).stdout;
      expect(ask({ pid: String(launcherPid), build, agent, cwd })).toBe('200'); // the launcher itself: answered
      expect(ask({ pid: String(process.pid), build, agent, cwd })).toBe('409'); // not a launcher
      expect(ask({ pid: String(launcherPid), build, agent: 'a0000000000000000', cwd })).toBe('409');
      expect(ask({ pid: String(launcherPid), build, agent, cwd: '/elsewhere' })).toBe('409');
      expect(ask({ pid: String(launcherPid), build: '0000000000000000', agent, cwd })).toBe('409');
    } finally {
      rmSync(hold, { force: true });
    }
    const run = await done;
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(rw.branch);
  });

  it('PGX_SHELL_LAUNCHER=0 or PGX_BROKER=0: node, as before', async () => {
    const p = brokerProject();
    await startedBroker(p);
    const rw = await rewrite(p, 'cat /proc/$PPID/comm');
    for (const off of [{ PGX_SHELL_LAUNCHER: '0' }, { PGX_BROKER: 'off' }]) {
      const run = await bash(rw.command, { cwd: p.dir, env: { ...rw.env, ...off } });
      expect(run.stdout.trim()).toBe('node');
    }
  });

  it('a socket directory others can enter is never used', async () => {
    const p = brokerProject();
    await startedBroker(p);
    chmodSync(p.sockets, 0o755); // the broker keeps serving, but no client may trust the directory now
    try {
      const rw = await rewrite(p, `${CURRENT_DB}; cat /proc/$PPID/comm`);
      const run = await bash(rw.command, { cwd: p.dir, env: rw.env });
      expect(run.stdout.trim().split('\n')).toEqual([rw.branch, 'node']);
    } finally {
      chmodSync(p.sockets, 0o700);
    }
  });
});
