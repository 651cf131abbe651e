// `pgx agent exec`: ensure the branch, then run the command with libpq's environment pointing at it. The command
// text is passed through untouched (no shell of ours in between); stdio is inherited, signals forwarded, and the
// exit status passed through (128 + n when the child dies of signal n). A Codex session's own routed command
// (`--session <sid> --fail-open`, decision 205) runs unrouted, with a warning, when its branch can't be ensured.
import { resolve } from 'node:path';
import { loadConfig, type Config } from '../project/config.js';
import { describeError, PgxError } from '../lib/errors.js';
import {
  attachOrEnsure,
  Engine,
  withEngine,
  type EnsureOptions,
  type EnsureResult,
  type ForkRequest,
  type OpenOptions,
  type Target,
  templateInsteadWarning,
} from '../engine/api.js';
import { targetFrom } from '../engine/identity.js';
import { libpqEnv, pinAgainstShellStartup } from '../server/libpq-env.js';
import { hasTicket } from './routing-ticket.js';
import { confinementOf, recordRoutedCommand, type Confinement } from './routed-ancestry.js';
import { FORWARDED, spawnCommand, type CommandRun } from './exec-spawn.js';
import { signalStatus } from '../lib/processes.js';

export interface ExecReport {
  agent_id: string | null;
  id: string | null;
  /** null: the command ran unrouted (--fail-open, see `unrouted`). */
  branch: string | null;
  source: string | null;
  created: string | null;
  fresh: boolean;
  method: string;
  elapsed_ms: number;
  status: number;
  retired?: boolean;
  /** --id: what the end of this exec's lease did (exec-lease.ts): retired, kept (--keep), other-leases … */
  lease?: string;
  /** The command could not be started (status 126/127/125). */
  spawn_error?: string;
  /** --fail-open: why the command ran unrouted (the branch could not be ensured, or Codex's sandbox has no network). */
  unrouted?: string;
  /** A branch made by this exec: what it is a copy of (EnsureResult.fork); `miss`: the template in place of the session's state. */
  fork?: EnsureResult['fork'];
}

/**
 * Is this command run by an agent's shell tool: Claude Code's Bash (CLAUDECODE=1), Codex's (CODEX_THREAD_ID, measured in
 * decision 205), the GitHub Copilot CLI's bash (COPILOT_CLI=1, measured on 1.0.102: decision 471)?
 */
const inAgentShell = (env: NodeJS.ProcessEnv) =>
  env.CLAUDECODE === '1' || !!env.CODEX_THREAD_ID || env.COPILOT_CLI === '1';

/**
 * From an agent's shell, a routed exec (a subagent's `--agent`, a session's `--fail-open`) runs only what pgx's hook
 * routed (routing-ticket.ts): a launcher the model typed is refused, whatever rule or approval let it start.
 */
function refuseUnrouted(
  config: Config,
  t: Target,
  command: string[],
  env: NodeJS.ProcessEnv,
  failOpen: boolean,
  confined: Confinement,
): void {
  // Where pgx can't see the whole process tree, a session's routed command needs its ticket too (refuseCrossing let
  // only an agent's or a session's through).
  const owner =
    t.agentId !== undefined
      ? { agentId: t.agentId }
      : (failOpen || confined.kind === 'unknown') && t.sessionId !== undefined
        ? { sessionId: t.sessionId }
        : undefined;
  // Inside a routed command the environment proves nothing (the command may unset CLAUDECODE): the tree says it.
  if (
    owner &&
    (inAgentShell(env) || confined.kind !== 'free') &&
    !hasTicket(config.home, owner, config.projectDir, command)
  ) {
    const what = `\`agent exec ${t.agentId !== undefined ? `--agent ${t.agentId}` : '--session …'}\``;
    throw new PgxError(
      'REFUSED',
      confined.kind === 'unknown'
        ? `pgx refused this ${what}: ${confined.why}, so it runs only a command pgx's hook routed, and its hook ` +
            `did not route this one.`
        : `pgx refused this ${what}: its hook did not route this command, so your permission rules never judged it.`,
      confined.kind === 'unknown'
        ? `Run the command itself; pgx routes it to your own branch. ${confined.hint}`
        : 'Run the command itself; pgx routes it to the branch. (If pgx hooks are disabled, commands are not routed at all.)',
    );
  }
}

