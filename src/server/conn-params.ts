// A postgres:// URL read into connection parameters (parseUrl), and those written back as a URL without the password
// (urlWithoutPassword). Every error names where the URL came from and never quotes it: it may hold a password.
import { PgxError } from '../lib/errors.js';
import { unsupportedConnectionError, unsupportedConnectionString } from './url-intake.js';

/** libpq's sslmode values. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** Connection parameters, kept apart so that the password never has to be rendered into a URL or argv. */
export interface ConnParams {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
  /** From the URL's ?sslmode=; unset: PGSSLMODE from the environment, else no TLS. */
  sslmode?: SslMode;
  /**
   * PGSSLMODE of the environment the URL was read in (parseUrl's `env`): a broker serves many environments, so it is
   * carried with the parameters instead of read from the process's own (decision 442). Never rendered into a URL.
   */
  envSslmode?: SslMode;
  /** From the URL's ?application_name=; pgx's own connections otherwise say "pgx". */
  application_name?: string;
  /** From ?channel_binding=prefer|require. */
  channelBinding?: boolean;
  /** Where the URL came from (parseUrl's `where`), for hints: "PGX_DATABASE_URL", "[server] url in /p/.pgx.toml", "--from". */
  from?: string;
  /** From ?connect_timeout= (seconds); else PGX_CONNECT_TIMEOUT_MS, connectWaitMs or 3 s (within connectDeadlineAt). */
  connectTimeoutMs?: number;
  /**
   * A hook answers by a deadline and then exits: a statement still running then (cloning a large source)
   * would go on without it and finish unstamped. With this set, the server cancels it instead (a cancelled clone
   * leaves nothing behind). Carried by the connection parameters so that every connection opened for the
   * same work (registry, fingerprint) has it; never rendered into a URL or a child's environment.
   */
  statementTimeoutMs?: number;
  /**
   * A hook's deadline (epoch ms): connection attempts wait for the time the hook has left, not a fixed 3 s. Under
   * load (50 subagents starting at once) a slow accept is not a dead server, and the branch a SubagentStart gives up
   * on would only be made by the next PreToolUse anyway. Per connection, like statementTimeoutMs.
   */
  connectDeadlineAt?: number;
  /**
   * The broker's: how long an attempt waits when neither the URL nor PGX_CONNECT_TIMEOUT_MS says. It serves many
   * hooks, each with its own deadline (enforced around the work, run.ts withDeadline), so no single hook's deadline
   * bounds its connections; a slow accept under a burst gets this long instead.
   */
  connectWaitMs?: number;
}

/** The query parameters pgx honours. Any other one is refused: silently dropping e.g. sslmode would connect without TLS. */
const URL_PARAMS = ['sslmode', 'host', 'port', 'application_name', 'channel_binding', 'connect_timeout', 'password'];

/** Where a server URL came from, when the caller does not say: the two places a config gives it. */
export const SERVER_URL_PLACES = '[server] url in .pgx.toml or PGX_DATABASE_URL';

/**
 * How to write a special character of a password or user name in a URL, naming where the URL came from (the flag,
 * variable or file and key: `where`) and, when known, the character at fault; never quotes any part of the URL.
 */
export function percentEncodingHint(where = SERVER_URL_PLACES, char?: string): string {
  const first = char
    ? `Write each "${char}" of the user name or password as ${encodeURIComponent(char)} in ${where}. `
    : '';
  return (
    first +
    'Percent-encode special characters of the user name and password: % → %25, @ → %40, # → %23, / → %2F, ? → %3F, : → %3A, space → %20. ' +
    ("To encode a password without it reaching your shell history: python3 -c 'import getpass, urllib.parse; " +
      'print(urllib.parse.quote(getpass.getpass(), safe=""))\'. ') +
    `Then fix ${where}.`
  );
}

export const PERCENT_ENCODING_HINT = percentEncodingHint();

/**
 * Refuses URLs that a WHATWG parser would read "successfully" into the wrong parts because a password holds an
 * unencoded #, / or ?: the rest of the password would become the host, the port or the database, and show up in
 * error messages. None of these messages quotes the URL.
 */
