// `pgx agent exec`: ensure the branch, then run the command with libpq's environment pointing at it. The command
// text is passed through untouched (no shell of ours in between); stdio is inherited, signals forwarded, and the
// exit status passed through (128 + n when the child dies of signal n).
import { resolve } from 'node:path';
import { loadConfig, type Config } from '../project/config.js';
import { PgxError } from '../lib/errors.js';
import { attachOrEnsure, Engine, withEngine, type EnsureOptions, type EnsureResult, type ForkRequest, type OpenOptions, type Target } from '../engine/api.js';
import { targetFrom } from '../engine/identity.js';
import { libpqEnv, pinAgainstShellStartup } from '../server/libpq-env.js';
import { hasTicket } from './routing-ticket.js';
import { FORWARDED, spawnCommand, type CommandRun } from './exec-spawn.js';
import { signalStatus } from '../lib/processes.js';

export interface ExecReport {
  agent_id: string | null;
  id: string | null;
  branch: string;
  source: string | null;
  created: string;
  fresh: boolean;
  method: string;
  elapsed_ms: number;
  status: number;
  retired?: boolean;
  /** --id: what the end of this exec's lease did (exec-lease.ts): retired, kept (--keep), other-leases … */
  lease?: string;
  /** The command could not be started (status 126/127/125). */
  spawn_error?: string;
}

/** From Claude Code's Bash tool (CLAUDECODE=1), a subagent's exec runs only what pgx's hook routed (routing-ticket.ts). */
function refuseUnrouted(config: Config, t: Target, command: string[], claudecode: string | undefined): void {
  if (t.agentId !== undefined && claudecode === '1' && !hasTicket(config.home, t.agentId, config.projectDir, command)) {
    throw new PgxError(
      'REFUSED',
      'pgx refused this `agent exec --agent`: its hook did not route this command, so your permission rules never judged it.',
      'Run the command itself; inside a subagent pgx routes it to the branch. (If pgx hooks are disabled, commands are not routed at all.)',
    );
  }
}

export async function runExec(config: Config, t: Target, command: string[], opts: { keep?: boolean; json?: boolean; from?: ForkRequest }): Promise<number> {
  if (command.length === 0) throw new PgxError('USAGE', 'No command given.', 'Put the command after --, e.g. `pgx agent exec --id x -- psql`.');
  refuseUnrouted(config, t, command, process.env.CLAUDECODE);
  // An --id exec holds a lease on its branch while the command runs, on a connection kept open until the end; the
  // branch is retired by whichever of its concurrent execs ends last (exec-lease.ts). A --agent exec (a routed
  // subagent command) takes the one-round-trip path and leaves the branch's life to the hooks.
  if (t.execId !== undefined) return runLeased(config, t, command, opts);
  const t0 = performance.now();
  const routed = await route(config, t, command, process.env, {}, { from: opts.from }); // progress only if the local server starts
  const setupMs = Math.round(performance.now() - t0);
  return report(opts, t, routed.ensured, setupMs, await spawnCommand(command, routed.env));
}

/**
 * The routed-command pipeline, the one copy `agent exec` and the broker both run: refuse a subagent's command its
 * hook did not route, ensure (or attach to) the branch, and give the environment the command runs with. `env` is the
 * requester's: whether it runs under Claude Code's Bash (CLAUDECODE), and the base of the command's environment.
 */
export async function route(config: Config, t: Target, command: string[], env: NodeJS.ProcessEnv, opts: OpenOptions = {}, ensureOpts: EnsureOptions = {}): Promise<{ env: NodeJS.ProcessEnv; branch: string; ensured: EnsureResult }> {
  refuseUnrouted(config, t, command, env.CLAUDECODE);
  const ensured = await attachOrEnsure(config, t, opts, ensureOpts);
  return { env: commandEnv(env, ensured, config.home, command[0]!), branch: ensured.branch, ensured };
}

/** The rewrite's `agent exec --agent <id> [--cwd <dir>]` (exec-argv.ts) as its config and target, in `cwd`. */
export function routedTarget(r: { agent: string; cwd?: string }, cwd: string, env: NodeJS.ProcessEnv): { config: Config; target: Target } {
  return { config: loadConfig({ cwd: resolve(cwd, r.cwd ?? '.'), env }), target: targetFrom({ agent: r.agent }, env) };
}

async function runLeased(config: Config, t: Target, command: string[], opts: { keep?: boolean; json?: boolean; from?: ForkRequest }): Promise<number> {
  // A signal while the branch is being ensured: the command is not started, and the lease still ends properly.
  let signalled: NodeJS.Signals | undefined;
  const early = FORWARDED.map((sig) => [sig, () => (signalled ??= sig)] as const);
  for (const [sig, h] of early) process.on(sig, h);
  const t0 = performance.now();
  let engine: Engine | undefined;
  let ensured: EnsureResult;
  try {
    engine = await Engine.open(config); // progress only if the local server starts
    ensured = await engine.ensure(t, { lease: opts.keep ? 'keep' : 'throwaway', from: opts.from });
  } catch (err) {
    for (const [sig, h] of early) process.off(sig, h);
    await engine?.close();
    throw err;
  }
  const setupMs = Math.round(performance.now() - t0);
  let run: CommandRun;
  try {
    run = signalled ? { status: signalStatus(signalled), ms: 0 } : await runCommand(command, ensured, config);
  } finally {
    for (const [sig, h] of early) process.off(sig, h);
  }
  // Every exit path of the command comes here: its status, its signal, or its failure to start.
  const end = await engine
    .endExecLease(ensured.record)
    .catch(() => withEngine(config, (e) => e.endExecLease(ensured.record), { quiet: true })) // the lease's connection died: retry on a new one
    .catch((err: unknown) => {
      process.stderr.write(`pgx: could not end the lease on ${ensured.branch}: ${(err as Error).message}\n`);
      return undefined;
    })
    .finally(() => engine!.close());
  return report(opts, t, ensured, setupMs, run, end?.outcome);
}

/** The environment a routed command runs with: libpq's variables for the branch, pinned against shell start-up files. */
export function commandEnv(base: NodeJS.ProcessEnv, ensured: EnsureResult, home: string, command0: string): NodeJS.ProcessEnv {
  const env = libpqEnv(base, ensured.conn);
  env.PGX_BRANCH = ensured.branch;
  pinAgainstShellStartup(env, home, command0);
  return env;
}

/** Runs the command on the branch: stdio inherited, signals forwarded; resolves with its status, never rejects. */
function runCommand(command: string[], ensured: EnsureResult, config: Config): Promise<CommandRun> {
  return spawnCommand(command, commandEnv(process.env, ensured, config.home, command[0]!));
}

function report(opts: { json?: boolean }, t: Target, ensured: EnsureResult, setupMs: number, run: CommandRun, lease?: string): number {
  if (opts.json) {
    const r: ExecReport = {
      agent_id: t.agentId ?? null,
      id: t.execId ?? null,
      branch: ensured.branch,
      source: ensured.record.source,
      created: new Date(ensured.record.created_at).toISOString(),
      fresh: ensured.fresh,
      method: ensured.method,
      elapsed_ms: setupMs,
      status: run.status,
      retired: lease === 'retired',
      ...(t.execId !== undefined ? { lease: lease ?? 'unknown' } : {}),
      ...(run.spawnError ? { spawn_error: run.spawnError } : {}),
    };
    process.stderr.write(JSON.stringify(r) + '\n');
  }
  return run.status;
}