/**
 * Inside agent A's routed command (routed-ancestry.ts: the process tree, never the environment) a routed exec may
 * target only A's own branch: same agent, same session and project when the record knows them, never an --id or a
 * session's branch. Returns where the caller stands.
 */
export function refuseCrossing(config: Config, t: Target, caller: number): Confinement {
  const c = confinementOf(caller, [config.home]);
  if (c.kind === 'free') return c;
  // Whose command this may be, pgx can't tell: an agent's or a session's routed exec goes on to its ticket check
  // (refuseUnrouted), the only thing that still tells a command pgx routed from one typed; nothing else.
  const own =
    c.kind === 'unknown'
      ? t.execId === undefined && (t.agentId !== undefined || t.sessionId !== undefined)
      : c.kind === 'agent' &&
        t.agentId === c.agent &&
        t.execId === undefined &&
        (c.session === null || t.sessionId === undefined || t.sessionId === c.session) &&
        (c.project === null || c.project === config.project);
  if (!own)
    throw crossingError(
      c,
      `\`agent exec\` for ${t.agentId !== undefined ? `agent ${t.agentId}` : t.execId !== undefined ? `--id ${t.execId}` : 'a session'}`,
    );
  return c;
}

/** The refusal for anything a routed command may not do outside its own branch (the CLI's guard says it too). */
export function crossingError(c: Exclude<Confinement, { kind: 'free' }>, what: string): PgxError {
  if (c.kind === 'unknown')
    return new PgxError(
      'REFUSED',
      `pgx refused ${what}: ${c.why}, so it can't tell whether this runs inside a subagent's routed command, and ` +
        `judges it as if it did: a subagent's command may act only on its own database branch.`,
      `Every Bash command a subagent runs is already routed to its own branch (no pgx command needed). ${c.hint}`,
    );
  const whose =
    c.kind === 'agent'
      ? `subagent ${c.agent}'s routed command${c.branch ? ` (branch "${c.branch}")` : ''}`
      : `routed commands of several agents (${c.agents.join(', ')})`;
  return new PgxError(
    'REFUSED',
    `pgx refused ${what}: this runs inside ${whose}, and a subagent's command may act only on its own database ` +
      `branch. pgx judges this by the process tree, so no environment variable (CLAUDECODE, CLAUDE_*, PGX_*) changes it.`,
    'Work on your own branch: every Bash command you run is already routed to it (no pgx command needed; ' +
      "`pgx agent reset` with no flags resets it). Another agent's branch is the user's to handle, outside any " +
      "subagent's command.",
  );
}

/** A routed command's config and target, loaded when the exec runs (a --fail-open exec fails open on a broken config too). */
export type LoadTarget = () => { config: Config; target: Target };

export async function runExec(
  load: LoadTarget,
  command: string[],
  opts: { keep?: boolean; json?: boolean; from?: ForkRequest; failOpen?: boolean },
): Promise<number> {
  if (command.length === 0)
    throw new PgxError('USAGE', 'No command given.', 'Put the command after --, e.g. `pgx agent exec --id x -- psql`.');
  if (opts.failOpen) {
    const t0 = performance.now();
    const routed = await routeFailOpen(load, command, process.env, {}, { from: opts.from });
    const setupMs = Math.round(performance.now() - t0);
    if (routed.branch === null) process.stderr.write(routed.warning);
    return report(
      opts,
      routed.target,
      routed.branch === null ? routed.warning : routed.ensured,
      setupMs,
      await spawnCommand(command, routed.env),
    );
  }
  const { config, target: t } = load();
  // An --id exec holds a lease on its branch while the command runs, on a connection kept open until the end; the
  // branch is retired by whichever of its concurrent execs ends last (exec-lease.ts). A --agent exec (a routed
  // subagent command) takes the one-round-trip path and leaves the branch's life to the hooks.
  if (t.execId !== undefined) {
    refuseCrossing(config, t, process.pid); // an --id branch is nobody's own: refused inside a routed command
    return runLeased(config, t, command, opts);
  }
  const t0 = performance.now();
  const routed = await route(config, t, command, process.env, {}, { from: opts.from }); // progress only if the local server starts
  const setupMs = Math.round(performance.now() - t0);
  warnOfMiss(routed.ensured);
  return report(opts, t, routed.ensured, setupMs, await spawnCommand(command, routed.env));
}

