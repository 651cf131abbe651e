// One handler per Claude Code hook event. Each returns the JSON to print (or nothing) and an outcome for the log.
// Isolation fails closed (a subagent's Bash without a branch is denied); everything else fails open and loudly.
import { appendFileSync, existsSync, rmSync } from 'node:fs';
import type * as z from 'zod/mini';
import type { Config } from '../../project/config.js';
import { describeError } from '../../lib/errors.js';
import { attachOrEnsure, withEngine, type ChangeSummary, type OpenOptions } from '../../engine/api.js';
import { startPoolFill } from './pool-fill.js';
import { brokerAddress, startBroker } from '../../broker/client.js';
import { socketDirProblem } from '../../broker/protocol.js';
import type { ConnParams } from '../../server/conn-params.js';
import {
  LIBPQ_TARGETING_VARS,
  libpqEnv,
  passfilePath,
  writePassfile,
  writeServerUrlFile,
} from '../../server/libpq-env.js';
import * as P from './payloads.js';
import { shellQuote } from '../../lib/shell.js';
import {
  hasBareExit,
  innerCommand,
  invokesLauncher,
  isRouted,
  parentBashCall,
  rewriteCommand,
  type RewriteParams,
} from './rewrite.js';
import { dropTickets, issueTicket } from '../../exec/routing-ticket.js';
import { isVerifiedClaudeCode, unverifiedWarning } from './claude-version.js';
import { dropSessionRecord, recordSessionClaudeCode } from './session-claude-code.js';
import { startVerificationIfNeeded } from './verification-start.js';
import { launcherPath } from './launcher.js';
import type { HookEvent } from './events.js';
import { hashBranchName, shortBranchName } from '../../engine/identity.js';
import { dropHandoffs, postHandoff, takeHandoffs } from './handoff-inbox.js';
import { noteHeartbeat, recentHeartbeat } from './heartbeats.js';

export interface HookEnv {
  config: Config;
  /** How the engine is opened: quietly, with the hook's deadline as every statement's timeout. */
  engine: OpenOptions;
  launcher: string;
  shell: string;
  /** The hook process's environment (the broker's requester's, not the broker's own: decision 442). */
  env: NodeJS.ProcessEnv;
  envFile?: string;
  /** The running Claude Code's version (claude-version.ts), when it says. */
  claudeCode?: string;
  /** The broker: runs work that need not delay the answer once it is sent (a hook process runs it at once). */
  afterAnswer?: (fn: () => void) => void;
}

export interface HookResult {
  output?: Record<string, unknown>;
  outcome: string;
  branch?: string | null;
  /** SubagentStop: the branch's change summary (names and counts only), logged as `changes`. */
  changes?: ChangeSummary;
}

export interface Handler<S extends z.ZodMiniType> {
  schema: S;
  run(p: z.infer<S>, h: HookEnv): Promise<HookResult>;
  /** What to answer when the payload is invalid or the handler throws. `payload` is absent when stdin was unreadable. */
  onError(message: string, payload?: Record<string, unknown>): HookResult;
}

const subagentTarget = (p: { session_id: string; agent_id: string }) => ({
  sessionId: p.session_id,
  agentId: p.agent_id,
});
const sessionTarget = (p: { session_id: string }) => ({ sessionId: p.session_id });

/** A PreToolUse deny (Claude Code's and Codex's hook output are the same shape). */
export function deny(reason: string): Record<string, unknown> {
  return {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
  };
}

/** What `agent exec` will run for this command: the command itself, or, already routed, the copy it carries. */
export function original(command: string, p: RewriteParams): string {
  return isRouted(command, p) ? innerCommand(command, p)! : command;
}

/** The deny for a command that invokes pgx's launcher itself (see invokesLauncher). */
export function launcherDeny(): HookResult {
  return {
    output: deny(
      "pgx: this command runs pgx's own `agent exec` launcher. pgx's permission rule pre-approves that launcher " +
        'only in the exact form its hook writes, so a hand-written one is refused: it would run a command your ' +
        'permission rules never checked. Run the inner command directly; pgx routes it to your database branch by itself.',
    ),
    outcome: 'denied:launcher',
  };
}

