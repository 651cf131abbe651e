// `pgx mcp serve <name>`: pgx in front of a user's database MCP server (decision 490). Claude Code starts it in the
// entry's place, once per session, and shares it with every subagent; it starts a copy of the user's own server for
// each branch that calls (the session's, for the parent and for what is not a tool call; a subagent's own), one per
// branch at most, on first use, and stops it when the branch retires (retire-notices.ts). Outside a pgx project it
// runs the user's server as it was, untouched.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { attachOrEnsure } from '../engine/api.js';
import { idSchema } from '../engine/identity.js';
import { findConfigFile, loadConfig, type Config } from '../project/config.js';
import { PgxError } from '../lib/errors.js';
import { sweepCalls, takeCall } from './calls.js';
import { startChild, type ChildServer, type JsonRpc } from './child-server.js';
import { copyCommand } from './copy-command.js';
import { originalFields, withoutFrontVariables } from './front-entry.js';
import { Relay, type Copy, type Whose } from './relay.js';
import { retiredSince, watchNotices } from './retire-notices.js';

interface Running extends Copy {
  child: ChildServer;
  whose: Whose;
}

export interface FrontState {
  pid: number;
  server: string;
  project_dir: string;
  session: string | null;
  copies: { branch: string; pid: number | null; agent_id: string | null; started: string }[];
}

export function frontsDir(home: string): string {
  return join(home, 'mcp', 'fronts');
}

/** Runs the front until Claude Code closes its stdin (or signals it); resolves with the exit status. */
export async function serveFront(name: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const original = originalFields(env);
  if (!original)
    throw new PgxError(
      'CONFIG_INVALID',
      `\`pgx mcp serve ${name}\` found no original server in its environment (PGX_MCP_COMMAND).`,
      'Route the server again with `pgx mcp route ' + name + '`, or restore it with `pgx mcp unroute ' + name + '`.',
    );
  const projectDir = resolve(env.CLAUDE_PROJECT_DIR || process.cwd());
  const base = withoutFrontVariables(env);
  if (!findConfigFile(projectDir)) return passThrough(original, base);
  const config = loadConfig({ cwd: projectDir, env });
  return new Front(name, config, original, base).run();
}