export interface RoutedEnv {
  env: NodeJS.ProcessEnv;
  branch: string;
  ensured: EnsureResult;
}

/**
 * The routed-command pipeline, the one copy `agent exec` and the broker both run: refuse a subagent's command its
 * hook did not route, ensure (or attach to) the branch, and give the environment the command runs with. `env` is the
 * requester's: whether it runs in an agent's shell (CLAUDECODE, CODEX_THREAD_ID), and the base of the command's
 * environment.
 */
export async function route(
  config: Config,
  t: Target,
  command: string[],
  env: NodeJS.ProcessEnv,
  opts: OpenOptions = {},
  ensureOpts: EnsureOptions = {},
  caller = process.pid,
): Promise<RoutedEnv> {
  const confined = refuseCrossing(config, t, caller);
  refuseUnrouted(config, t, command, env, false, confined);
  const ensured = await attachOrEnsure(config, t, opts, ensureOpts);
  // `caller` becomes the command (the sh launcher execs it) or its parent (node spawns it): A's from now on.
  if (t.agentId !== undefined)
    recordRoutedCommand(config.home, caller, {
      agent: t.agentId,
      session: t.sessionId ?? ensured.record.session_id ?? null,
      project: config.project,
      branch: ensured.branch,
    });
  return { env: commandEnv(env, ensured, config.home, command[0]!), branch: ensured.branch, ensured };
}

/** A --fail-open command that could not be routed: the requester's own environment, and the warning to print first. */
export interface UnroutedEnv {
  env: NodeJS.ProcessEnv;
  branch: null;
  warning: string;
}

/** Why a session's command runs unrouted, said loudly on stderr before it runs. */
export const SANDBOX_WARNING =
  "pgx: WARNING: this command runs unrouted, NOT on this session's database branch: Codex's sandbox blocks " +
  'the network here (CODEX_SANDBOX_NETWORK_DISABLED=1), so no database is reachable from this command, with ' +
  "pgx or without. To route the session's commands, let the sandbox reach the network (sandbox_workspace_write.network_access " +
  '= true in $CODEX_HOME/config.toml).\n';

export function unroutedWarning(e: unknown): string {
  const d = describeError(e);
  return (
    `pgx: WARNING: this command runs unrouted, NOT on this session's database branch: pgx could not ensure ` +
    `the branch (${d.message.replace(/\.$/, '')}). It uses whatever database it would use without pgx.${d.hint ? ` ${d.hint}` : ''} ` +
    `Run \`pgx agent doctor\`.\n`
  );
}

/**
 * route() for a session's own command (`--session <sid> --fail-open`, decision 205), which is not isolation-critical:
 * a branch that can't be ensured (config, server, engine) gives the requester's environment unchanged and a warning,
 * so the command runs as it would without pgx. Under Codex's default sandbox (CODEX_SANDBOX_NETWORK_DISABLED=1) every
 * socket is refused (decision 203), so it does so at once, without a connect. The ticket check's refusal stays a
 * refusal: a launcher the model typed is never run, routed or not.
 */