/** A Bash payload whose command invokes the launcher: denied whatever else happens (scope, config, errors). */
export function invokesLauncherIn(payload: Record<string, unknown> | undefined, launcher: string): boolean {
  const input = payload?.tool_input;
  if (payload?.tool_name !== 'Bash' || typeof input !== 'object' || input === null) return false;
  const command = (input as Record<string, unknown>).command;
  return typeof command === 'string' && invokesLauncher(command, launcher);
}

export type BashPlan = { kind: 'routed' } | { kind: 'deny'; result: HookResult } | { kind: 'rewrite'; command: string };

/**
 * What pgx does with a subagent's Bash command once its branch is known: leave pgx's own rewrite alone, refuse a
 * typed launcher or a bare `exit`, or rewrite. The one place this is decided: the hook, and `pgx agent verify`'s
 * probe (src/verify/probe.ts), which must test exactly what the hook writes.
 */
export function planSubagentBash(command: string, params: RewriteParams): BashPlan {
  if (isRouted(command, params)) return { kind: 'routed' };
  if (invokesLauncher(command, params.launcher)) return { kind: 'deny', result: launcherDeny() };
  if (hasBareExit(command)) {
    return {
      kind: 'deny',
      result: {
        output: deny(
          "pgx: this command contains a bare `exit`. pgx's routing relies on a permission rule for a bare `exit` " +
            "of its own, which would also approve yours without your rules' say, so pgx refuses it. Leave it out, " +
            'or write `exit 0` / `exit 1`.',
        ),
        outcome: 'denied:bare-exit',
      },
    };
  }
  return { kind: 'rewrite', command: rewriteCommand(command, params) };
}

export const preToolUse: Handler<typeof P.preToolUseSchema> = {
  schema: P.preToolUseSchema,
  async run(p, h) {
    if (p.tool_name !== 'Bash') return { outcome: 'skipped:not-bash' };
    const command = p.tool_input.command;
    if (p.agent_id === undefined) {
      // The parent's commands are not rewritten, so the user's rules see them as they are; only the launcher,
      // which pgx's wrapper rule would approve unseen, is refused.
      if (parentBashCall(p, h.launcher) === 'deny-launcher') return launcherDeny();
      // What its subagents changed, if any is waiting (a foreground agent's parent has no other hook before this).
      const handoffs = await handoffsFor(h, p.session_id);
      if (handoffs.context)
        return {
          output: { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: handoffs.context } },
          outcome: `skipped:not-subagent-bash${handoffs.tail}`,
        };
      return { outcome: `skipped:not-subagent-bash${handoffs.tail}` };
    }
    if (typeof command !== 'string')
      return {
        output: deny('pgx: this Bash call has no command string; it was not routed to your database branch.'),
        outcome: 'denied:no-command',
      };
    const ensured = await attachOrEnsure(
      h.config,
      subagentTarget({ session_id: p.session_id, agent_id: p.agent_id! }),
      h.engine,
    );
    const params: RewriteParams = {
      launcher: h.launcher,
      agentId: p.agent_id,
      projectDir: h.config.projectDir,
      shell: h.shell,
      branch: ensured.branch,
    };
    // A version not built in costs one small read (the verdict record); the hot path reads nothing else for it.
    const askUnverified =
      h.config.unverifiedClaudeCode === 'ask' && !isVerifiedClaudeCode(h.claudeCode, h.env, h.config.home);
    const decision = askUnverified
      ? { permissionDecision: 'ask', permissionDecisionReason: unverifiedWarning(h.claudeCode, 'ask') }
      : {};
    const ticket = () =>
      issueTicket(h.config.home, { agentId: p.agent_id! }, params.projectDir, [
        params.shell,
        '-c',
        original(command, params),
      ]);
    const plan = planSubagentBash(command, params);
    if (plan.kind === 'routed') {
      ticket();
      return askUnverified
        ? {
            output: { hookSpecificOutput: { hookEventName: 'PreToolUse', ...decision } },
            outcome: 'already-routed:ask-unverified',
            branch: ensured.branch,
          }
        : { outcome: 'already-routed', branch: ensured.branch };
    }
    if (plan.kind === 'deny') return { ...plan.result, branch: ensured.branch };
    ticket();
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          ...decision,
          updatedInput: { ...p.tool_input, command: plan.command },
        },
      },
      outcome: `rewritten:${ensured.method}${askUnverified ? ':ask-unverified' : ''}`,
      branch: ensured.branch,
    };
  },
  onError: preToolUseFailure,
};