/** Not a pgx project: the user's server runs exactly as its entry said, and pgx stays out of the way. */
function passThrough(original: { command: string; args?: string[] }, env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(original.command, original.args ?? [], { env, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
  return new Promise((res) => {
    child.once('error', (e) => {
      process.stderr.write(`pgx mcp: could not start ${original.command}: ${e.message}\n`);
      res(127);
    });
    child.once('exit', (code, signal) => res(code ?? (signal ? 128 : 1)));
  });
}

class Front {
  private readonly relay: Relay;
  private readonly byBranch = new Map<string, Running>();
  private readonly starting = new Map<string, Promise<Running>>();
  private sessionKey: string | undefined;

  constructor(
    private readonly name: string,
    private readonly config: Config,
    private readonly original: { command: string; args?: string[] },
    private readonly base: NodeJS.ProcessEnv,
  ) {
    this.relay = new Relay({
      toClient: (msg) => process.stdout.write(JSON.stringify(msg) + '\n'),
      sessionCopy: (init) => this.sessionCopy(init),
      copyFor: (whose, init) => this.copyFor(whose, init),
      takeCall: (id) => takeCall(config.home, id),
      server: name,
      projectDir: config.projectDir,
      log: (line) => this.log(line),
    });
  }

  private log(line: string): void {
    process.stderr.write(`pgx mcp ${this.name}: ${line}\n`);
  }

  async run(): Promise<number> {
    sweepCalls(this.config.home);
    const notices = watchNotices(this.config.home, () => void this.stopRetired());
    this.writeState();
    const stop = async () => {
      notices.close();
      await Promise.all([...this.byBranch.values()].map((c) => c.child.stop()));
      rmSync(this.statePath(), { force: true });
    };
    const ended = new Promise<void>((res) => {
      createInterface({ input: process.stdin })
        .on('line', (line) => {
          let msg: unknown;
          try {
            msg = JSON.parse(line);
          } catch {
            return;
          }
          if (typeof msg === 'object' && msg !== null && !Array.isArray(msg))
            void this.relay.fromClient(msg as JsonRpc).catch((e: unknown) => this.log((e as Error).message));
        })
        .on('close', () => res());
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => res());
    });
    await ended;
    await stop();
    return 0;
  }

  /** The session's copy: the session Claude Code started this front for (its environment says which). */
  private sessionCopy(init: unknown): Promise<Copy> {
    const session = idSchema.safeParse(this.base.CLAUDE_CODE_SESSION_ID);
    if (!session.success)
      return Promise.reject(
        new Error(
          'Claude Code gave this MCP server no session id (CLAUDE_CODE_SESSION_ID), so pgx cannot tell which ' +
            "session's branch it serves",
        ),
      );
    this.sessionKey ??= session.data;
    return this.copyFor({ session_id: this.sessionKey, agent_id: null }, init);
  }

  private copyFor(whose: Whose, init: unknown): Promise<Copy> {
    const key = whose.agent_id === null ? `s:${whose.session_id}` : `a:${whose.session_id}:${whose.agent_id}`;
    const live = [...this.byBranch.values()].find(
      (c) => c.whose.session_id === whose.session_id && c.whose.agent_id === whose.agent_id,
    );
    if (live) return Promise.resolve(live);
    let p = this.starting.get(key);
    if (!p) {
      p = this.start(whose, init).finally(() => this.starting.delete(key));
      this.starting.set(key, p);
    }
    return p;
  }

  private async start(whose: Whose, init: unknown): Promise<Running> {
    const target =
      whose.agent_id === null
        ? { sessionId: whose.session_id }
        : { sessionId: whose.session_id, agentId: whose.agent_id };
    const ensured = await attachOrEnsure(this.config, target, { quiet: true });
    const running = this.byBranch.get(ensured.branch);
    if (running) return running; // one copy per branch
    const cmd = copyCommand(this.original, this.base, ensured.conn, this.config.projectDir);
    if ('refused' in cmd)
      throw new Error(`pgx cannot run the MCP server "${this.name}" on your database branch: ${cmd.refused}.`);
    const isSession = whose.agent_id === null && whose.session_id === this.sessionKey;
    let copy: Running;
    const child = startChild(
      { ...cmd, cwd: this.config.projectDir },
      {
        message: (msg) => this.relay.fromCopy(copy, msg, isSession),
        exit: (why) => {
          if (this.byBranch.get(ensured.branch) === copy) this.byBranch.delete(ensured.branch);
          this.relay.copyGone(copy, why);
          this.log(`copy for ${ensured.branch} ${why}`);
          this.writeState();
        },
      },
    );
    copy = { branch: ensured.branch, startedAt: Date.now(), send: (m) => child.send(m), child, whose };
    this.byBranch.set(ensured.branch, copy);
    this.log(`copy for ${ensured.branch} started (pid ${child.pid}; ${cmd.replaced.join(', ')} point at it)`);
    this.writeState();
    try {
      await this.relay.handshake(copy, init);
    } catch (e) {
      await child.stop();
      throw new Error(
        `pgx started the MCP server "${this.name}" for branch ${ensured.branch}, but ${(e as Error).message}.`,
      );
    }
    return copy;
  }

  /** Stops the copies whose branch retired after they started. */
  private async stopRetired(): Promise<void> {
    if (this.byBranch.size === 0) return;
    const oldest = Math.min(...[...this.byBranch.values()].map((c) => c.startedAt));
    const retired = retiredSince(this.config.home, oldest);
    for (const [branch, copy] of this.byBranch) {
      const at = retired.get(branch);
      if (at === undefined || at < copy.startedAt) continue;
      this.byBranch.delete(branch);
      this.log(`branch ${branch} retired: stopping its copy`);
      await copy.child.stop();
    }
    this.writeState();
  }

  private statePath(): string {
    return join(frontsDir(this.config.home), `${process.pid}.json`);
  }

  /** What `pgx mcp ls` and the doctor show of this front: its copies, one per branch. */
  private writeState(): void {
    const state: FrontState = {
      pid: process.pid,
      server: this.name,
      project_dir: this.config.projectDir,
      session: this.sessionKey ?? null,
      copies: [...this.byBranch.values()].map((c) => ({
        branch: c.branch,
        pid: c.child.pid ?? null,
        agent_id: c.whose.agent_id,
        started: new Date(c.startedAt).toISOString(),
      })),
    };
    try {
      mkdirSync(frontsDir(this.config.home), { recursive: true, mode: 0o700 });
      writeFileSync(this.statePath(), JSON.stringify(state) + '\n', { mode: 0o600 });
    } catch {
      // a state file is for looking at; the front works without it
    }
  }
}
