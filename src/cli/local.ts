import type { Command } from 'commander';
import { loadConfig, pgxHome } from '../project/config.js';
import { removeSocketDir } from '../broker/inventory.js';
import { inspectScopes } from '../doctor/hooks-check.js';
import { stopBrokers } from './agent-broker.js';
import { ensureLocalServer, localStatus, stopLocalServer } from '../server/local.js';
import { urlWithoutPassword } from '../server/conn-params.js';
import { localParams, renderExports, runLocalPsql, shellExports, urlWithPassword } from '../server/local-access.js';
import { runLocalSql, unalignedRows } from '../server/local-sql.js';
import { readFileSync } from 'node:fs';
import { paint } from '../lib/output.js';
import { EXIT, PgxError } from '../lib/errors.js';
import { humanBytes, purgeLocalServer, purgeTargets } from '../server/local-purge.js';
import { confirmDestructive } from './confirm.js';

/**
 * What stays after a purge and what it does: the hooks remain installed, the next session starts a new, EMPTY local
 * server, and a project whose .pgx.toml names a [project] source has every subagent Bash command refused (its
 * branches cannot be cloned) until that source exists again. Said for this project (cwd) when it uses the local
 * server; in general otherwise.
 */
export function afterPurge(cwd: string): {
  hooks_remain: string[];
  source_missing: string | null;
  config: string | null;
  warning: string;
} {
  let config: ReturnType<typeof loadConfig> | undefined;
  try {
    config = loadConfig({ cwd });
  } catch {
    config = undefined; // an invalid .pgx.toml: the general warning
  }
  const onLocal = !!config?.file && !config.serverUrl;
  const hooks = onLocal
    ? inspectScopes(config!.projectDir)
        .filter((f) => f.insp.count > 0 || f.plugin)
        .map((f) => f.insp.path)
    : [];
  const source = onLocal ? (config!.source ?? null) : null;
  const fix = (file: string) =>
    `\`pgx source import --from <postgres://… | dump file>\` (or change [project] source in ${file}); to ` +
    `stop routing instead: \`pgx agent uninstall claude\``;
  let warning: string;
  if (onLocal && hooks.length && source) {
    warning =
      `pgx's hooks stay installed (${hooks.join(', ')}), and ${config!.file} still names [project] source "${source}", ` +
      `deleted with the server: the next session starts a new, empty local server, and every subagent Bash command ` +
      `is refused until "${source}" exists again. Fix: ${fix(config!.file!)}.`;
  } else if (onLocal && hooks.length) {
    warning =
      `pgx's hooks stay installed (${hooks.join(', ')}): the next session starts a new, empty local server, ` +
      `and branches start from an empty database. To stop routing: \`pgx agent uninstall claude\`.`;
  } else {
    warning =
      "pgx's hooks stay installed wherever \`pgx agent install claude\` put them: each such project's next " +
      'session starts a new, empty local server, and where its .pgx.toml names a [project] source, every subagent ' +
      'Bash command is refused until that source is imported again (\`pgx source import\`); \`pgx agent uninstall ' +
      'claude\` in a project removes them.';
  }
  return { hooks_remain: hooks, source_missing: source, config: config?.file ?? null, warning };
}

import { action, withCommon, type CommonOpts } from './common.js';

/** commander's collector for a repeatable option. */
const collect = (v: string, all: string[]) => [...all, v];

/** Registered by cli/commands.ts under `pgx`. */
export const under = 'pgx';

