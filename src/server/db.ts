// The one module that opens PostgreSQL connections. `pg` is imported lazily so that commands and hooks that never
// touch the database (and the start-up of those that do) do not pay for loading it.
import type { Client, ClientConfig } from 'pg';
import { PgxError } from '../lib/errors.js';
import { sqlstateOf, SQLSTATE } from './sqlstate.js';
import { SERVER_URL_PLACES, type ConnParams, type SslMode } from './conn-params.js';
export { isConnectionLost } from './sqlstate.js'; // for the doctor, which reaches the server layer only through this module

type PgModule = typeof import('pg');
let pgPromise: Promise<PgModule> | undefined;
async function loadPg(): Promise<PgModule> {
  pgPromise ??= import('pg').then((m) => ((m as unknown as { default?: PgModule }).default ?? m) as PgModule);
  return pgPromise;
}

export interface Db {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /**
   * A script sent as it is (the simple protocol: several statements, no parameters), every value as the server's
   * text: each statement's command tag, columns and rows. `pgx local sql` only.
   */
  script(sql: string): Promise<ScriptResult[]>;
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

/** One statement's result of Db.script. */
export interface ScriptResult {
  command: string;
  rowCount: number | null;
  columns: string[];
  rows: (string | null)[][];
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

export const NOT_RUNNING_HINT =
  'Start the server, or fix [server] url / PGX_DATABASE_URL; with no url pgx runs its own (`pgx local up`).';
const TLS_CERT_CODES = [
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
];

/**
 * A failed connection as the error that says what happened: only a refused or unresolvable address means "start the
 * server / fix the URL". Never quotes the URL or the password (host and port only).
 */
export function mapConnectError(
  e: unknown,
  p: ConnParams,
  ctx: { timedOut?: boolean; timeoutMs?: number; sslmode?: SslMode } = {},
): PgxError {
  const err = e as { code?: string; message?: string };
  const where = `${p.host}:${p.port}`;
  const msg = err.message ?? String(e);
  const ssl = ctx.sslmode ?? p.sslmode;
  const code = sqlstateOf(e);
  if (code === SQLSTATE.INVALID_PASSWORD || code === SQLSTATE.INVALID_AUTHORIZATION) {
    const tlsNote = /no encryption|SSL off/i.test(msg)
      ? ' The server requires an encrypted connection for this role: set sslmode=require in the URL.'
      : '';
    return new PgxError(
      'SERVER_AUTH',
      `PostgreSQL at ${where} refused the login for role "${p.user}".${tlsNote}`,
      `Check the user and password in ${p.from ?? SERVER_URL_PLACES}.`,
      { cause: e },
    );
  }
  if (/client password must be a string/i.test(msg)) {
    // node-postgres, asked for a SCRAM password it was not given: no SQLSTATE, but a refused login all the same
    return new PgxError(
      'SERVER_AUTH',
      `PostgreSQL at ${where} asked role "${p.user}" for a password, and none was given.`,
      `Give the password in ${p.from ?? SERVER_URL_PLACES} (or PGPASSWORD, or ~/.pgpass).`,
      { cause: e },
    );
  }
  if (code === SQLSTATE.INSUFFICIENT_PRIVILEGE) {
    // pgx_registry refuses CONNECT to every role but its owner (it holds the branch roles' passwords).
    return new PgxError(
      'SERVER_AUTH',
      `PostgreSQL at ${where} refused role "${p.user}" a connection to database "${p.database}" (no CONNECT privilege).`,
      p.database === 'pgx_registry'
        ? 'pgx_registry belongs to the role that first ran pgx on this server: use that role in [server] url, or ' +
            '(as its owner) GRANT CONNECT ON DATABASE pgx_registry and its tables to this one.'
        : 'Grant the role CONNECT on that database, or point [server] url at one it may connect to.',
      { cause: e },
    );
  }
  if (code === SQLSTATE.INVALID_CATALOG_NAME) {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `Database "${p.database}" does not exist on ${where}.`,
      `Point ${p.from ?? '[server] url'} at an existing database (e.g. /postgres).`,
      { cause: e },
    );
  }
  if (/does not support SSL/i.test(msg)) {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `PostgreSQL at ${where} is running but does not support SSL connections, and sslmode=${ssl ?? 'require'} requires one.`,
      `Turn on ssl in the server's postgresql.conf, or use sslmode=prefer (or disable) in ${p.from ?? '[server] url'} / PGSSLMODE.`,
      { cause: e },
    );
  }
  if (err.code && TLS_CERT_CODES.includes(err.code)) {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `The TLS certificate of PostgreSQL at ${where} failed verification (${err.code}, sslmode=${ssl}).`,
      'Trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>, or use sslmode=require (encrypted, certificate not checked).',
      { cause: e },
    );
  }
  if (err.code === '53300') {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `PostgreSQL at ${where} is running but has no free connection slots (${msg}).`,
      'Too many clients at once: retry in a moment; run fewer agents in parallel, or raise max_connections on the server.',
      { cause: e },
    );
  }
  if (err.code === '57P03') {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `PostgreSQL at ${where} is starting up or shutting down (${msg}).`,
      'Retry in a moment.',
      { cause: e },
    );
  }
  if (ctx.timedOut) {
    const s = ctx.timeoutMs !== undefined ? `${(ctx.timeoutMs / 1000).toFixed(1)} s` : 'the time allowed';
    return new PgxError(
      'SERVER_UNREACHABLE',
      `PostgreSQL at ${where} did not complete the connection within ${s} (timed out): the server or this machine ` +
        `is overloaded (e.g. many agents starting at once), or a firewall drops the packets.`,
      "Retry; if it keeps timing out, check the server's load and `pgx agent doctor` (PGX_CONNECT_TIMEOUT_MS, " +
        'or connect_timeout in the URL, allows a slower server more time).',
      { cause: e },
    );
  }
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') {
    return new PgxError(
      'SERVER_UNREACHABLE',
      `The host name of the server URL does not resolve (${err.code}).`,
      `Fix the host in ${p.from ?? SERVER_URL_PLACES}.`,
      { cause: e },
    );
  }
  return new PgxError('SERVER_UNREACHABLE', `Cannot reach PostgreSQL at ${where}: ${msg}`, NOT_RUNNING_HINT, {
    cause: e,
  });
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
  return (await openConnection(p, opts)).db;
}

