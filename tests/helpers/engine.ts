// In-process engine tests: a project's config and an Engine on the test server, no CLI spawn. Names are the
// test's own: each project gets a random name and a random host label, so branch and template names never meet
// another test's (or another file's) leftovers.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/project/config.js';
import { Engine } from '../../src/engine/api.js';
import { LOCK } from '../../src/registry/locks.js';
import { templateName } from '../../src/engine/template.js';
import type { StatementGate } from '../../src/server/db.js';
import { Faults, InjectedFault } from './faults.js';
import { registryRows } from './hooks.js';
import { startTestCluster } from './cluster.js';
import { makeProject, pgInfo, sql, withAdmin } from './pgx.js';

export { registryRows };

export interface TestProject {
  config: Config;
  name: string;
  host: string;
  template: string;
  /** Opens an engine (with an optional fault gate); closed by the caller or left to die with a crash. */
  open(gate?: StatementGate): Promise<Engine>;
  /** Opens, runs, closes. */
  run<T>(fn: (e: Engine) => Promise<T>): Promise<T>;
  /** The same project (so the same template) under a new host label: branches of its own, checked on their own. */
  fork(): TestProject;
}

const rand = (n: number) => randomBytes(n).toString('hex').slice(0, n);

export function testProject(opts: { source?: string; toml?: string; url?: string } = {}): TestProject {
  const p = makeProject({ source: opts.source, toml: opts.toml });
  return withConfig(
    loadConfig({
      cwd: p.cwd,
      env: { PGX_DATABASE_URL: opts.url ?? pgInfo().url, PGX_HOST: `h${rand(6)}`, PGX_HOME: p.home, HOME: p.dir },
    }),
  );
}

/** What a test source holds: a table and two rows. */
const SOURCE_TABLE = `CREATE TABLE users (id serial primary key, email text not null); INSERT INTO users (email) VALUES ('a@x'), ('b@x');`;

/**
 * A project on a server of the test's own, with a source of two rows, for a test that changes the registry's schema:
 * on the shared server every other file's engines would meet it (a dropped pool table strands their members, whose
 * roles then read as left without a branch). `query` runs as the admin on that server; the server goes afterwards.
 */
export async function onOwnServer<T>(
  toml: string,
  fn: (t: TestProject, query: (text: string, database?: string) => Promise<unknown[]>) => Promise<T>,
): Promise<T> {
  const c = await startTestCluster();
  const query = (text: string, database = 'postgres') =>
    withAdmin(async (client) => (await client.query(text)).rows as unknown[], database, c);
  try {
    await query('CREATE DATABASE src');
    await query(SOURCE_TABLE, 'src');
    return await fn(testProject({ source: 'src', toml, url: c.url }), query);
  } finally {
    await c.stop();
  }
}

function withConfig(config: Config): TestProject {
  const host = config.host;
  const open = (gate?: StatementGate) => Engine.open(config, { quiet: true, gate });
  return {
    config,
    name: config.project,
    host,
    template: templateName(config.project, config.source),
    open,
    async run(fn) {
      const e = await open();
      try {
        return await fn(e);
      } finally {
        await e.close();
      }
    },
    fork: () => withConfig({ ...config, host: `h${rand(6)}` }),
  };
}

/** A source database with a table and two rows. */
export async function makeSource(): Promise<string> {
  const name = `src_${rand(8)}`;
  await sql(`CREATE DATABASE ${name}`);
  await sql(SOURCE_TABLE, [], name);
  return name;
}

export interface DbRow {
  oid: string;
  datallowconn: boolean;
  datistemplate: boolean;
  comment: string | null;
}