export function register(program: Command): void {
  const local = program
    .command('local')
    .description('the embedded PostgreSQL pgx runs when no [server] url is set')
    .enablePositionalOptions();
  withCommon(local.command('up').description('initialise (first time) and start the local server; idempotent')).action(
    action<CommonOpts>(async (opts, out) => {
      await ensureLocalServer(pgxHome());
      const s = localStatus(pgxHome());
      out.result(s, () => `local PostgreSQL ${s.version} running on 127.0.0.1:${s.port} (data ${s.data_dir})`);
    }),
  );
  withCommon(local.command('down').description('stop the local server (data is kept; --purge deletes it)'))
    .option('--purge', 'also delete its data directory, state and passfiles (asks first, or pass --yes)')
    .option('--yes', 'with --purge: do not ask')
    .action(
      action<CommonOpts & { purge?: boolean; yes?: boolean }>(async (opts, out) => {
        const home = pgxHome();
        if (!opts.purge) {
          if (opts.yes)
            throw new PgxError(
              'USAGE',
              '--yes only applies to --purge.',
              '`pgx local down --purge --yes` deletes the local server and its data.',
            );
          const r = stopLocalServer(home);
          out.result({ ...r, ...localStatus(home) }, () =>
            r.stopped
              ? 'local PostgreSQL stopped (data kept; `pgx local down --purge` deletes it)'
              : 'local PostgreSQL was not running',
          );
          return;
        }
        const targets = purgeTargets(home);
        const total = targets.reduce((n, t) => n + t.bytes, 0);
        const list = targets.map((t) => `  ${t.path}  ${humanBytes(t.bytes)}  (${t.what})`).join('\n');
        const after = afterPurge(opts.cwd ?? process.cwd());
        if (targets.length) {
          const go = await confirmDestructive({
            yes: opts.yes,
            json: opts.json,
            refusal: `--purge would delete ${humanBytes(total)}:`,
            header: `pgx local down --purge deletes every database of the local server (${humanBytes(total)}):`,
            what: `${list}\nAfterwards: ${after.warning}`,
            question: 'delete them? [y/N] ',
          });
          if (!go) {
            out.progress('nothing deleted');
            return EXIT.usage;
          }
        }
        // The brokers first: they hold connections to the server, and would outlive its data.
        const brokers = await stopBrokers();
        const r = purgeLocalServer(home);
        const socketDir = await removeSocketDir();
        const value = {
          stopped: r.stopped,
          purged: true,
          removed: r.removed.map((t) => ({ path: t.path, bytes: t.bytes })),
          removed_dirs: [...r.removed_dirs, ...(socketDir ? [socketDir] : [])],
          bytes: total,
          brokers_stopped: brokers.map((b) => b.pid),
          hooks_remain: after.hooks_remain,
          source_missing: after.source_missing,
          warning: after.warning,
        };
        // a warning where this project's hooks are known to stay; a note (what happens where they do) otherwise
        if (targets.length && !opts.json)
          out.progress(`${after.hooks_remain.length ? 'warning' : 'note'}: ${after.warning}`);
        out.result(value, () =>
          targets.length
            ? `${r.stopped ? 'local PostgreSQL stopped; ' : ''}${brokers.length ? `${brokers.length} broker(s) stopped; ` : ''}deleted ` +
              `${humanBytes(total)}:\n${list}${value.removed_dirs.length ? `\n  (and the emptied directories ${value.removed_dirs.join(', ')})` : ''}`
            : `nothing to delete: no local server data under ${home}` +
              `${brokers.length ? `; ${brokers.length} broker(s) stopped` : ''}${socketDir ? `; removed ${socketDir}` : ''}`,
        );
      }),
    );
  withCommon(local.command('status').description('url, port, version, data directory, running')).action(
    action<CommonOpts>(async (_opts, out) => {
      const s = localStatus(pgxHome());
      out.result(s, () =>
        s.initialized
          ? [
              `running   ${s.running ? paint('yes', 'green') : paint('no', 'yellow')}${s.pid ? ` (pid ${s.pid})` : ''}`,
              `url       ${s.url}`,
              `version   ${s.version}`,
              `data_dir  ${s.data_dir}`,
              `log       ${s.log_file}`,
              `binaries  ${s.binaries}`,
            ].join('\n')
          : `not initialised (\`pgx local up\` creates it; state file ${s.state_file})`,
      );
      return 0;
    }),
  );
  local
    .command('psql')
    .description('psql on the local server as its admin role (started if needed); every argument goes to psql')
    .argument('[args...]', 'psql arguments, e.g. -c "create database shop_dev" or -d shop_dev')
    .usage('[psql arguments…]')
    .helpOption(false) // `pgx local psql --help` is psql's help
    .allowUnknownOption()
    .passThroughOptions()
    .action(action<CommonOpts>(async (_opts, _out, cmd) => runLocalPsql(pgxHome(), cmd.args), 'stderr'));
  withCommon(
    local
      .command('sql')
      .description(
        "SQL on the local server through pgx's own driver (no psql needed): -c (repeatable), -f FILE, or stdin; " +
          "rows printed as psql -At does ('|' between values), or as JSON with --json",
      ),
  )
    .option('-d, --database <db>', 'the database', 'postgres')
    .option(
      '-c, --command <sql>',
      'SQL to run (several statements allowed; repeat -c for more, run in order)',
      collect,
      [],
    )
    .option('-f, --file <path>', 'a file of SQL to run (after the -c ones)')
    .option('--header', "print each result's column names first")
    .option('-F, --separator <sep>', "between values in a row (default '|')", '|')
    .action(
      action<CommonOpts & { database: string; command: string[]; file?: string; header?: boolean; separator: string }>(
        async (opts, out) => {
          const scripts = [...opts.command, ...(opts.file ? [readFileSync(opts.file, 'utf8')] : [])];
          if (!scripts.length) {
            if (process.stdin.isTTY)
              throw new PgxError(
                'USAGE',
                'No SQL given.',
                "Pass -c '<SQL>' (repeatable), -f FILE, or pipe it in: `echo 'select 1' | pgx local sql`.",
              );
            scripts.push(readFileSync(0, 'utf8'));
          }
          const run = await runLocalSql(pgxHome(), opts.database, scripts);
          const rowsOf = (cols: string[], row: (string | null)[]) =>
            Object.fromEntries(cols.map((c, i) => [c, row[i]]));
          const value = {
            database: run.database,
            results: run.results.map((r) => ({
              command: r.command,
              row_count: r.rowCount,
              columns: r.columns,
              rows: r.rows.map((row) => rowsOf(r.columns, row)),
            })),
          };
          if (!run.error || run.results.length)
            out.result(value, () =>
              unalignedRows(run.results, { sep: opts.separator, header: opts.header }).join('\n'),
            );
          if (run.error) throw run.error;
        },
        'stderr',
      ),
    );
  withCommon(
    local
      .command('env')
      .description(
        'shell exports for the local server: libpq variables and a 0600 passfile (no password printed); eval "$(pgx local env)"',
      ),
  )
    .option('-d, --database <db>', 'PGDATABASE', 'postgres')
    .action(
      action<CommonOpts & { database: string }>(async (opts, out) => {
        const x = shellExports(pgxHome(), await localParams(pgxHome(), opts.database));
        out.result(x, () => renderExports(x));
      }),
    );
  withCommon(local.command('url').description('the local server URL (no password unless --show-password)'))
    .option('-d, --database <db>', 'the database in the URL', 'postgres')
    .option('--show-password', 'include the password (it lands on your terminal and in its scrollback)')
    .action(
      action<CommonOpts & { database: string; showPassword?: boolean }>(async (opts, out) => {
        const p = await localParams(pgxHome(), opts.database);
        const url = opts.showPassword ? urlWithPassword(p) : urlWithoutPassword(p);
        out.result({ url, password_included: !!opts.showPassword }, () => url);
      }),
    );
}
