// The one module that opens PostgreSQL connections. `pg` is imported lazily so that commands and hooks that never
// touch the database (and the start-up of those that do) do not pay for loading it.
import type { Client, ClientConfig } from 'pg';
import { PgxError } from '../errors.js';

type PgModule = typeof import('pg');
let pgPromise: Promise<PgModule> | undefined;
async function loadPg(): Promise<PgModule> {
  pgPromise ??= import('pg').then((m) => ((m as unknown as { default?: PgModule }).default ?? m) as PgModule);
  return pgPromise;
}

/** Connection parameters, kept apart so that the password never has to be rendered into a URL or argv. */
export interface ConnParams {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
}

export function parseUrl(url: string): ConnParams {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PgxError('CONFIG_INVALID', 'The server URL is not a valid postgres:// URL.', 'Check [server] url in .pgx.toml or PGX_DATABASE_URL.');
  }
  const hostParam = u.searchParams.get('host');
  return {
    host: hostParam ?? (decodeURIComponent(u.hostname) || 'localhost'),
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username) || process.env.USER || 'postgres',
    password: u.password ? decodeURIComponent(u.password) : undefined,
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres',
  };
}

/** A URL WITHOUT the password: safe for logs, JSON output and DATABASE_URL (libpq takes the password from PGPASSWORD). */
export function urlWithoutPassword(p: Omit<ConnParams, 'password'>): string {
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  const hostPart = p.host.startsWith('/') ? `@/${encodeURIComponent(p.database)}?host=${encodeURIComponent(p.host)}&port=${p.port}` : '';
  if (hostPart) return `postgresql://${encodeURIComponent(p.user)}${hostPart}`;
  return `postgresql://${encodeURIComponent(p.user)}@${host}:${p.port}/${encodeURIComponent(p.database)}`;
}

export interface Db {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** The driver's identifier escaping: the ONE way a name reaches SQL text. */
  ident(name: string): string;
  /** The driver's literal escaping, for the few statements that take no bind parameters (COMMENT, ALTER … SET). */
  literal(value: string): string;
  serverVersionNum: number;
  raw: Client;
}

const CONNECT_TIMEOUT_MS = Number(process.env.PGX_CONNECT_TIMEOUT_MS ?? 3000);

export function mapConnectError(e: unknown, p: ConnParams): PgxError {
  const err = e as { code?: string; message?: string };
  const where = `${p.host}:${p.port}`;
  if (err.code === '28P01' || err.code === '28000') {
    return new PgxError('SERVER_AUTH', `PostgreSQL at ${where} refused the login for role "${p.user}".`, 'Check the user and password in [server] url or PGX_DATABASE_URL.', { cause: e });
  }
  if (err.code === '3D000') {
    return new PgxError('SERVER_UNREACHABLE', `Database "${p.database}" does not exist on ${where}.`, 'Point [server] url at an existing database (e.g. /postgres).', { cause: e });
  }
  return new PgxError(
    'SERVER_UNREACHABLE',
    `Cannot reach PostgreSQL at ${where}: ${err.message ?? String(e)}`,
    'Start the server, or fix [server] url / PGX_DATABASE_URL; with no url pgx runs its own (`pgx local up`).',
    { cause: e },
  );
}

export async function connect(p: ConnParams, extra: Partial<ClientConfig> = {}): Promise<Db> {
  const pg = await loadPg();
  const client = new pg.Client({
    host: p.host,
    port: p.port,
    user: p.user,
    password: p.password,
    database: p.database,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'pgx',
    ...extra,
  });
  // An idle client error (server restart) must not crash the process with an unhandled 'error' event.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    throw mapConnectError(e, p);
  }
  const versionNum = Number((client as unknown as { serverVersionNum?: number }).serverVersionNum ?? 0);
  const db: Db = {
    raw: client,
    serverVersionNum: versionNum,
    async query<R>(sql: string, params?: unknown[]) {
      const r = await client.query(sql, params as unknown[]);
      return r.rows as R[];
    },
    ident: (name) => pg.escapeIdentifier(name),
    literal: (value) => pg.escapeLiteral(value),
  };
  if (!db.serverVersionNum) {
    // SHOW names its column after the setting: `v` would be undefined and the version NaN (every check passing).
    const [row] = await db.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    db.serverVersionNum = Number(row!.v);
  }
  return db;
}

export async function withDb<T>(p: ConnParams, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await connect(p);
  try {
    return await fn(db);
  } finally {
    await db.raw.end().catch(() => {});
  }
}
