// In-process engine tests: a project's config and an Engine on the test server, no CLI spawn. Names are the
// test's own: each project gets a random name and a random host label, so branch and template names never meet
// another test's (or another file's) leftovers.
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config.js';
import { Engine } from '../../src/engine/api.js';
import { templateName } from '../../src/engine/template.js';
import type { StatementGate } from '../../src/server/db.js';
import { makeProject, pgInfo, sql } from './pgx.js';

export interface TestProject {
  config: Config;
  name: string;
  host: string;
  template: string;
  /** Opens an engine (with an optional fault gate); closed by the caller or left to die with a crash. */
  open(gate?: StatementGate): Promise<Engine>;
  /** Opens, runs, closes. */
  run<T>(fn: (e: Engine) => Promise<T>): Promise<T>;
}

const rand = (n: number) => randomBytes(n).toString('hex').slice(0, n);

export function testProject(opts: { source?: string; toml?: string } = {}): TestProject {
  const host = `h${rand(6)}`;
  const p = makeProject({ source: opts.source, toml: opts.toml });
  const config = loadConfig({ cwd: p.cwd, env: { PGX_DATABASE_URL: pgInfo().url, PGX_HOST: host, PGX_HOME: p.home, HOME: p.dir } });
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
  };
}

/** A source database with a table and two rows. */
export async function makeSource(): Promise<string> {
  const name = `src_${rand(8)}`;
  await sql(`CREATE DATABASE ${name}`);
  await sql(`CREATE TABLE users (id serial primary key, email text not null); INSERT INTO users (email) VALUES ('a@x'), ('b@x');`, [], name);
  return name;
}

export interface DbRow {
  oid: string;
  datallowconn: boolean;
  datistemplate: boolean;
  comment: string | null;
}

export async function dbRow(name: string): Promise<DbRow | undefined> {
  return (await sql<DbRow>(`SELECT oid::text, datallowconn, datistemplate, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`, [name]))[0];
}

export async function settingsOf(name: string): Promise<string[]> {
  return ((await sql(`SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1`, [name]))[0]?.setconfig ?? []).sort();
}

export async function databasesLike(prefix: string): Promise<string[]> {
  return (await sql<{ datname: string }>(`SELECT datname FROM pg_database WHERE left(datname, $2) = $1 ORDER BY 1`, [prefix, prefix.length])).map((r) => r.datname);
}

export async function registryRows(project: string): Promise<{ name: string; state: string; db_exists: boolean }[]> {
  return sql(`SELECT b.name, b.state, (d.oid IS NOT NULL) AS db_exists FROM pgx_branch b LEFT JOIN pg_database d ON d.datname = b.name WHERE b.project = $1 ORDER BY 1`, [project], 'pgx_registry');
}

/**
 * The recovery invariant: for this project, every branch database (named with its host label) has a record and a
 * stamp, every record has its database and is not stuck 'creating', the template (if any) is the only database
 * under its name prefix, and no template build is still recorded.
 */
export async function expectNoOrphans(t: TestProject, opts: { allowRetiring?: boolean } = {}): Promise<void> {
  const rows = await registryRows(t.name);
  const dbs = (await sql<{ datname: string; comment: string | null }>(`SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname LIKE $1 ORDER BY 1`, [`%\\_${t.host}\\_%`]));
  const problems: string[] = [];
  for (const d of dbs) {
    if (!rows.some((r) => r.name === d.datname)) problems.push(`database ${d.datname} has no record`);
    if (!d.comment?.startsWith('pgx:branch:')) problems.push(`database ${d.datname} is not stamped (${d.comment})`);
  }
  for (const r of rows) {
    if (!r.db_exists) problems.push(`record ${r.name} has no database`);
    if (r.state === 'creating') problems.push(`record ${r.name} is stuck creating`);
    if (r.state === 'retiring' && !opts.allowRetiring) problems.push(`record ${r.name} is retiring`);
  }
  const leftovers = (await databasesLike(`${t.template}_`));
  if (leftovers.length) problems.push(`template leftovers: ${leftovers.join(', ')}`);
  const builds = await sql(`SELECT name FROM pgx_template_build WHERE template = $1`, [t.template], 'pgx_registry');
  if (builds.length) problems.push(`recorded builds: ${builds.map((b) => b.name).join(', ')}`);
  if (problems.length) throw new Error(`not clean:\n  ${problems.join('\n  ')}`);
}
