// An imported source stays current: `pgx source import` remembers where the copy came from (never its password),
// the doctor compares the origin's schema with the copy's and names `pgx source sync`, and the sync replaces the
// copy in place so that the next branch carries the origin's migration. Origins are databases this test creates on
// the test server, reached by URL like any other server.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { onPath } from '../helpers/client-programs.js';
import { jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';

const rand = () => Math.random().toString(36).slice(2, 8);
const dirs: string[] = [];
const dbs: string[] = [];

afterAll(async () => {
  for (const d of dbs) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function makeOrigin(): Promise<string> {
  const name = `origin_${rand()}`;
  dbs.push(name);
  await sql(`CREATE DATABASE ${name}`);
  await sql(
    `CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL); INSERT INTO orders (item) VALUES ('tea'), ('cake'), ('jam');`,
    [],
    name,
  );
  return name;
}

function project(source: string) {
  const p = makeProject({ source });
  dirs.push(p.dir);
  dbs.push(source);
  return p;
}

const withPassword = (db: string) =>
  `postgresql://${pgInfo().user}:${encodeURIComponent(pgInfo().password)}@${pgInfo().host}:${pgInfo().port}/${db}`;
const withoutPassword = (db: string) => `postgresql://${pgInfo().user}@${pgInfo().host}:${pgInfo().port}/${db}`;
const doctor = (p: ReturnType<typeof makeProject>) => {
  const r = runPgx(['agent', 'doctor', '--json'], p);
  return {
    r,
    byName: Object.fromEntries(jsonOf(r).checks.map((c: { name: string }) => [c.name, c])) as Record<
      string,
      { status: string; detail: string; fix?: string }
    >,
  };
};
const psql = (p: ReturnType<typeof makeProject>, id: string, q: string) =>
  runPgx(['agent', 'exec', '--id', id, '--keep', '--', 'psql', '-X', '-Atc', q], p);

/** Every file under dir, as text (what pgx wrote: config, state, logs). */
function filesUnder(dir: string, skip: string[]): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const f = join(dir, d.name);
    if (skip.includes(f)) continue;
    if (d.isDirectory()) out.push(...filesUnder(f, skip));
    else if (d.isFile() && statSync(f).size < 5_000_000) out.push({ file: f, text: readFileSync(f, 'latin1') });
  }
  return out;
}

describe('pgx source sync', () => {
  it('after a migration on the origin the doctor warns, and `pgx source sync` makes the next branch carry it', async () => {
    const origin = await makeOrigin();
    const copy = `copy_${rand()}`;
    const p = project(copy);
    const envFile = join(p.dir, '.env');
    writeFileSync(envFile, `DATABASE_URL=${withPassword(origin)}\n`);
    const outputs: string[] = [];
    const run = (args: string[]) => {
      const r = runPgx(args, p);
      outputs.push(r.stdout, r.stderr);
      return r;
    };

    const imp = run(['source', 'import', '--from-env', 'DATABASE_URL', '--json']);
    expect(imp.status, imp.stdout + imp.stderr).toBe(0);
    expect(jsonOf(imp).origin).toMatchObject({
      kind: 'env',
      env: 'DATABASE_URL',
      env_file: envFile,
      origin: withoutPassword(origin),
      format: 'server',
    });
    expect(jsonOf(imp).origin.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    const a = psql(p, 'a', 'select count(*) from orders');
    expect(a.stdout.trim(), a.stderr).toBe('3');
    let d = doctor(p);
    expect(d.byName.origin).toMatchObject({ status: 'ok' });
    expect(d.byName.template!.detail).toContain(`pgx's copy "${copy}"`);

    // The migration, on the origin only.
    await sql(
      `ALTER TABLE orders ADD COLUMN price int NOT NULL DEFAULT 1; INSERT INTO orders (item, price) VALUES ('scone', 2);`,
      [],
      origin,
    );
    d = doctor(p);
    expect(d.byName.origin).toMatchObject({ status: 'warn', fix: 'pgx source sync' });
    expect(d.byName.origin!.detail).toContain('schema change');
    // The template is in step with pgx's copy, and says so without claiming the origin.
    expect(d.byName.template).toMatchObject({ status: 'ok' });
    expect(d.byName.template!.detail).toMatch(new RegExp(`in step with pgx's copy "${copy}"`));

    // A template refresh re-reads pgx's copy only, and says where the origin's changes come from.
    const refresh = run(['template', 'refresh']);
    expect(refresh.status, refresh.stderr).toBe(0);
    expect(refresh.stdout).toContain(`refreshed from pgx's copy "${copy}" of ${withoutPassword(origin)}`);
    expect(refresh.stdout).toContain('`pgx source sync` pulls the origin');
    expect(psql(p, 'b0', 'select price from orders limit 1').status).not.toBe(0);

    const oldOid = (await sql(`SELECT oid::text FROM pg_database WHERE datname = $1`, [copy]))[0].oid;
    const sync = run(['source', 'sync', '--json']);
    expect(sync.status, sync.stdout + sync.stderr).toBe(0);
    expect(sync.stderr).toMatch(/syncing from the database named by DATABASE_URL/);
    if (onPath('pg_dump')) {
      expect(sync.stderr).toMatch(/dumping/);
      expect(sync.stderr).toMatch(/restoring: \d+\/\d+ items/);
    } else {
      // No pg_dump (issue 39): the Node copy, said as the method and why, with each of its steps.
      expect(sync.stderr).toMatch(/copying by node-copy \(no pg_dump on this machine\)/);
      expect(sync.stderr).toMatch(/copying rows: \d+\/\d+ tables/);
      expect(sync.stderr).toMatch(/building indexes and keys/);
    }
    const s = jsonOf(sync);
    expect(s).toMatchObject({
      database: copy,
      from: withoutPassword(origin),
      old_copy_left: null,
      template_error: null,
      next: null,
    });
    expect(s.old_copy_dropped).toMatch(/^pgx_src_[a-z0-9]{16}$/);
    expect(s.template.template).toMatch(/^pgx_tpl_/);
    // The old copy is gone; the name holds the new one; nothing of the sync is left over.
    expect(
      await sql(`SELECT 1 FROM pg_database WHERE datname = $1 OR oid::text = $2`, [s.old_copy_dropped, oldOid]),
    ).toEqual([]);
    expect(await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [copy], 'pgx_registry')).toEqual([]);

    const b = psql(p, 'b', 'select count(*), sum(price) from orders');
    expect(b.stdout.trim(), b.stderr).toBe('4|5');
    // The branch made before keeps what it had.
    expect(psql(p, 'a', 'select count(*) from orders').stdout.trim()).toBe('3');
    expect(doctor(p).byName.origin).toMatchObject({ status: 'ok' });

    // Importing again is refused (exit 6) and names the sync.
    const again = run(['source', 'import', '--from-env', 'DATABASE_URL', '--json']);
    expect(again.status).toBe(6);
    expect(jsonOf(again).error.hint).toContain('pgx source sync');

    // The copy dropped by hand (or with its server's data): the doctor names the sync, which copies it again.
    await sql(`DROP DATABASE ${copy} WITH (FORCE)`);
    d = doctor(p);
    expect(d.byName.template).toMatchObject({
      status: 'fail',
      fix: `pgx source sync (copies it again from ${withoutPassword(origin)})`,
    });
    const back = run(['source', 'sync', '--json']);
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(jsonOf(back).old_copy_dropped).toBeNull();
    expect(psql(p, 'c', 'select count(*) from orders').stdout.trim()).toBe('4');

    // The password appears nowhere pgx keeps or prints things (the user's own .env aside).
    const secret = pgInfo().password;
    const rows = await sql(
      `SELECT row_to_json(s)::text AS j FROM pgx_source s UNION ALL SELECT row_to_json(c)::text FROM pgx_source_copy c`,
      [],
      'pgx_registry',
    );
    expect(rows.map((r) => r.j).join('\n')).toContain(withoutPassword(origin));
    expect(rows.map((r) => r.j).join('\n')).not.toContain(secret);
    expect(
      (
        await sql(`SELECT string_agg(coalesce(shobj_description(oid, 'pg_database'), ''), ' ') AS c FROM pg_database`)
      )[0].c,
    ).not.toContain(secret);
    for (const f of filesUnder(p.dir, [envFile])) expect(f.text.includes(secret), f.file).toBe(false);
    for (const o of outputs) expect(o).not.toContain(secret);
  });

  it('a URL origin takes its password from PGPASSWORD; a session on the copy defers the switch, nothing is dropped early', async () => {
    const origin = await makeOrigin();
    const copy = `copy_${rand()}`;
    const p = project(copy);
    const env = { ...p.env, PGPASSWORD: pgInfo().password };
    const imp = runPgx(['source', 'import', '--from', withoutPassword(origin), '--no-template', '--json'], {
      cwd: p.cwd,
      env,
    });
    expect(imp.status, imp.stdout + imp.stderr).toBe(0);
    expect(jsonOf(imp).origin).toMatchObject({ kind: 'url', env: null, origin: withoutPassword(origin) });

    await sql(`CREATE TABLE refunds (id int)`, [], origin);
    // Someone is connected to pgx's copy: the sync cannot switch it, keeps it as it was, and leaves no new copy behind.
    const info = pgInfo();
    const holder = new pg.Client({
      host: info.host,
      port: info.port,
      user: info.user,
      password: info.password,
      database: copy,
    });
    await holder.connect();
    try {
      const oid = (await sql(`SELECT oid::text FROM pg_database WHERE datname = $1`, [copy]))[0].oid;
      const busy = runPgx(['source', 'sync', '--json'], { cwd: p.cwd, env });
      expect(busy.status, busy.stdout).toBe(6);
      expect(jsonOf(busy).error.message).toContain(`connected to "${copy}"`);
      expect((await sql(`SELECT oid::text FROM pg_database WHERE datname = $1`, [copy]))[0].oid).toBe(oid);
      expect(await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [copy], 'pgx_registry')).toEqual([]);
    } finally {
      await holder.end();
    }
    // Without PGPASSWORD the origin refuses the copy's login (pg_dump's, or the Node copy's); with it the sync goes through.
    const noPw = runPgx(['source', 'sync', '--json'], p);
    expect(noPw.status).toBe(4); // login refused (decisions/136-import-login-refused-exit-4.md)
    expect(noPw.stdout + noPw.stderr).not.toContain(info.password);
    // nobody passed --from to sync: the hint names the origin it remembered, and where its password comes from
    expect(jsonOf(noPw).error.hint).toBe(
      `Check the user name and password of the URL of the origin \`pgx source sync\` remembered, ${withoutPassword(origin)} (its password from PGPASSWORD or ~/.pgpass; or pass --from / --from-env); a special character in the password must be percent-encoded (@ → %40).`,
    );
    const sync = runPgx(['source', 'sync', '--json'], { cwd: p.cwd, env });
    expect(sync.status, sync.stdout + sync.stderr).toBe(0);
    const b = runPgx(['agent', 'exec', '--id', 'b', '--', 'psql', '-X', '-Atc', 'select count(*) from refunds'], p);
    expect(b.stdout.trim(), b.stderr).toBe('0');
    // The doctor reaches a URL origin with the same PGPASSWORD; an origin it cannot reach is a skip with a note.
    const withPw = { ...p, env };
    expect(doctor(withPw).byName.origin).toMatchObject({ status: 'ok' });
    // What a sync killed after recording its copy and before creating it leaves: the doctor names it, the next sync clears it.
    const left = `pgx_src_${'k'.repeat(10)}${rand()}`;
    await sql(
      `INSERT INTO pgx_source_copy (name, database, project, nonce, state) VALUES ($1, $2, $3, $4, 'new')`,
      [left, copy, p.name, left.slice(8)],
      'pgx_registry',
    );
    expect(doctor(withPw).byName.origin).toMatchObject({ status: 'warn', fix: 'pgx source sync (drops them first)' });
    expect(doctor(withPw).byName.origin!.detail).toContain(left);
    expect(runPgx(['source', 'sync', '--no-template'], withPw).status).toBe(0);
    expect(await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [copy], 'pgx_registry')).toEqual([]);
    expect(doctor(withPw).byName.origin).toMatchObject({ status: 'ok' });
    await sql(
      `UPDATE pgx_source SET origin = $2 WHERE database = $1`,
      [copy, `postgresql://nobody@127.0.0.1:1/${origin}`],
      'pgx_registry',
    );
    const unreachable = doctor(withPw).byName.origin!;
    expect(unreachable.status).toBe('skip');
    expect(unreachable.detail).toContain('not reachable now');
  });

  it('a failed sync from a remembered variable names that variable and its .env, not a --from nobody passed', async () => {
    const origin = await makeOrigin();
    const p = project(`copy_${rand()}`);
    const envFile = join(p.dir, '.env');
    writeFileSync(envFile, `DATABASE_URL=${withPassword(origin)}\n`);
    expect(runPgx(['source', 'import', '--from-env', 'DATABASE_URL', '--no-template'], p).status).toBe(0);
    writeFileSync(envFile, `DATABASE_URL=postgresql://${pgInfo().user}@127.0.0.1:1/${origin}\n`); // the server moved
    const r = runPgx(['source', 'sync'], p);
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toContain(
      `hint: Check the host and port of the URL of $DATABASE_URL (from ${envFile}; the variable \`pgx source sync\` remembered)`,
    );
    expect(r.stderr).not.toContain('--from URL');
  });

  it('--into beside the configured source names the edit that makes it the source, not the hooks', async () => {
    const origin = await makeOrigin();
    const p = project(`copy_${rand()}`);
    const other = `other_${rand()}`;
    dbs.push(other);
    const r = runPgx(['source', 'import', '--from', withPassword(origin), '--into', other, '--json'], p);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(jsonOf(r).next).toContain(`set [project] source = "${other}"`);
    expect(jsonOf(r).template).toBeNull();
    const text = runPgx(['source', 'sync'], p); // the configured source was never imported
    expect(text.status).toBe(2);
    expect(text.stderr).toContain('does not know where');
  });
});
