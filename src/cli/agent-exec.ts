import type { Command } from 'commander';
import { runExec } from '../exec/exec.js';
import { action, ANYWHERE_HELP, forkFrom, FROM_HELP, projectConfigFor, targetFrom, withCommon, type CommonOpts, type TargetOpts } from './common.js';

export function registerExecCommand(agent: Command): void {
  withCommon(agent.command('exec').description("run a command with libpq's environment set for a branch (ensured first)"))
    .option('--agent <id>', 'a Claude Code subagent id (the PreToolUse rewrite passes this)')
    .option('--id <id>', 'your own branch id: retired when the command ends unless --keep')
    .option('--session <id>', 'session id (default: $CLAUDE_CODE_SESSION_ID with --agent)')
    .option('--anywhere', ANYWHERE_HELP)
    .option('--keep', 'keep an --id branch active after the command (the next exec with the same id attaches)')
    .option('--from <what>', FROM_HELP)
    .argument('<command...>', 'the command and its arguments, after --')
    .passThroughOptions()
    .usage('[--agent <id> | --id <id>] [--session <id>] [--from session|template|<id>] [--cwd <dir>] [--keep] [--anywhere] [--json] -- <command…>')
    .action(
      action<CommonOpts & TargetOpts & { keep?: boolean; anywhere?: boolean; from?: string }>(async (opts, _out, cmd) => {
        const config = projectConfigFor(opts);
        const t = targetFrom(opts);
        return runExec(config, t, cmd.args, { keep: opts.keep, json: opts.json, from: forkFrom(opts.from, t) });
      }, 'stderr'),
    );
}
