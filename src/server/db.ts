// The one module that opens PostgreSQL connections. `pg` is imported lazily so that commands and hooks that never
// touch the database (and the start-up of those that do) do not pay for loading it.
import type { Client, ClientConfig } from 'pg';
import { PgxError } from '../lib/errors.js';
import { sqlstateOf, SQLSTATE } from './sqlstate.js';
export { isConnectionLost } from './sqlstate.js'; // for the doctor, which reaches the server layer only through this module
import { unsupportedConnectionError, unsupportedConnectionString } from './url-intake.js';

type PgModule = typeof import('pg');
let pgPromise: Promise<PgModule> | undefined;
async function loadPg(): Promise<PgModule> {
  pgPromise ??= import('pg').then((m) => ((m as unknown as { default?: PgModule }).default ?? m) as PgModule);
  return pgPromise;
}

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
  const first = char ? `Write each "${char}" of the user name or password as ${encodeURIComponent(char)} in ${where}. ` : '';
  return (
    first +
    'Percent-encode special characters of the user name and password: % → %25, @ → %40, # → %23, / → %2F, ? → %3F, : → %3A, space → %20. ' +
    'To encode a password without it reaching your shell history: python3 -c \'import getpass, urllib.parse; print(urllib.parse.quote(getpass.getpass(), safe=""))\'. ' +
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
  const bad = (what: string, char?: string) => new PgxError('CONFIG_INVALID', `The server URL ${what}; its user name or password probably contains a character that must be percent-encoded.`, percentEncodingHint(where, char));
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
    throw new PgxError('CONFIG_INVALID', `The server URL's ${part} has a malformed percent escape ("%" must be followed by two hex digits).`, percentEncodingHint(where, '%'));
  }
}

/**
 * Template databases can't be the admin database: pgx's connections would sit in template1, which every new database
 * is copied from by default (the registry's creation, an empty template); those copies then fail with "template1 is
 * being accessed by other users". template0 accepts no connections at all.
 */
const NOT_ADMIN_DATABASES = ['template0', 'template1'];

/**
 * `where`: the flag, variable or file and key the URL came from, named in every hint (default: both places a config
 * gives it). `env`: the environment the URL was read in (USER, PGSSLMODE), a broker's caller's (decision 442).
 */