/**
 * PreToolUse when pgx itself failed (every runtime's). A launcher invocation is refused even when pgx is broken: the
 * wrapper rule would otherwise approve it unseen. Only a subagent's Bash fails closed, as in run(); a payload known
 * NOT to be one (no agent_id: the parent; or another tool) fails open: a broken .pgx.toml used to deny every Bash of
 * the main session too.
 */
export function preToolUseFailure(message: string, payload?: Record<string, unknown>): HookResult {
  if (invokesLauncherIn(payload, launcherPath())) return launcherDeny();
  if (
    payload &&
    (payload.agent_id === undefined || (typeof payload.tool_name === 'string' && payload.tool_name !== 'Bash'))
  ) {
    return { outcome: 'error:not-subagent-bash' };
  }
  return {
    output: deny(
      `pgx could not ensure this subagent's own database branch, so the command was not run (it would have ` +
        `touched a shared database). ${message} Fix: run \`pgx agent doctor\` in the project; then retry the command.`,
    ),
    outcome: 'denied:error',
  };
}

export const subagentStart: Handler<typeof P.subagentStartSchema> = {
  schema: P.subagentStartSchema,
  async run(p, h) {
    const r = await withEngine(h.config, (e) => e.ensure(subagentTarget(p)), h.engine);
    // A claim took a member, a clone found none: top the pool up, detached, after this hook's answer is ready.
    if (r.method === 'claim' || r.method === 'clone')
      (h.afterAnswer ?? ((fn) => fn()))(() => startPoolFill(h.config, h.env));
    const snapshot = h.config.source
      ? `a snapshot of the project's "${h.config.source}" database`
      : 'an empty database';
    // What it is a copy of (engine/fork.ts, freeze.ts): everything the session's branch had committed when this
    // subagent started, or (said in one sentence) why not.
    const from = r.fork?.parent
      ? `a copy of your session's branch "${r.fork.parent}" as it is now: everything committed on it before you ` +
        `started (its migrations and data included; not a transaction still open there)`
      : snapshot;
    const forkNote = r.fork?.note
      ? ` pgx could not copy your session's branch (${r.fork.note}), so yours is ${snapshot} instead.`
      : '';
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: 'SubagentStart',
          additionalContext:
            `pgx: you have your own PostgreSQL database branch "${r.branch}", cloned from ${from}.${forkNote} \`pgx ` +
            `agent reset\` puts it back to that state if you need a clean start. Every Bash command you run is routed ` +
            `to it automatically (PGDATABASE and the other libpq variables are set per command), so migrations and ` +
            `test data stay yours; other agents cannot see them. Use psql or your tools without connection flags, ` +
            `and never load a .env file with override (dotenv override: true, dotenv -o, load_dotenv(override=True), ` +
            `set -a; . ./.env): that would point your commands back at the shared database.`,
        },
      },
      outcome: `ok:${r.method}`,
      branch: r.branch,
    };
  },
  onError(message) {
    return {
      output: {
        hookSpecificOutput: {
          hookEventName: 'SubagentStart',
          additionalContext:
            `pgx: your own database branch could not be prepared yet (${message}). pgx tries again before each of ` +
            `your Bash commands: if it succeeds, the command runs on your branch as usual; if it fails, that command ` +
            `is refused (never run against a shared database) and the refusal says why. If commands keep being refused, ` +
            `tell the user to run \`pgx agent doctor\`.`,
        },
      },
      outcome: 'error',
    };
  },
};

