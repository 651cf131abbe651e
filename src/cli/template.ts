// pgx template ls | drop (refresh lives with the branch commands).
import type { Command } from 'commander';
import { withEngine } from '../engine/api.js';
import { paint, relativeTime, table } from '../lib/output.js';
import { humanBytes } from '../server/local-purge.js';
import { action, configFor, withCommon, type CommonOpts } from './common.js';

export function registerTemplateCommands(program: Command): void {
  const template = program.commands.find((c) => c.name() === 'template') ?? program.command('template').description('the frozen snapshot branches are cloned from');
  withCommon(template.command('ls').description("this project's templates (--all: every pgx template on the server), with size and the branches cloned from each"))
    .option('--all', 'every project')
    .action(
      action<CommonOpts & { all?: boolean }>(async (opts, out) => {
        const config = configFor(opts);
        const templates = await withEngine(config, (e) => e.templates({ all: opts.all }));
        out.result({ templates }, () =>
          templates.length
            ? table(
                ['NAME', 'PROJECT', 'SOURCE', 'STATE', 'REFRESHED', 'SIZE', 'BRANCHES', 'CURRENT'],
                templates.map((t) => [t.name, t.project, t.source ?? '(empty)', t.state, t.refreshed_at ? relativeTime(t.refreshed_at) : null, humanBytes(t.bytes), String(t.branches), t.current ? 'yes' : '']),
              )
            : paint(`no templates for project "${config.project}"${opts.all ? '' : ' (try --all)'}`, 'dim'),
        );
      }),
    );
  withCommon(template.command('drop').description("drop this project's templates (or the one named); branches keep working, the next new branch rebuilds it"))
    .argument('[name]', 'a template by name (any project); default: every template of this project')
    .action(
      action<CommonOpts>(async (opts, out, cmd) => {
        const config = configFor(opts);
        const named = cmd.args[0];
        const dropped = await withEngine(config, (e) => e.dropTemplates(named));
        out.result({ dropped }, () => (dropped.length ? dropped.map((n) => `dropped ${n}`).join('\n') : `no templates for project "${config.project}"`));
      }),
    );
}