export function checkUrlShape(url: string, where = SERVER_URL_PLACES): void {
  const bad = (what: string, char?: string) =>
    new PgxError(
      'CONFIG_INVALID',
      `The server URL ${what}; its user name or password probably contains a character that must be percent-encoded.`,
      percentEncodingHint(where, char),
    );
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  if (url.includes('#')) throw bad('contains "#" (a postgres URL has no fragment)', '#');
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  const after = end === -1 ? '' : rest.slice(end);
  if ((authority.match(/@/g) ?? []).length > 1) throw bad('contains "@" more than once before the host', '@');
  // An "@" in the path (a database name never has one), or in the query before any "=": the user info was cut short
  // by a "/" or "?" of the password, whose rest would otherwise become the host or the database (and be printed).
  const q = after.indexOf('?');
  const path = q === -1 ? after : after.slice(0, q);
  const query = q === -1 ? '' : after.slice(q);
  // in the query, an "@" only in a value that may hold one (a password, an application name)
  const atInQuery = query
    .slice(1)
    .split('&')
    .some((pair) => {
      const eq = pair.indexOf('=');
      const key = eq === -1 ? pair : pair.slice(0, eq);
      return key.includes('@') || (pair.slice(eq + 1).includes('@') && !['password', 'application_name'].includes(key));
    });
  if (path.includes('@') || atInQuery) throw bad('has an "@" after the host');
  // "me:" + "?rest-of-password@host": the user name read as the host, an empty or non-numeric port
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1).replace(/^\[[^\]]*\]/, '');
  if (hostPort.includes(':') && !/:\d+$/.test(hostPort)) throw bad('has a port that is not a number');
}

/**
 * Whether a query key may be named in a message: one that reads as a parameter name, in a query without a
 * key like `password=` or `pwd=` (whose unencoded "&" would make the rest of the password a key of its own).
 */
export function nameableQueryKey(key: string, search: URLSearchParams): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(key) && ![...search.keys()].some((k) => /pass|pwd/i.test(k));
}

/** decodeURIComponent, as a CONFIG_INVALID naming the part (never its value) instead of "URI malformed". */
function decodePart(value: string, part: string, where: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new PgxError(
      'CONFIG_INVALID',
      `The server URL's ${part} has a malformed percent escape ("%" must be followed by two hex digits).`,
      percentEncodingHint(where, '%'),
    );
  }
}

/**
 * Template databases can't be the admin database: pgx's connections would sit in template1, which every new database
 * is copied from by default (the registry's creation, an empty template); those copies then fail with "template1 is
 * being accessed by other users". template0 accepts no connections at all.
 */
const NOT_ADMIN_DATABASES = ['template0', 'template1'];
const TEMPLATE1_BUSY = 'a new database is copied from template1, which fails while anyone is connected to it';

/**
 * `where`: the flag, variable or file and key the URL came from, named in every hint (default: both places a config
 * gives it). `env`: the environment the URL was read in (USER, PGSSLMODE), a broker's caller's (decision 442).
 */