export const subagentStop: Handler<typeof P.subagentStopSchema> = {
  schema: P.subagentStopSchema,
  async run(p, h) {
    dropTickets(h.config.home, p.agent_id); // the agent is done: no more routed commands of its to admit
    const {
      retired: r,
      changes,
      kept,
    } = await withEngine(h.config, (e) => e.stopSubagent(subagentTarget(p)), h.engine);
    if (!r) return { outcome: 'no-branch' };
    // The summary failing never fails the stop: the branch is retired (and kept), the log says why (`changes.error`).
    const summary = changes?.error
      ? `:changes=failed(${changes.error})`
      : changes
        ? `:changes=${changes.changed ? 'yes' : 'none'}`
        : '';
    // No output: Claude Code gives a SubagentStop's additionalContext to the subagent, as one more turn. The parent
    // gets it from its inbox at its next prompt or Bash command (handoff-inbox.ts).
    const posted =
      changes &&
      changes.changed !== false &&
      postHandoff(h.config.home, p.session_id, { branch: r.name, at: changes.at });
    return {
      outcome: `${r.action}:terminated=${r.backends_terminated}:remaining=${r.backends_remaining}${summary}${kept ? ':kept' : ''}${posted ? ':handoff' : ''}`,
      branch: r.name,
      changes: changes ?? undefined,
    };
  },
  onError: () => ({ outcome: 'error' }), // never blocks the stop
};

export const sessionEnd: Handler<typeof P.sessionEndSchema> = {
  schema: P.sessionEndSchema,
  async run(p, h) {
    try {
      const r = await withEngine(h.config, (e) => e.endSession(p.session_id), h.engine);
      return { outcome: `retired:${r.retired}${r.failed ? `:failed=${r.failed}` : ''}`, branch: r.session_branch };
    } finally {
      // The passfile holds the password: it goes whatever the branch's state (already retired or dropped by
      // `down --session` or gc, so no longer active) and even when the server cannot be reached. Its name follows
      // from the session's identity alone (the readable name, or the hash name a collision falls back to).
      removeSessionPassfiles(h.config, p.session_id);
      dropHandoffs(h.config.home, p.session_id);
    }
  },
  onError: () => ({ outcome: 'error' }),
};

export const userPromptSubmit: Handler<typeof P.userPromptSubmitSchema> = {
  schema: P.userPromptSubmitSchema,
  async run(p, h) {
    if (p.agent_id !== undefined) return { outcome: 'skipped' };
    // What its subagents changed, if any is waiting: background agents' task notifications come in as prompts.
    const { context, tail } = await handoffsFor(h, p.session_id);
    const said = context
      ? { output: { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } } }
      : {};
    if (!h.config.sessionBranch) return { ...said, outcome: `skipped${tail}` };
    const key = JSON.stringify([
      h.config.serverUrl ?? null,
      h.config.home,
      h.config.project,
      h.config.host,
      p.session_id,
    ]);
    const recently = recentHeartbeat(key, h.config.idleTtlMs);
    if (recently) return { ...said, outcome: `heartbeat:recent${tail}`, branch: recently };
    const r = await withEngine(h.config, (e) => e.touch(sessionTarget(p)), h.engine);
    if (!r.branch) return { ...said, outcome: `no-branch${tail}` };
    if (r.heartbeat) noteHeartbeat(key, r.branch);
    return { ...said, outcome: `${r.heartbeat ? 'heartbeat' : `not-active:${r.state}`}${tail}`, branch: r.branch };
  },
  onError: () => ({ outcome: 'error' }), // never blocks a prompt
};

