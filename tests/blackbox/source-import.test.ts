// From nothing to a project whose real development database is cloned per branch, using only documented commands:
// `pgx init` (which offers the import when a .env names a DATABASE_URL), `pgx source import` from another PostgreSQL
// and from dump files, then a branch. The target is pgx's embedded local server, or a [server] url.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs, onPath } from '../helpers/client-programs.js';
import { adminEnv, jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';

const SRC = `shopsrc_${Math.random().toString(36).slice(2, 8)}`;
const started: { cwd: string; env: NodeJS.ProcessEnv }[] = [];

beforeAll(async () => {
  await sql(
    `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'shop_owner') THEN CREATE ROLE shop_owner NOLOGIN; END IF; END $$`,
  );
  await sql(`CREATE DATABASE ${SRC}`);
  await sql(
    `CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL); INSERT INTO orders (item) VALUES ('tea'), ('cake'), ('jam'); ALTER TABLE orders OWNER TO shop_owner;`,
    [],
    SRC,
  );
});

afterAll(async () => {
  for (const p of started) {
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    runPgx(['local', 'down'], p);
    if (s.data_dir?.startsWith('/var/lib/pgx/')) rmSync(dirname(dirname(s.data_dir)), { recursive: true, force: true });
  }
});

/** A project (a package.json) with no .pgx.toml and no server configured: pgx's embedded local server is the target. */
function freshDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-import-'));
  writeFileSync(join(dir, 'package.json'), '{}\n');
  const home = mkdtempSync(join(tmpdir(), 'pgx-import-home-'));
  const p = {
    dir,
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      PGX_HOME: join(dir, '.pgx-home'),
      PGX_HOST: 'testhost',
    } as NodeJS.ProcessEnv,
  };
  started.push(p);
  return p;
}

const srcUrl = (db: string) =>
  `postgresql://${pgInfo().user}:${encodeURIComponent(pgInfo().password)}@${pgInfo().host}:${pgInfo().port}/${db}`;
const count = (r: { stdout: string }) => r.stdout.trim();

