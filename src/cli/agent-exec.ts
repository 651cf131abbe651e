import type { Command } from 'commander';
import { runExec } from '../exec/exec.js';
import { PgxError } from '../lib/errors.js';
import {
  action,
  ANYWHERE_HELP,
  forkFrom,
  FROM_HELP,
  projectConfigFor,
  targetFrom,
  withCommon,
  type CommonOpts,
  type TargetOpts,
} from './common.js';

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  withCommon(
    agent.command('exec').description("run a command with libpq's environment set for a branch (ensured first)"),
  )
    .option('--agent <id>', 'a Claude Code subagent id (the PreToolUse rewrite passes this)')
    .option('--id <id>', 'your own branch id: retired when the command ends unless --keep')
    .option('--session <id>', 'session id (default: $CLAUDE_CODE_SESSION_ID with --agent)')
    .option(
      '--fail-open',
      "with --session: when the session's branch can't be ensured, run the command unrouted, with a warning " +
        "(a Codex session's routed commands)",
    )
    .option('--anywhere', ANYWHERE_HELP)
    .option('--keep', 'keep an --id branch active after the command (the next exec with the same id attaches)')
    .option('--from <what>', FROM_HELP)
    .argument('<command...>', 'the command and its arguments, after --')
    .passThroughOptions()
    .usage(
      '[--agent <id> | --id <id>] [--session <id> [--fail-open]] [--from session|template|<id>] [--cwd <dir>] ' +
        '[--keep] [--anywhere] [--json] -- <command…>',
    )
    .action(
      action<CommonOpts & TargetOpts & { keep?: boolean; anywhere?: boolean; from?: string; failOpen?: boolean }>(
        async (opts, _out, cmd) => {
          if (opts.failOpen) refuseFailOpenMisuse(opts);
          // --fail-open: a config that can't be loaded is one more reason to run unrouted, so it loads inside the exec
          const config = opts.failOpen ? undefined : projectConfigFor(opts);
          const t = targetFrom(opts);
          const from = forkFrom(opts.from, t);
          return runExec(() => ({ config: config ?? projectConfigFor(opts), target: t }), cmd.args, {
            keep: opts.keep,
            json: opts.json,
            from,
            failOpen: opts.failOpen,
          });
        },
        'stderr',
      ),
    );
}

/** --fail-open is for a session's own commands only: a subagent's command must never run off its branch (it fails closed). */
function refuseFailOpenMisuse(opts: TargetOpts): void {
  if (opts.agent !== undefined) {
    throw new PgxError(
      'USAGE',
      "--fail-open does not apply to --agent: a subagent's command never runs unrouted (without its branch it is refused).",
      "Drop --fail-open; it is for a session's own commands: --session <id> --fail-open.",
    );
  }
  if (opts.session === undefined || opts.id !== undefined) {
    throw new PgxError(
      'USAGE',
      "--fail-open needs --session <id> (and no --id): it is for a session's own commands only.",
      'Pass --session <id> --fail-open, or drop --fail-open.',
    );
  }
}