export const sessionStart: Handler<typeof P.sessionStartSchema> = {
  schema: P.sessionStartSchema,
  async run(p, h) {
    // For this session's HTTP hooks, whose requests don't say (session-claude-code.ts); no version: no record, so
    // they ask.
    if (h.claudeCode) recordSessionClaudeCode(h.config.home, p.session_id, h.claudeCode);
    else dropSessionRecord(h.config.home, p.session_id);
    // Said once per session, where the user sees it: on an unverified Claude Code, routed commands ask (or, by the
    // user's choice, rely on an unverified rewrite).
    // An unverified version with no verdict yet: `pgx agent verify claude` starts in the background (once: a marker
    // per version), and the session asks as before until it records a verdict.
    const verified = isVerifiedClaudeCode(h.claudeCode, h.env, h.config.home);
    const running =
      !verified &&
      h.claudeCode !== undefined &&
      startVerificationIfNeeded(h.config.home, h.claudeCode, h.launcher, h.env) !== 'none';
    const versionNote: { systemMessage?: string } = verified
      ? {}
      : { systemMessage: unverifiedWarning(h.claudeCode, h.config.unverifiedClaudeCode, running) };
    startPoolFill(h.config, h.env); // warm the pool (and the template) before the first subagent asks, off this hook's path
    const brokerWarning = startBrokerIfNone(h.launcher, h.env); // the session's later hooks and routed commands hand their work to it
    if (brokerWarning) versionNote.systemMessage = [versionNote.systemMessage, brokerWarning].filter(Boolean).join(' ');
    const verifyLine = running ? ` ${verifyingContext(h.claudeCode!)}` : '';
    if (!h.config.sessionBranch) {
      const output = running
        ? {
            ...versionNote,
            hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: verifyingContext(h.claudeCode!) },
          }
        : 'systemMessage' in versionNote
          ? versionNote
          : undefined;
      return { output, outcome: `skipped:session_branch=false${running ? ':verifying' : ''}` };
    }
    const r = await withEngine(h.config, (e) => e.ensure(sessionTarget(p)), h.engine);
    if (h.envFile)
      writeEnvFile(h.envFile, r.conn, h.config.home, {
        branchRole: !!r.record.role,
        serverUrl: h.env.PGX_DATABASE_URL,
      });
    return {
      output: {
        ...versionNote,
        hookSpecificOutput: {
          hookEventName: 'SessionStart',
          additionalContext:
            `pgx: this session's Bash commands use its own PostgreSQL database branch "${r.branch}"${h.config.source ? `, a snapshot of "${h.config.source}"` : ''}; ` +
            `subagents get branches of their own. libpq variables (PGDATABASE etc.) are already set.${verifyLine}`,
        },
      },
      outcome: `ok:${r.method}${running ? ':verifying' : ''}`,
      branch: r.branch,
    };
  },
  onError(message) {
    return {
      output: {
        systemMessage:
          `pgx: this session's database branch could not be prepared, so Bash commands use whatever database they ` +
          `did before. ${message} Run \`pgx agent doctor\`.`,
      },
      outcome: 'error',
    };
  },
};

/**
 * What its subagents changed, for the parent's context: the inbox's doorbells (handoff-inbox.ts) answered with the
 * words pgx makes from the session's registry records, never with text from the inbox. A registry it can't reach
 * leaves them for the next hook.
 */
async function handoffsFor(h: HookEnv, sessionId: string): Promise<{ context?: string; tail: string }> {
  const { refs, dropped } = takeHandoffs(h.config.home, sessionId);
  if (!refs.length) return { tail: dropped ? `:handoffs-dropped=${dropped}` : '' };
  let texts: string[];
  try {
    texts = await withEngine(h.config, (e) => e.handoffs(sessionId, refs), h.engine);
  } catch {
    for (const r of refs) postHandoff(h.config.home, sessionId, r);
    return { tail: ':handoffs=deferred' };
  }
  const unvouched = dropped + refs.length - texts.length;
  return {
    context: texts.length ? texts.join('\n') : undefined,
    tail: `${texts.length ? `:handoffs=${texts.length}` : ''}${unvouched ? `:handoffs-dropped=${unvouched}` : ''}`,
  };
}

