// pgx template refresh | ls | drop: the frozen snapshot branches are cloned from.
import type { Command } from 'commander';
import { withEngine } from '../engine/api.js';
import { paint, relativeTime, table } from '../lib/output.js';
import { humanBytes } from '../server/local-purge.js';
import { action, configFor, withCommon, type CommonOpts } from './common.js';

/** Registered by cli/commands.ts under `pgx`. */
export const under = 'pgx';

export function register(program: Command): void {
  const template = program.command('template').description('the frozen snapshot branches are cloned from');
  withCommon(
    template
      .command('refresh')
      .description(
        'rebuild the template from [project] source (works while the source has connections); an imported source ' +
          "is pgx's copy: `pgx source sync` pulls its origin's changes",
      ),
  ).action(
    action<CommonOpts>(async (opts, out) => {
      const config = configFor(opts);
      const r = await withEngine(config, (e) => e.refreshTemplate((m) => out.progress(m)));
      out.result(r, () =>
        [
          `template ${r.template} ← ${r.source ?? '(empty)'} by ${r.method} in ${r.elapsed_ms} ms`,
          // An imported source is pgx's copy: a refresh never reaches the origin, so say where its changes come from.
          r.copy_of
            ? `  refreshed from pgx's copy "${r.source}" of ${r.copy_of.origin} (copied ${relativeTime(r.copy_of.imported_at)}), ` +
              `not from the origin itself: \`pgx source sync\` pulls the origin's changes`
            : null,
        ]
          .filter(Boolean)
          .join('\n'),
      );
    }),
  );
  withCommon(
    template
      .command('ls')
      .description(
        "this project's templates (--all: every pgx template on the server), with size and the branches cloned from each",
      ),
  )
    .option('--all', 'every project')
    .action(
      action<CommonOpts & { all?: boolean }>(async (opts, out) => {
        const config = configFor(opts);
        const templates = await withEngine(config, (e) => e.templates({ all: opts.all }));
        out.result({ templates }, () =>
          templates.length
            ? table(
                ['NAME', 'PROJECT', 'SOURCE', 'STATE', 'REFRESHED', 'SIZE', 'BRANCHES', 'CURRENT'],
                templates.map((t) => [
                  t.name,
                  t.project,
                  t.source ?? '(empty)',
                  t.state,
                  t.refreshed_at ? relativeTime(t.refreshed_at) : null,
                  humanBytes(t.bytes),
                  String(t.branches),
                  t.current ? 'yes' : '',
                ]),
              )
            : paint(`no templates for project "${config.project}"${opts.all ? '' : ' (try --all)'}`, 'dim'),
        );
      }),
    );
  withCommon(
    template
      .command('drop')
      .description(
        "drop this project's templates (or the one named); branches keep working, the next new branch rebuilds it",
      ),
  )
    .argument('[name]', 'a template by name (any project); default: every template of this project')
    .action(
      action<CommonOpts>(async (opts, out, cmd) => {
        const config = configFor(opts);
        const named = cmd.args[0];
        const dropped = await withEngine(config, (e) => e.dropTemplates(named));
        out.result({ dropped }, () =>
          dropped.length
            ? dropped.map((n) => `dropped ${n}`).join('\n')
            : `no templates for project "${config.project}"`,
        );
      }),
    );
}