export async function dbRow(name: string): Promise<DbRow | undefined> {
  return (
    await sql<DbRow>(
      `SELECT oid::text, datallowconn, datistemplate, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
      [name],
    )
  )[0];
}

export async function settingsOf(name: string): Promise<string[]> {
  return (
    (
      await sql(
        `SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1`,
        [name],
      )
    )[0]?.setconfig ?? []
  ).sort();
}

export async function databasesLike(prefix: string): Promise<string[]> {
  return (
    await sql<{ datname: string }>(`SELECT datname FROM pg_database WHERE left(datname, $2) = $1 ORDER BY 1`, [
      prefix,
      prefix.length,
    ])
  ).map((r) => r.datname);
}

/**
 * The recovery invariant: for this project, every branch database (named with its host label) has a record and a
 * stamp, every record has its database and is not stuck 'creating', the template (if any) is the only database
 * under its name prefix, and no template build is still recorded.
 */
export async function expectNoOrphans(
  t: TestProject,
  opts: { allowRetiring?: boolean; template?: boolean } = {},
): Promise<void> {
  const rows = (await registryRows(t.name)).filter((r) => r.host === t.host);
  const dbs = await sql<{ datname: string; comment: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname LIKE $1 ORDER BY 1`,
    [`%\\_${t.host}\\_%`],
  );
  const problems: string[] = [];
  for (const d of dbs) {
    if (!rows.some((r) => r.name === d.datname)) problems.push(`database ${d.datname} has no record`);
    if (!d.comment?.startsWith('pgx:branch:')) problems.push(`database ${d.datname} is not stamped (${d.comment})`);
  }
  for (const r of rows) {
    if (!(await dbRow(r.name))) problems.push(`record ${r.name} has no database`);
    if (r.nonce && (await dbRow(`pgx_new_${r.nonce}`)))
      problems.push(`record ${r.name}'s creation pgx_new_${r.nonce} is still there`);
    if (r.state === 'creating') problems.push(`record ${r.name} is stuck creating`);
    if (r.state === 'retiring' && !opts.allowRetiring) problems.push(`record ${r.name} is retiring`);
  }
  if (opts.template !== false) {
    const leftovers = await databasesLike(`${t.template}_`);
    if (leftovers.length) problems.push(`template leftovers: ${leftovers.join(', ')}`);
    const builds = await sql(`SELECT name FROM pgx_template_build WHERE template = $1`, [t.template], 'pgx_registry');
    if (builds.length) problems.push(`recorded builds: ${builds.map((b) => b.name).join(', ')}`);
  }
  if (problems.length) throw new Error(`not clean:\n  ${problems.join('\n  ')}`);
}

/** Runs `fn` on an engine whose process "dies" before the first statement matching `before`. */
export async function crashDuring(
  t: TestProject,
  before: RegExp,
  fn: (e: Awaited<ReturnType<TestProject['open']>>) => Promise<unknown>,
): Promise<void> {
  const faults = new Faults().crash(before);
  const e = await t.open(faults);
  const err = await fn(e).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(faults.crashed, `no statement matched ${before}`).toBe(true);
  expect(
    causes(err).some((c) => c instanceof InjectedFault),
    String(err),
  ).toBe(true);
  await faults.settled();
}

/** The error and what it wraps (the engine wraps a failed clone in a BRANCH_FAILED error). */
export const causes = (e: unknown): unknown[] => (e ? [e, ...causes((e as { cause?: unknown }).cause)] : []);

/** Waits until no session holds the advisory lock `key` (LOCK.*), then lets it go at once. */
async function untilUnlocked(key: string): Promise<void> {
  await withAdmin(async (c) => {
    await c.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    await c.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
  }, 'pgx_registry');
}

/**
 * gc is server-wide and only try-locks: when a concurrent test's gc holds a record (mid-drop), this test's gc passes
 * it by, and the record, or its database, is still there for a moment. Past this, whichever gc took it is done.
 */
export const untilIdentityUnlocked = (identityKey: string) => untilUnlocked(LOCK.identity(identityKey));

/** Waits (up to 30 s) until some session holds the advisory lock `key` (LOCK.*). */
async function untilLocked(key: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    const held = await sql(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted AND ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
      [key],
    );
    if (held.length) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`advisory lock ${key} was never taken`);
}

/** Until a fork holds `parent`'s freeze lock: it is choosing or making the frozen copy (engine/freeze.ts). */
export const untilFreezeLocked = (parent: string) => untilLocked(LOCK.freeze(parent));

/** Until nobody holds `parent`'s freeze lock (a maker, or a concurrent gc sweeping its copies). */
export const untilFreezeUnlocked = (parent: string) => untilUnlocked(LOCK.freeze(parent));

/** The same for a template's warm pool: a concurrent gc (or filler) sweeping it holds its pool lock. */
export const untilPoolUnlocked = (template: string) => untilUnlocked(LOCK.pool(template));