/** One line for the model: why subagents' commands may ask for approval for a minute or two. */
function verifyingContext(version: string): string {
  return (
    `pgx is verifying Claude Code ${version} on this machine (\`pgx agent verify claude\`, in the background); ` +
    `until it records a verdict, each routed subagent Bash command asks for approval.`
  );
}

/**
 * Spawns this user's broker (detached) unless its socket is there; a stale socket is the next hook's to fix. Returns
 * the warning for the user when its socket directory is not private (decision 443): hooks then work in their own
 * processes, and the user is told why, once per session.
 */
function startBrokerIfNone(launcher: string, env: NodeJS.ProcessEnv): string | undefined {
  const addr = brokerAddress(env, launcher, true);
  if (addr && !existsSync(addr.path)) void startBroker(addr, launcher, env);
  const problem = addr ? undefined : socketDirProblem(env);
  if (!problem) return undefined;
  const whose =
    problem.owner !== undefined && problem.owner !== process.getuid?.()
      ? `it belongs to uid ${problem.owner}, not you`
      : 'it is a link or open to others';
  return (
    `pgx WARNING: ${problem.dir}, where pgx's broker keeps its socket, is not a private directory of yours ` +
    `(${whose}), so pgx does not use it: every hook and routed command does its work in its own process (slower, ` +
    `still isolated). Run \`pgx agent doctor\`.`
  );
}

function removeSessionPassfiles(config: Config, sessionId: string): void {
  const id = { project: config.project, host: config.host, sessionId };
  for (const name of [shortBranchName(id), hashBranchName(id)])
    if (name) rmSync(passfilePath(config.home, name), { force: true });
}

/** Exports for the session's later Bash commands. The password goes into a 0600 passfile, never into the env file. */
function writeEnvFile(
  envFile: string,
  conn: ConnParams,
  home: string,
  o: { branchRole: boolean; serverUrl?: string },
): void {
  // The same variables exec gives a routed command (libpqEnv), minus the password, which goes to a passfile.
  const vars = libpqEnv({}, { ...conn, password: undefined });
  // With a branch role, the admin URL Claude Code may have inherited (PGX_DATABASE_URL, password included) is taken
  // out of the session's Bash environment too: the shells get a 0600 file naming it instead, which the routed
  // `pgx agent exec` (itself run by those shells) reads and never passes on (libpqEnv).
  const urlFile = o.branchRole && o.serverUrl ? writeServerUrlFile(home, o.serverUrl) : undefined;
  const unset = [
    ...LIBPQ_TARGETING_VARS.filter((k) => vars[k] === undefined),
    ...(urlFile ? ['PGX_DATABASE_URL'] : []),
  ];
  const lines = [`unset ${unset.join(' ')}`, ...Object.entries(vars).map(([k, v]) => `export ${k}=${q(v!)}`)];
  if (urlFile) lines.push(`export PGX_DATABASE_URL_FILE=${q(urlFile)}`);
  const file = writePassfile(home, conn);
  lines.push(file ? `export PGPASSFILE=${q(file)}` : 'unset PGPASSFILE');
  appendFileSync(envFile, lines.join('\n') + '\n');
}

const q = shellQuote;

export const HANDLERS = {
  'session-start': sessionStart,
  'user-prompt-submit': userPromptSubmit,
  'pre-tool-use': preToolUse,
  'subagent-start': subagentStart,
  'subagent-stop': subagentStop,
  'session-end': sessionEnd,
} as const satisfies Record<HookEvent, unknown>;

export function errorText(e: unknown): string {
  const d = describeError(e);
  return `${d.message}${d.hint ? ` (${d.hint})` : ''}`;
}
