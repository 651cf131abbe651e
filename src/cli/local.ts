import type { Command } from 'commander';
import { pgxHome } from '../config.js';
import { ensureLocalServer, localStatus, stopLocalServer } from '../server/local.js';
import { paint } from '../output.js';
import { action, withCommon, type CommonOpts } from './common.js';

export function registerLocalCommands(program: Command): void {
  const local = program.command('local').description('the embedded PostgreSQL pgx runs when no [server] url is set');
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
}
