// What every URL intake (source import --from, [server] url, PGX_DATABASE_URL, init --url) asks before it parses:
// is this argument meant as a URL, and is it one pgx reads? An argument that looks like a connection string but is
// not a postgres(ql):// URL used to fall through to a file lookup whose error printed the whole argument, password
// included ("--from /home/me/postgress:/me:s3cret@…: no such file"). These errors never quote the argument: only
// its scheme, which is checked to be a short word first.
import { PgxError, type ErrorCode } from '../lib/errors.js';

const SUPPORTED = /^postgres(ql)?:\/\//i;
/** `word://` at the start: a scheme, whatever follows it. */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]{0,31})((?::[A-Za-z][A-Za-z0-9+.-]{0,31})*):\/\//;
/** `word:/x`: a URL with a slash missing (`word:x` is not told apart from user:password@host, so it is not named). */
const SCHEME_TYPO = /^([A-Za-z][A-Za-z0-9+.-]{0,31}):\/(?!\/)/;
/** user:password@host with no scheme at all. */
const USERINFO = /^[^\s/:@]*:[^\s]*@/;
/** libpq's keyword/value form: `host=… password=…`. */
const CONNINFO = /(^|[\s?&])(host|hostaddr|port|dbname|user|password|passfile|sslmode|service)\s*=/i;

export function isSupportedUrl(arg: string): boolean {
  return SUPPORTED.test(arg);
}

/**
 * Why `arg` is a connection string pgx does not read, or undefined when it is a postgres(ql):// URL or does not look
 * like a connection string at all (then it may be a file path). The reason never holds the argument's text.
 */
export function unsupportedConnectionString(raw: string): string | undefined {
  const arg = raw.trim();
  if (isSupportedUrl(arg)) return undefined;
  const m = SCHEME.exec(arg);
  const scheme = m?.[1] ?? SCHEME_TYPO.exec(arg)?.[1];
  if (scheme !== undefined) {
    const lower = scheme.toLowerCase();
    // JDBC's jdbc:postgresql://… (a Java app's config): the same URL without its prefix
    if (lower === 'jdbc' && /^:postgresql$/i.test(m?.[2] ?? ''))
      return (
        "unsupported scheme 'jdbc:postgresql' (drop the jdbc: prefix, and put user and password before the host): " +
        'pgx reads postgres:// and postgresql:// URLs only'
      );
    const typo =
      /^p(ost)?g?r?e?s/.test(lower) || lower === 'pg' || lower === 'psql' ? ' (a typo for postgresql://?)' : '';
    return `unsupported scheme '${lower}'${typo}: pgx reads postgres:// and postgresql:// URLs only`;
  }
  if (CONNINFO.test(arg))
    return 'a keyword/value connection string (host=… dbname=…) is not supported: pgx reads postgres:// and postgresql:// URLs only';
  if (USERINFO.test(arg))
    return 'it looks like a user name and password before @host, without a scheme: pgx reads postgres:// and postgresql:// URLs only';
  return undefined;
}

/** The error for an argument unsupportedConnectionString refused; `what` names where it came from (never its value). */
export function unsupportedConnectionError(what: string, reason: string, code: ErrorCode = 'USAGE'): PgxError {
  return new PgxError(
    code,
    `${what}: ${reason} (the value is not shown: it may hold a password).`,
    'Write it as postgresql://user@host:5432/dbname (a password is better kept out of argv: PGPASSWORD, ~/.pgpass, or a .env with --from-env).',
  );
}