export function parseUrl(url: string, where = SERVER_URL_PLACES, env: NodeJS.ProcessEnv = process.env): ConnParams {
  // PGX_DATABASE_URL (and PGX_DATABASE_URL_FILE) reach here without the .pgx.toml schema's postgres:// check.
  const refused =
    unsupportedConnectionString(url) ??
    (/^postgres(ql)?:\/\//i.test(url) ? undefined : 'not a postgres:// or postgresql:// URL');
  if (refused !== undefined) throw unsupportedConnectionError(`The server URL (${where})`, refused, 'CONFIG_INVALID');
  checkUrlShape(url, where);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PgxError(
      'CONFIG_INVALID',
      'The server URL is not a valid postgres:// URL.',
      `Check ${where}. ${percentEncodingHint(where)}`,
    );
  }
  // Errors name the parameter only, never the URL or a value: the URL may hold a password.
  for (const key of new Set(u.searchParams.keys())) {
    if (!URL_PARAMS.includes(key)) {
      // a key is named only when it reads as one: a password cut short by an unencoded "?" would be the key
      const named = nameableQueryKey(key, u.searchParams) ? `"${key}"` : '(not shown: it may be part of a password)';
      throw new PgxError(
        'CONFIG_INVALID',
        `The server URL has a query parameter pgx does not support: ${named}.`,
        `pgx understands ${URL_PARAMS.join(', ')}; remove the others from ${where}.`,
      );
    }
  }
  const sslmode = u.searchParams.get('sslmode') ?? undefined;
  if (sslmode !== undefined && !(SSL_MODES as readonly string[]).includes(sslmode)) {
    throw new PgxError(
      'CONFIG_INVALID',
      'The server URL has an invalid sslmode.',
      `sslmode must be one of ${SSL_MODES.join(', ')} (in ${where}).`,
    );
  }
  const portParam = u.searchParams.get('port');
  if (portParam !== null && !/^\d{1,5}$/.test(portParam)) {
    throw new PgxError(
      'CONFIG_INVALID',
      'The server URL has an invalid port parameter.',
      `port must be a number (in ${where}).`,
    );
  }
  const hostParam = u.searchParams.get('host');
  const appName = u.searchParams.get('application_name');
  // channel_binding (in e.g. Neon's URLs): node-postgres' SCRAM negotiates it when offered; `require` is not enforced.
  const channelBinding = u.searchParams.get('channel_binding');
  if (channelBinding !== null && !['disable', 'prefer', 'require'].includes(channelBinding)) {
    throw new PgxError(
      'CONFIG_INVALID',
      'The server URL has an invalid channel_binding.',
      `channel_binding must be disable, prefer or require (in ${where}).`,
    );
  }
  const connectTimeout = u.searchParams.get('connect_timeout');
  if (connectTimeout !== null && !/^\d{1,4}$/.test(connectTimeout)) {
    throw new PgxError(
      'CONFIG_INVALID',
      'The server URL has an invalid connect_timeout.',
      `connect_timeout is a number of seconds (in ${where}).`,
    );
  }
  const database = decodePart(u.pathname.replace(/^\//, ''), 'database name', where) || 'postgres';
  if (NOT_ADMIN_DATABASES.includes(database)) {
    throw new PgxError(
      'CONFIG_INVALID',
      `The server URL names the database "${database}": pgx can't use a template database for its admin connection ` +
        `(${database === 'template0' ? 'template0 accepts no connections' : TEMPLATE1_BUSY}).`,
      `Point ${where} at /postgres or another ordinary database; pgx creates its branches from there.`,
    );
  }
  return {
    // an IPv6 host without its brackets (WHATWG keeps them; urlWithoutPassword adds them back)
    host: hostParam ?? (decodePart(u.hostname.replace(/^\[(.*)\]$/, '$1'), 'host', where) || 'localhost'),
    port: portParam !== null ? Number(portParam) : u.port ? Number(u.port) : 5432,
    user: decodePart(u.username, 'user name', where) || env.USER || 'postgres',
    // libpq takes the password from the user info or from ?password=; the user info wins
    password: u.password
      ? decodePart(u.password, 'password', where)
      : (u.searchParams.get('password') ?? undefined) || undefined,
    database,
    ...(sslmode !== undefined ? { sslmode: sslmode as SslMode } : {}),
    ...(env.PGSSLMODE && (SSL_MODES as readonly string[]).includes(env.PGSSLMODE)
      ? { envSslmode: env.PGSSLMODE as SslMode }
      : {}),
    ...(appName !== null ? { application_name: appName } : {}),
    ...(channelBinding !== null && channelBinding !== 'disable' ? { channelBinding: true } : {}),
    ...(connectTimeout !== null && Number(connectTimeout) > 0
      ? { connectTimeoutMs: Number(connectTimeout) * 1000 }
      : {}),
    from: where,
  };
}

/** A URL WITHOUT the password: safe for logs, JSON output and DATABASE_URL (libpq takes the password from PGPASSWORD). */
export function urlWithoutPassword(p: Omit<ConnParams, 'password'>): string {
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  // sslmode travels in the URL too: tools that read only DATABASE_URL (ORMs) would otherwise connect in plain text.
  const ssl = p.sslmode ? `sslmode=${p.sslmode}` : '';
  if (p.host.startsWith('/')) {
    const query = `host=${encodeURIComponent(p.host)}&port=${p.port}${ssl ? `&${ssl}` : ''}`;
    return `postgresql://${encodeURIComponent(p.user)}@/${encodeURIComponent(p.database)}?${query}`;
  }
  return `postgresql://${encodeURIComponent(p.user)}@${host}:${p.port}/${encodeURIComponent(p.database)}${ssl ? `?${ssl}` : ''}`;
}