describe('pgx source import', () => {
  it('from another PostgreSQL named by DATABASE_URL in .env: init offers it, import keeps ownership, a branch clones it', async () => {
    const p = freshDir();
    writeFileSync(join(p.dir, '.env'), `# the app's own config\nDATABASE_URL="${srcUrl(SRC)}?schema=public"\n`);
    const init = runPgx(['init', '--json'], p);
    expect(init.status, init.stderr).toBe(0);
    const offer = jsonOf(init);
    expect(offer.import).toMatchObject({
      variable: 'DATABASE_URL',
      from: join(p.dir, '.env'),
      command: 'pgx source import --from-env DATABASE_URL',
    });
    expect(offer.next).toBe('pgx source import --from-env DATABASE_URL');
    expect(init.stdout).not.toContain(pgInfo().password);

    const imp = runPgx(['source', 'import', '--from-env', 'DATABASE_URL', '--json'], p);
    expect(imp.status, imp.stdout + imp.stderr).toBe(0);
    expect(imp.stdout + imp.stderr).not.toContain(pgInfo().password);
    if (onPath('pg_dump')) {
      expect(imp.stderr).toMatch(/dumping/);
      expect(imp.stderr).toMatch(/restoring: \d+\/\d+ items/);
    } else {
      // No pg_dump (issue 39): the Node copy, said as the method and why, with each of its steps.
      expect(imp.stderr).toMatch(/copying by node-copy \(no pg_dump on this machine\)/);
      expect(imp.stderr).toMatch(/creating the schema \(\d+ statements\)/);
      expect(imp.stderr).toMatch(/copying rows: 1\/1 tables/);
      expect(imp.stderr).toMatch(/building indexes and keys/);
    }
    const r = jsonOf(imp);
    expect(r).toMatchObject({
      database: SRC,
      format: 'server',
      roles_created: ['shop_owner'],
      config_updated: join(p.dir, '.pgx.toml'),
    });
    expect(r.warnings.join(' ')).toContain('schema'); // Prisma's ?schema= is not passed on, and says so
    expect(readFileSync(join(p.dir, '.pgx.toml'), 'utf8')).toMatch(new RegExp(`^source = "${SRC}"$`, 'm'));
    expect(r.template).toMatch(/^pgx_tpl_/);

    const branch = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'a',
        '--keep',
        '--',
        'psql',
        '-X',
        '-Atc',
        "select current_database(), count(*), (select tableowner from pg_tables where tablename = 'orders') = current_user from orders",
      ],
      p,
    );
    expect(branch.status, branch.stderr).toBe(0);
    // With branch roles the branch's objects belong to its own role (the source and the template keep their owners).
    expect(count(branch)).toBe(`exec_testhost_a|3|t`);
    // the branch is a copy: writes there leave the imported source (and the original) alone
    expect(runPgx(['agent', 'exec', '--id', 'a', '--', 'psql', '-X', '-qc', 'delete from orders'], p).status).toBe(0);
    expect(count(runPgx(['local', 'sql', '-d', SRC, '-c', 'select count(*) from orders'], p))).toBe('3');
    expect((await sql('select count(*)::int AS n from orders', [], SRC))[0].n).toBe(3);
    // the imported database is stamped as pgx's copy (with the nonce of the registry's record of it, which holds the
    // origin: the stamp, readable by every role, names neither the origin nor a password)
    const stamp = count(
      runPgx(
        [
          'local',
          'sql',
          '-c',
          `select shobj_description(oid, 'pg_database') from pg_database where datname = '${SRC}'`,
        ],
        p,
      ),
    );
    expect(stamp).toMatch(
      /^pgx:source:\{"project":"[^"]+","nonce":"[a-z0-9]{16}","imported_at":"[^"]+","mask":null\}$/,
    );

    // importing again into the same name is refused (exit 6); nothing is overwritten
    const again = runPgx(['source', 'import', '--from-env', 'DATABASE_URL', '--json'], p);
    expect(again.status, again.stdout).toBe(6);
    expect(jsonOf(again).error.message).toContain("already pgx's copy");
    expect(jsonOf(again).error.hint).toContain('`pgx source sync`');
  });

  it('from a custom-format dump and a plain SQL dump; a failing restore keeps nothing (exit 7)', (ctx) => {
    needs(
      ctx,
      ['pg_dump', 'pg_restore', 'psql'],
      'it makes dump files with pg_dump, which pg_restore and psql restore',
    );
    const p = freshDir();
    const custom = join(p.dir, 'shop.dump');
    const plain = join(p.dir, 'shop.sql');
    for (const [fmt, file] of [
      ['-Fc', custom],
      ['-Fp', plain],
    ] as const) {
      const d = spawnSync('pg_dump', [fmt, '-f', file, '-d', SRC], { env: adminEnv(), encoding: 'utf8' });
      expect(d.status, d.stderr).toBe(0);
    }
    expect(runPgx(['init', '--source', 'shop_dev'], p).status).toBe(0);
    const imp = runPgx(['source', 'import', '--from', 'shop.dump', '--json'], p); // relative to the current directory
    expect(imp.status, imp.stdout + imp.stderr).toBe(0);
    expect(jsonOf(imp)).toMatchObject({ database: 'shop_dev', format: 'custom', config_updated: null });
    const b = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'b',
        '--',
        'psql',
        '-X',
        '-Atc',
        "select count(*), (select tableowner from pg_tables where tablename = 'orders') = current_user from orders",
      ],
      p,
    );
    expect(b.status, b.stderr).toBe(0);
    expect(count(b)).toBe('3|t');

    const pl = runPgx(['source', 'import', '--from', plain, '--into', 'shop_plain', '--no-template', '--json'], p);
    expect(pl.status, pl.stdout + pl.stderr).toBe(0);
    expect(jsonOf(pl)).toMatchObject({ database: 'shop_plain', format: 'plain', template: null });
    expect(jsonOf(pl).warnings.join(' ')).toContain('"shop_dev"'); // [project] source names another database
    expect(count(runPgx(['local', 'sql', '-d', 'shop_plain', '-c', 'select count(*) from orders'], p))).toBe('3');

    const bad = join(p.dir, 'bad.sql');
    writeFileSync(bad, 'CREATE TABLE ok (id int);\nCREATE EXTENSION no_such_extension_here;\n');
    const f = runPgx(['source', 'import', '--from', bad, '--into', 'broken', '--json'], p);
    expect(f.status, f.stdout + f.stderr).toBe(7);
    expect(jsonOf(f).error).toMatchObject({ code: 'IMPORT_FAILED' });
    expect(jsonOf(f).error.message).toContain('no_such_extension_here');
    expect(count(runPgx(['local', 'sql', '-c', "select count(*) from pg_database where datname = 'broken'"], p))).toBe(
      '0',
    );
  });

  it('into a [server] url: owners kept where the roles exist', (ctx) => {
    needs(ctx, ['pg_dump', 'pg_restore'], 'it makes a directory-format dump with pg_dump, which pg_restore restores');
    const p = makeProject();
    const file = join(p.dir, 'shop.dump');
    expect(spawnSync('pg_dump', ['-Fd', '-f', file, '-d', SRC], { env: adminEnv(), encoding: 'utf8' }).status).toBe(0);
    const into = `imp_${p.name}`;
    const r = runPgx(['source', 'import', '--from', file, '--into', into, '--json'], p);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(jsonOf(r)).toMatchObject({ database: into, format: 'directory', roles_created: [], owners_missing: [] });
    const b = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'c',
        '--',
        'psql',
        '-X',
        '-Atc',
        "select count(*), (select tableowner from pg_tables where tablename = 'orders') = current_user from orders",
      ],
      p,
    );
    expect(count(b), b.stderr).toBe('3|t');
  });

  it('usage errors exit 2; outside a project exit 3', () => {
    const p = makeProject();
    const file = join(p.dir, 'shop.dump');
    writeFileSync(file, 'not a dump: never read, the usage is checked first\n');
    expect(runPgx(['source', 'import', '--json'], p).status).toBe(2);
    expect(runPgx(['source', 'import', '--from', join(p.dir, 'nope.sql')], p).status).toBe(2);
    const out = mkdtempSync(join(tmpdir(), 'pgx-noproj-'));
    expect(runPgx(['source', 'import', '--from', file], { cwd: out, env: p.env }).status).toBe(3);
    expect(existsSync(join(out, '.pgx.toml'))).toBe(false);
  });
});