/**
 * A connection as `connect` opens it, with node-postgres' client beside it: only for what the Db interface does not
 * carry (COPY streams, the Node copier's pool for @supabase/pg-delta: src/copy/). Its statements bypass the gate.
 */
export async function openConnection(p: ConnParams, opts: ConnectOptions = {}): Promise<{ db: Db; client: Client }> {
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
    (c as unknown as { connection: NodeJS.EventEmitter }).connection.on(
      'parameterStatus',
      (m: { parameterName?: string; parameterValue?: string }) => {
        if (m.parameterName === 'server_version' && m.parameterValue) announcedVersion = versionNum(m.parameterValue);
      },
    );
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
  (c as unknown as { connection: NodeJS.EventEmitter }).connection.on(
    'readyForQuery',
    (m: { status?: string }) => (txStatus = m.status ?? txStatus),
  );
  const gate = opts.gate;
  const db: Db = {
    serverVersionNum: announcedVersion,
    backendPid: (c as unknown as { processID: number }).processID,
    async query<R>(sql: string, params?: unknown[]) {
      if (gate) await gate.before(sql, db);
      const r = await c.query(sql, params as unknown[]);
      return r.rows as R[];
    },
    async script(sql: string) {
      if (gate) await gate.before(sql, db);
      const asText = { getTypeParser: () => (v: string) => v };
      const r = (await c.query({ text: sql, rowMode: 'array', types: asText } as never)) as unknown;
      type Raw = { command: string; rowCount: number | null; fields?: { name: string }[]; rows: (string | null)[][] };
      return (Array.isArray(r) ? (r as Raw[]) : [r as Raw]).map((x) => ({
        command: x.command,
        rowCount: x.rowCount,
        columns: (x.fields ?? []).map((f) => f.name),
        rows: x.rows ?? [],
      }));
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
  return { db, client: c };
}
