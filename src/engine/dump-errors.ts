// What a failed pg_dump of `source import --from <url>` said, as the error that names its cause: a refused login is
// exit 4 with a hint about the password (it used to be exit 7, blaming pg_dump's version), an unreachable server
// exit 4, a version mismatch the pg_dump upgrade; anything else the import failure it was. pg_dump's lines name the
// host, port and user, never the password (it gets the password from PGPASSWORD).
import { PgxError } from '../lib/errors.js';

/** SQLSTATE 28P01 (invalid_password) / 28000 (invalid_authorization_specification), as libpq prints them. */
const AUTH =
  /password authentication failed|authentication failed for user|no password supplied|fe_sendauth|pg_hba\.conf|role "[^"]*" does not exist|28P01|28000/i;
const UNREACHABLE =
  /could not connect|Connection refused|could not translate host name|Name or service not known|timeout expired|No route to host|Network is unreachable/i;
const VERSION = /server version mismatch|aborting because of server version mismatch/i;

const authHint = (where: string) =>
  `Check the user name and password of the URL of ${where}; a special character in the password must be ` +
  `percent-encoded (@ → %40).`;
const unreachableHint = (where: string) =>
  `Check the host and port of the URL of ${where}, and that its server is running and accepts connections from here.`;

/**
 * A connection of pgx's own to the origin that failed (its version, the copy method's probe, the Node copy): the
 * error names the origin's URL and what named it, as pg_dump's failures do, not pgx's own server. Others pass.
 */
export function originConnectFailure(err: unknown, display: string, where = '--from'): unknown {
  if (!(err instanceof PgxError)) return err;
  if (err.code === 'SERVER_AUTH')
    return new PgxError('SERVER_AUTH', `The server of ${display} refused the login: ${err.message}`, authHint(where), {
      cause: err,
    });
  if (err.code === 'SERVER_UNREACHABLE')
    return new PgxError(
      'SERVER_UNREACHABLE',
      `Could not reach the server of ${display}: ${err.message}`,
      unreachableHint(where),
      { cause: err },
    );
  return err;
}

/** `where`: what named the URL (`--from`, `$DATABASE_URL (from /p/.env)`, the origin `source sync` remembered). */
export function pgDumpFailure(display: string, status: number | null, tail: string[], where = '--from'): PgxError {
  const said = tail.slice(-3).join(' ') || '(no output)';
  const text = tail.join('\n');
  if (AUTH.test(text)) {
    return new PgxError('SERVER_AUTH', `The server of ${display} refused pg_dump's login: ${said}`, authHint(where));
  }
  if (VERSION.test(text)) {
    return new PgxError(
      'IMPORT_FAILED',
      `pg_dump of ${display} failed (exit ${status}): ${said}`,
      "pg_dump must be at least the server's version: install a newer PostgreSQL client (`pg_dump --version`), " +
        'or point PGX_PG_BINDIR at one.',
    );
  }
  if (UNREACHABLE.test(text)) {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `pg_dump could not reach the server of ${display}: ${said}`,
      unreachableHint(where),
    );
  }
  return new PgxError(
    'IMPORT_FAILED',
    `pg_dump of ${display} failed (exit ${status}): ${said}`,
    `Check the URL of ${where}, that its server is reachable, and that pg_dump is at least its version (\`pg_dump --version\`).`,
  );
}
