// `pgx registry drop`: removes pgx_registry from the project's server once no project uses it (engine/registry-drop.ts),
// the one step of removing pgx that touches a server of the user's own (decision 422).
import type { Command } from 'commander';
import { dropRegistry } from '../engine/api.js';
import { action, configFor, withCommon, type CommonOpts } from './common.js';

/** Registered by cli/commands.ts under `pgx`. */
export const under = 'pgx';

export function register(program: Command): void {
  const registry = program.command('registry').description("pgx's bookkeeping database on the server (pgx_registry)");
  withCommon(
    registry
      .command('drop')
      .description(
        'drop pgx_registry once no project has a pgx database on the server any more (else says which do, and keeps it)',
      ),
  )
    .option('--dry-run', 'say whether it would be dropped, drop nothing')
    .action(
      action<CommonOpts & { dryRun?: boolean }>(async (opts, out) => {
        const r = await dropRegistry(configFor(opts), { dryRun: opts.dryRun });
        const users = r.in_use.map(
          (u) =>
            `  ${u.project}: ${u.databases.length} database(s) (${u.databases.slice(0, 3).join(', ')}${u.databases.length > 3 ? ', …' : ''})`,
        );
        out.result(r, () => {
          if (!r.existed) return `no ${r.database} on this server: nothing to drop`;
          if (r.in_use.length)
            return [
              `kept ${r.database}: ${r.in_use.length} project(s) still have pgx databases on this server:`,
              ...users,
              'in each: `pgx agent down --project --now --yes` and `pgx template drop` (an imported source is a copy: ' +
                'drop it with psql), then `pgx registry drop` again',
            ].join('\n');
          return r.dropped
            ? `dropped ${r.database}: no project uses it any more`
            : `would drop ${r.database}: no project uses it any more`;
        });
      }),
    );
}
