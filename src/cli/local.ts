import type { Command } from 'commander';
import { pgxHome } from '../config.js';
import { ensureLocalServer, localStatus, stopLocalServer } from '../server/local.js';
import { urlWithoutPassword } from '../server/db.js';
import { localParams, renderExports, runLocalPsql, shellExports, urlWithPassword } from '../local-access.js';
import { paint } from '../output.js';
import { action, withCommon, type CommonOpts } from './common.js';

export function registerLocalCommands(program: Command): void {
  const local = program.command('local').description('the embedded PostgreSQL pgx runs when no [server] url is set').enablePositionalOptions();
  withCommon(local.command('up').description('initialise (first time) and start the local server; idempotent')).action(
    action<CommonOpts>(async (opts, out) => {
      await ensureLocalServer(pgxHome());
      const s = localStatus(pgxHome());
      out.result(s, () => `local PostgreSQL ${s.version} running on 127.0.0.1:${s.port} (data ${s.data_dir})`);
    }),
  );
  withCommon(local.command('down').description('stop the local server (data is kept)')).action(
    action<CommonOpts>(async (_opts, out) => {
      const r = stopLocalServer(pgxHome());
      out.result({ ...r, ...localStatus(pgxHome()) }, () => (r.stopped ? 'local PostgreSQL stopped' : 'local PostgreSQL was not running'));
    }),
  );
  withCommon(local.command('status').description('url, port, version, data directory, running')).action(
    action<CommonOpts>(async (_opts, out) => {
      const s = localStatus(pgxHome());
      out.result(s, () =>
        s.initialized
          ? [`running   ${s.running ? paint('yes', 'green') : paint('no', 'yellow')}${s.pid ? ` (pid ${s.pid})` : ''}`, `url       ${s.url}`, `version   ${s.version}`, `data_dir  ${s.data_dir}`, `log       ${s.log_file}`, `binaries  ${s.binaries}`].join('\n')
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
    .action(
      action<CommonOpts>(async (_opts, _out, cmd) => runLocalPsql(pgxHome(), cmd.args), 'stderr'),
    );
  withCommon(local.command('env').description('shell exports for the local server: libpq variables and a 0600 passfile (no password printed); eval "$(pgx local env)"'))
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