export function parseUrl(url: string, where = SERVER_URL_PLACES, env: NodeJS.ProcessEnv = process.env): ConnParams {
  // PGX_DATABASE_URL (and PGX_DATABASE_URL_FILE) reach here without the .pgx.toml schema's postgres:// check.
  const refused = unsupportedConnectionString(url) ?? (/^postgres(ql)?:\/\//i.test(url) ? undefined : 'not a postgres:// or postgresql:// URL');
  if (refused !== undefined) throw unsupportedConnectionError(`The server URL (${where})`, refused, 'CONFIG_INVALID');
  checkUrlShape(url, where);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PgxError('CONFIG_INVALID', 'The server URL is not a valid postgres:// URL.', `Check ${where}. ${percentEncodingHint(where)}`);
  }
  // Errors name the parameter only, never the URL or a value: the URL may hold a password.
  for (const key of new Set(u.searchParams.keys())) {
    if (!URL_PARAMS.includes(key)) {
      // a key is named only when it reads as one: a password cut short by an unencoded "?" would be the key
      const named = nameableQueryKey(key, u.searchParams) ? `"${key}"` : '(not shown: it may be part of a password)';
      throw new PgxError('CONFIG_INVALID', `The server URL has a query parameter pgx does not support: ${named}.`, `pgx understands ${URL_PARAMS.join(', ')}; remove the others from ${where}.`);
    }
  }
  const sslmode = u.searchParams.get('sslmode') ?? undefined;
  if (sslmode !== undefined && !(SSL_MODES as readonly string[]).includes(sslmode)) {
    throw new PgxError('CONFIG_INVALID', 'The server URL has an invalid sslmode.', `sslmode must be one of ${SSL_MODES.join(', ')} (in ${where}).`);
  }
  const portParam = u.searchParams.get('port');
  if (portParam !== null && !/^\d{1,5}$/.test(portParam)) {
    throw new PgxError('CONFIG_INVALID', 'The server URL has an invalid port parameter.', `port must be a number (in ${where}).`);
  }
  const hostParam = u.searchParams.get('host');
  const appName = u.searchParams.get('application_name');
  // channel_binding (in e.g. Neon's URLs): node-postgres' SCRAM negotiates it when offered; `require` is not enforced.
  const channelBinding = u.searchParams.get('channel_binding');
  if (channelBinding !== null && !['disable', 'prefer', 'require'].includes(channelBinding)) {
    throw new PgxError('CONFIG_INVALID', 'The server URL has an invalid channel_binding.', `channel_binding must be disable, prefer or require (in ${where}).`);
  }
  const connectTimeout = u.searchParams.get('connect_timeout');
  if (connectTimeout !== null && !/^\d{1,4}$/.test(connectTimeout)) {
    throw new PgxError('CONFIG_INVALID', 'The server URL has an invalid connect_timeout.', `connect_timeout is a number of seconds (in ${where}).`);
  }
  const database = decodePart(u.pathname.replace(/^\//, ''), 'database name', where) || 'postgres';
  if (NOT_ADMIN_DATABASES.includes(database)) {
    throw new PgxError(
      'CONFIG_INVALID',
      `The server URL names the database "${database}": pgx can't use a template database for its admin connection (${database === 'template0' ? 'template0 accepts no connections' : 'a new database is copied from template1, which fails while anyone is connected to it'}).`,
      `Point ${where} at /postgres or another ordinary database; pgx creates its branches from there.`,
    );
  }
  return {
    // an IPv6 host without its brackets (WHATWG keeps them; urlWithoutPassword adds them back)
    host: hostParam ?? (decodePart(u.hostname.replace(/^\[(.*)\]$/, '$1'), 'host', where) || 'localhost'),
    port: portParam !== null ? Number(portParam) : u.port ? Number(u.port) : 5432,
    user: decodePart(u.username, 'user name', where) || env.USER || 'postgres',
    // libpq takes the password from the user info or from ?password=; the user info wins
    password: u.password ? decodePart(u.password, 'password', where) : (u.searchParams.get('password') ?? undefined) || undefined,
    database,
    ...(sslmode !== undefined ? { sslmode: sslmode as SslMode } : {}),
    ...(env.PGSSLMODE && (SSL_MODES as readonly string[]).includes(env.PGSSLMODE) ? { envSslmode: env.PGSSLMODE as SslMode } : {}),
    ...(appName !== null ? { application_name: appName } : {}),
    ...(channelBinding !== null && channelBinding !== 'disable' ? { channelBinding: true } : {}),
    ...(connectTimeout !== null && Number(connectTimeout) > 0 ? { connectTimeoutMs: Number(connectTimeout) * 1000 } : {}),
    from: where,
  };
}

/** A URL WITHOUT the password: safe for logs, JSON output and DATABASE_URL (libpq takes the password from PGPASSWORD). */
export function urlWithoutPassword(p: Omit<ConnParams, 'password'>): string {
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  // sslmode travels in the URL too: tools that read only DATABASE_URL (ORMs) would otherwise connect in plain text.
  const ssl = p.sslmode ? `sslmode=${p.sslmode}` : '';
  if (p.host.startsWith('/')) return `postgresql://${encodeURIComponent(p.user)}@/${encodeURIComponent(p.database)}?host=${encodeURIComponent(p.host)}&port=${p.port}${ssl ? `&${ssl}` : ''}`;
  return `postgresql://${encodeURIComponent(p.user)}@${host}:${p.port}/${encodeURIComponent(p.database)}${ssl ? `?${ssl}` : ''}`;
}

export interface Db {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  serverVersionNum: number;
  /** The server process of this connection (pg_stat_activity.pid). */
  backendPid: number;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
  /** The server's last transaction status: 'I' idle, 'T' in a transaction, 'E' in a failed one. */
  txStatus(): string;
  /** False once the connection ended or failed (a server restart, a terminated backend, close()). */
  isOpen(): boolean;
}

/**
 * The fault-injection seam: consulted before every statement of every connection opened with it. Production code
 * never passes one; tests do (tests/helpers/faults.ts), to fail a chosen statement or to kill the process's
 * connections between two steps, and so reach crash windows no black-box test can.
 */
export interface StatementGate {
  /** Runs before `sql` is sent. Throwing fails the statement (and, if the gate killed the connections, all later ones). */
  before(sql: string, db: Db): Promise<void>;
  /** Told about each connection opened through it, so that a simulated crash can end all of them. */
  opened(db: Db, client: Client): void;
}

export interface ConnectOptions {
  gate?: StatementGate;
}

/** Outside hooks: PGX_CONNECT_TIMEOUT_MS, else 3 s (a URL's connect_timeout wins over both). */
const CONNECT_TIMEOUT_MS = Number(process.env.PGX_CONNECT_TIMEOUT_MS ?? 3000);

/** Left for the hook to answer after a connection attempt timed out (its error is more useful than "deadline"). */
const ANSWER_MARGIN_MS = 300;

function connectTimeoutFor(p: ConnParams): number {
  const explicit = p.connectTimeoutMs ?? (process.env.PGX_CONNECT_TIMEOUT_MS ? CONNECT_TIMEOUT_MS : undefined);
  if (p.connectDeadlineAt === undefined) return explicit ?? p.connectWaitMs ?? CONNECT_TIMEOUT_MS;
  const left = Math.max(100, p.connectDeadlineAt - Date.now() - ANSWER_MARGIN_MS);
  return explicit !== undefined ? Math.min(explicit, left) : left;
}

export const NOT_RUNNING_HINT = 'Start the server, or fix [server] url / PGX_DATABASE_URL; with no url pgx runs its own (`pgx local up`).';
const TLS_CERT_CODES = ['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID'];

/**
 * A failed connection as the error that says what happened: only a refused or unresolvable address means "start the
 * server / fix the URL". Never quotes the URL or the password (host and port only).
 */
export function mapConnectError(e: unknown, p: ConnParams, ctx: { timedOut?: boolean; timeoutMs?: number; sslmode?: SslMode } = {}): PgxError {
  const err = e as { code?: string; message?: string };
  const where = `${p.host}:${p.port}`;
  const msg = err.message ?? String(e);
  const ssl = ctx.sslmode ?? p.sslmode;
  const code = sqlstateOf(e);
  if (code === SQLSTATE.INVALID_PASSWORD || code === SQLSTATE.INVALID_AUTHORIZATION) {
    const tlsNote = /no encryption|SSL off/i.test(msg) ? ' The server requires an encrypted connection for this role: set sslmode=require in the URL.' : '';
    return new PgxError('SERVER_AUTH', `PostgreSQL at ${where} refused the login for role "${p.user}".${tlsNote}`, `Check the user and password in ${p.from ?? SERVER_URL_PLACES}.`, { cause: e });
  }
  if (code === SQLSTATE.INSUFFICIENT_PRIVILEGE) {
    // pgx_registry refuses CONNECT to every role but its owner (it holds the branch roles' passwords).
    return new PgxError(
      'SERVER_AUTH',
      `PostgreSQL at ${where} refused role "${p.user}" a connection to database "${p.database}" (no CONNECT privilege).`,
      p.database === 'pgx_registry'
        ? 'pgx_registry belongs to the role that first ran pgx on this server: use that role in [server] url, or (as its owner) GRANT CONNECT ON DATABASE pgx_registry and its tables to this one.'
        : 'Grant the role CONNECT on that database, or point [server] url at one it may connect to.',
      { cause: e },
    );
  }
  if (code === SQLSTATE.INVALID_CATALOG_NAME) {
    return new PgxError('SERVER_UNREACHABLE', `Database "${p.database}" does not exist on ${where}.`, `Point ${p.from ?? '[server] url'} at an existing database (e.g. /postgres).`, { cause: e });
  }
  if (/does not support SSL/i.test(msg)) {
    return new PgxError('SERVER_UNREACHABLE', `PostgreSQL at ${where} is running but does not support SSL connections, and sslmode=${ssl ?? 'require'} requires one.`, `Turn on ssl in the server's postgresql.conf, or use sslmode=prefer (or disable) in ${p.from ?? '[server] url'} / PGSSLMODE.`, { cause: e });
  }
  if (err.code && TLS_CERT_CODES.includes(err.code)) {
    return new PgxError('SERVER_UNREACHABLE', `The TLS certificate of PostgreSQL at ${where} failed verification (${err.code}, sslmode=${ssl}).`, 'Trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>, or use sslmode=require (encrypted, certificate not checked).', { cause: e });
  }
  if (err.code === '53300') {
    return new PgxError('SERVER_UNREACHABLE', `PostgreSQL at ${where} is running but has no free connection slots (${msg}).`, 'Too many clients at once: retry in a moment; run fewer agents in parallel, or raise max_connections on the server.', { cause: e });
  }
  if (err.code === '57P03') {
    return new PgxError('SERVER_UNREACHABLE', `PostgreSQL at ${where} is starting up or shutting down (${msg}).`, 'Retry in a moment.', { cause: e });
  }
  if (ctx.timedOut) {
    const s = ctx.timeoutMs !== undefined ? `${(ctx.timeoutMs / 1000).toFixed(1)} s` : 'the time allowed';
    return new PgxError(
      'SERVER_UNREACHABLE',
      `PostgreSQL at ${where} did not complete the connection within ${s} (timed out): the server or this machine is overloaded (e.g. many agents starting at once), or a firewall drops the packets.`,
      'Retry; if it keeps timing out, check the server\'s load and `pgx agent doctor` (PGX_CONNECT_TIMEOUT_MS, or connect_timeout in the URL, allows a slower server more time).',
      { cause: e },
    );
  }
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') {
    return new PgxError('SERVER_UNREACHABLE', `The host name of the server URL does not resolve (${err.code}).`, `Fix the host in ${p.from ?? SERVER_URL_PLACES}.`, { cause: e });
  }
  return new PgxError('SERVER_UNREACHABLE', `Cannot reach PostgreSQL at ${where}: ${msg}`, NOT_RUNNING_HINT, { cause: e });
}

/**
 * node-postgres' `ssl` option for each connection attempt, in order, to follow libpq's sslmode. node-postgres has no
 * fallback of its own, so pgx makes it: `prefer` tries TLS, then plain text only if the server says it does not
 * support SSL; `allow` tries plain text, then TLS if the server rejects the plain connection (pg_hba, 28000).
 * `require` encrypts without checking the certificate (as libpq does without a root certificate); `verify-ca`
 * checks the chain against Node's CA store but not the host name; `verify-full` checks both. No mode (neither the
 * URL nor PGSSLMODE names one) is no TLS.
 */
function sslAttempts(mode: SslMode | undefined): ClientConfig['ssl'][] {
  switch (mode) {
    case undefined:
      return [false];
    case 'disable':
      return [false];
    case 'allow':
      return [false, { rejectUnauthorized: false }];
    case 'prefer':
      return [{ rejectUnauthorized: false }, false];
    case 'require':
      return [{ rejectUnauthorized: false }];
    case 'verify-ca':
      return [{ rejectUnauthorized: true, checkServerIdentity: () => undefined }];
    case 'verify-full':
      return [{ rejectUnauthorized: true }];
  }
}

function worthNextAttempt(mode: SslMode | undefined, e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  if (mode === 'prefer') return /does not support SSL/i.test(err.message ?? '');
  if (mode === 'allow') return sqlstateOf(e) === SQLSTATE.INVALID_AUTHORIZATION;
  return false;
}

/** libpq's PGSSLMODE applies when the URL names none, with the same fallbacks (node-postgres would not fall back). */
function effectiveSslmode(p: ConnParams): SslMode | undefined {
  return p.sslmode ?? p.envSslmode;
}

/** "15.18 (Debian 15.18-1.pgdg120+1)" → 150018; "9.6.24" → 90624; 0 when unreadable (then a query asks). */
export function versionNum(v: string): number {
  const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(v);
  if (!m) return 0;
  const [major, minor, patch] = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
  return major >= 10 ? major * 10000 + minor : major * 10000 + minor * 100 + patch;
}

export async function connect(p: ConnParams, opts: ConnectOptions = {}): Promise<Db> {
  const pg = await loadPg();
  let client: Client | undefined;
  let failure: unknown;
  let announcedVersion = 0;
  const sslmode = effectiveSslmode(p);
  let timedOut = false;
  let timeoutMs = 0;
  for (const ssl of sslAttempts(sslmode)) {
    timeoutMs = connectTimeoutFor(p);
    const started = Date.now();
    const c = new pg.Client({
      host: p.host,
      port: p.port,
      user: p.user,
      password: p.password,
      database: p.database,
      connectionTimeoutMillis: timeoutMs,
      application_name: p.application_name ?? 'pgx',
      ...(p.channelBinding ? { enableChannelBinding: true } : {}),
      ...(p.statementTimeoutMs !== undefined ? { statement_timeout: p.statementTimeoutMs } : {}),
      ...(ssl !== undefined ? { ssl } : {}),
    });
    // An idle client error (server restart) must not crash the process with an unhandled 'error' event.
    c.on('error', () => {});
    // The server announces its version in the start-up ParameterStatus messages: read it there rather than with a
    // query after connecting (one round trip fewer on every connection, the hot path's included).
    (c as unknown as { connection: NodeJS.EventEmitter }).connection.on('parameterStatus', (m: { parameterName?: string; parameterValue?: string }) => {
      if (m.parameterName === 'server_version' && m.parameterValue) announcedVersion = versionNum(m.parameterValue);
    });
    try {
      await c.connect();
      client = c;
      break;
    } catch (e) {
      await c.end().catch(() => {});
      failure = e;
      // node-postgres reports its own timeout as "timeout expired" (or a bare "Connection terminated")
      timedOut = /timeout expired/i.test((e as Error).message ?? '') || Date.now() - started >= timeoutMs;
      if (!worthNextAttempt(sslmode, e)) break;
    }
  }
  if (!client) throw mapConnectError(failure, p, { timedOut, timeoutMs, sslmode });
  const c = client;
  let txStatus = 'I';
  let open = true;
  c.on('end', () => (open = false));
  c.on('error', () => (open = false));
  (c as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', (m: { status?: string }) => (txStatus = m.status ?? txStatus));
  const gate = opts.gate;
  const db: Db = {
    serverVersionNum: announcedVersion,
    backendPid: (c as unknown as { processID: number }).processID,
    async query<R>(sql: string, params?: unknown[]) {
      if (gate) await gate.before(sql, db);
      const r = await c.query(sql, params as unknown[]);
      return r.rows as R[];
    },
    close: () => c.end().catch(() => {}),
    txStatus: () => txStatus,
    isOpen: () => open,
  };
  gate?.opened(db, c);
  if (!db.serverVersionNum) {
    // SHOW names its column after the setting: `v` would be undefined and the version NaN (every check passing).
    const r = await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    db.serverVersionNum = Number(r.rows[0]!.v);
  }
  return db;
}