export async function routeFailOpen(
  load: LoadTarget,
  command: string[],
  env: NodeJS.ProcessEnv,
  opts: OpenOptions = {},
  ensureOpts: EnsureOptions = {},
  caller = process.pid,
): Promise<(RoutedEnv | UnroutedEnv) & { target?: Target }> {
  let loaded: ReturnType<LoadTarget>;
  try {
    loaded = load();
  } catch (e) {
    return { env, branch: null, warning: unroutedWarning(e) };
  }
  const { config, target } = loaded;
  // The ticket check here, once, outside the try below: its refusal must never turn into an unrouted run. route()'s
  // own check has no owner for a session's target without --fail-open, so it doesn't repeat the lookup.
  refuseUnrouted(config, target, command, env, true, refuseCrossing(config, target, caller));
  if (env.CODEX_SANDBOX_NETWORK_DISABLED === '1') return { env, branch: null, warning: SANDBOX_WARNING, target };
  try {
    return { ...(await route(config, target, command, env, opts, ensureOpts, caller)), target };
  } catch (e) {
    return { env, branch: null, warning: unroutedWarning(e), target };
  }
}

/** The rewrite's `agent exec --agent <id> | --session <sid> --fail-open [--cwd <dir>]` (exec-argv.ts) as its config and target, in `cwd`. */
export function routedTarget(
  r: { agent?: string; session?: string; cwd?: string },
  cwd: string,
  env: NodeJS.ProcessEnv,
): { config: Config; target: Target } {
  return {
    config: loadConfig({ cwd: resolve(cwd, r.cwd ?? '.'), env }),
    target: targetFrom({ agent: r.agent, session: r.session }, env),
  };
}

async function runLeased(
  config: Config,
  t: Target,
  command: string[],
  opts: { keep?: boolean; json?: boolean; from?: ForkRequest },
): Promise<number> {
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
  warnOfMiss(ensured);
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

/** A branch made now with the template in place of the session's state ([agent] fork_fallback): said before the command runs. */
function warnOfMiss(ensured: EnsureResult): void {
  if (ensured.fork?.miss) process.stderr.write(templateInsteadWarning(ensured.fork.miss));
}

/** The environment a routed command runs with: libpq's variables for the branch, pinned against shell start-up files. */
export function commandEnv(
  base: NodeJS.ProcessEnv,
  ensured: EnsureResult,
  home: string,
  command0: string,
): NodeJS.ProcessEnv {
  const env = libpqEnv(base, ensured.conn);
  env.PGX_BRANCH = ensured.branch;
  pinAgainstShellStartup(env, home, command0);
  return env;
}

/** Runs the command on the branch: stdio inherited, signals forwarded; resolves with its status, never rejects. */
function runCommand(command: string[], ensured: EnsureResult, config: Config): Promise<CommandRun> {
  return spawnCommand(command, commandEnv(process.env, ensured, config.home, command[0]!));
}

/** `--json`'s line. `ensured` is the warning when a --fail-open command ran unrouted. */
function report(
  opts: { json?: boolean },
  t: Target | undefined,
  ensured: EnsureResult | string,
  setupMs: number,
  run: CommandRun,
  lease?: string,
): number {
  if (opts.json) {
    const routed = typeof ensured === 'string' ? undefined : ensured;
    const r: ExecReport = {
      agent_id: t?.agentId ?? null,
      id: t?.execId ?? null,
      branch: routed?.branch ?? null,
      source: routed?.record.source ?? null,
      created: routed ? new Date(routed.record.created_at).toISOString() : null,
      fresh: routed?.fresh ?? false,
      method: routed?.method ?? 'unrouted',
      elapsed_ms: setupMs,
      status: run.status,
      retired: lease === 'retired',
      ...(t?.execId !== undefined ? { lease: lease ?? 'unknown' } : {}),
      ...(run.spawnError ? { spawn_error: run.spawnError } : {}),
      ...(typeof ensured === 'string' ? { unrouted: ensured.trim() } : {}),
      ...(routed?.fork ? { fork: routed.fork } : {}),
    };
    process.stderr.write(JSON.stringify(r) + '\n');
  }
  return run.status;
}
