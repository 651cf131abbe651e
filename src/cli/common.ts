// Flag plumbing shared by command files: --cwd/--json, config loading, and the one catch that prints an error and
// sets the exit code (errorReply, output.ts).
import type { Command } from 'commander';
import { CONFIG_FILE, loadConfig, type Config } from '../project/config.js';
import { EXIT, PgxError } from '../lib/errors.js';
import { createOutput, printError, type Output } from '../lib/output.js';
import { targetFrom as targetOf, validateId, type TargetOpts as TargetFlags } from '../engine/identity.js';
import type { ForkRequest, Selector, Target } from '../engine/api.js';

export interface CommonOpts {
  cwd?: string;
  json?: boolean;
}

export function withCommon(cmd: Command): Command {
  return cmd
    .option('--cwd <dir>', 'project directory (where .pgx.toml is looked up from)')
    .option('--json', 'machine-readable output');
}

export function configFor(opts: CommonOpts): Config {
  return loadConfig({ cwd: opts.cwd });
}

/**
 * Commands that MAKE branches (`agent exec`, `agent up`) need a project: outside one they used to invent a project
 * named after the directory, with its own template, in every folder they were tried in. `--anywhere` keeps that.
 */
export function projectConfigFor(opts: CommonOpts & { anywhere?: boolean }): Config {
  const config = configFor(opts);
  if (!config.file && !opts.anywhere) {
    throw new PgxError(
      'CONFIG_NOT_FOUND',
      `No ${CONFIG_FILE} in ${config.projectDir} or above: this is not a pgx project.`,
      `Start one here with \`pgx init\` (then \`pgx agent install claude\`), run from inside the project (or ` +
        `--cwd <dir>), or pass --anywhere to use a project named after this directory.`,
    );
  }
  return config;
}

export const ANYWHERE_HELP = 'allow running outside a project (no .pgx.toml): a project named after the directory';

/** Wraps an action: one catch for the whole CLI, mapping typed errors to documented exit codes, printed once. */
/** `errorsOn: 'stderr'` for exec, whose stdout belongs to the child. */
export function action<O extends CommonOpts>(
  fn: (opts: O, out: Output, cmd: Command) => Promise<number | void>,
  errorsOn: 'stdout' | 'stderr' = 'stdout',
) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const opts = cmd.opts() as O;
    const out = createOutput({ json: opts.json });
    try {
      const code = await fn(opts, out, cmd);
      process.exitCode = code ?? EXIT.ok;
    } catch (e) {
      process.exitCode = printError(e, !!opts.json, errorsOn === 'stderr' ? process.stderr : process.stdout);
    }
  };
}

// Target resolution is the identity module's (the broker and the routed exec need it without the CLI).
export { targetFrom, type TargetOpts } from '../engine/identity.js';

/**
 * `--from session|template|<id>`: what a NEW branch is a copy of (an existing one is attached as it is). `session`:
 * the session's branch (the --agent's session, else $CLAUDE_CODE_SESSION_ID); `<id>`: an exec --id branch of this
 * project, or a branch's database name. Absent: `[agent] fork` for a subagent, the template otherwise.
 */
export function forkFrom(
  from: string | undefined,
  t: Target,
  env: NodeJS.ProcessEnv = process.env,
): ForkRequest | undefined {
  if (from === undefined) return undefined;
  if (from === 'template') return { kind: 'template' };
  if (from === 'session') {
    const session = t.sessionId ?? (env.CLAUDE_CODE_SESSION_ID || undefined);
    if (session === undefined)
      throw new PgxError(
        'USAGE',
        '--from session: no session to fork from.',
        'Run inside Claude Code (it sets CLAUDE_CODE_SESSION_ID), or pass --agent with --session <id>, or --from ' +
          '<id> / --from template.',
      );
    return { kind: 'session', sessionId: validateId('session', session) };
  }
  return { kind: 'branch', ref: validateId('--from', from) };
}

export const FROM_HELP =
  "what a new branch is a copy of: session (its session's branch), template, or another branch's --id or name";

/**
 * The one branch `--agent`, `--id`, `--session` or `--branch` names, for a command that acts on one (diff, reset).
 * `--session` with `--agent` is that session's subagent (an agent id alone may have branches in several sessions).
 * No selector inside a routed command means the command's own branch (PGX_BRANCH, set by exec).
 */
export function branchSelector(
  opts: TargetFlags & { branch?: string },
  env: NodeJS.ProcessEnv,
  verb: string,
): Selector {
  const given = ['agent', 'id', 'session', 'branch'].filter(
    (k) => (opts as Record<string, unknown>)[k] !== undefined && !(k === 'session' && opts.agent !== undefined),
  );
  if (given.length > 1)
    throw new PgxError(
      'USAGE',
      `Pass one of --agent, --id, --session, --branch (got ${given.map((g) => `--${g}`).join(', ')}).`,
      `e.g. \`pgx agent ${verb} --agent <id>\`.`,
    );
  if (opts.branch !== undefined) return { branch: opts.branch };
  if (!given.length) {
    if (env.PGX_BRANCH) return { branch: env.PGX_BRANCH };
    throw new PgxError(
      'USAGE',
      'Say which branch: --agent <id>, --id <id>, --session <id> or --branch <name>.',
      "Inside a command pgx routed (a subagent's Bash, `pgx agent exec`), no selector means that command's own branch.",
    );
  }
  const t = targetOf({ agent: opts.agent, id: opts.id, session: opts.session }, {});
  if (t.agentId !== undefined && t.sessionId !== undefined) return { target: t };
  return t.agentId !== undefined
    ? { agent: t.agentId }
    : t.execId !== undefined
      ? { id: t.execId }
      : { session: t.sessionId! };
}

/** The four flags that name one branch (branchSelector reads them). */
export function withBranchSelector(cmd: Command, session = "a session's own branch"): Command {
  return cmd
    .option('--agent <id>', "a subagent's branch")
    .option('--id <id>', 'an exec --id branch')
    .option('--session <id>', session)
    .option('--branch <name>', 'a branch by database name');
}
