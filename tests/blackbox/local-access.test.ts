// A way in to the embedded local server without reading state.json: `pgx local psql|env|url`, and `agent up`'s
// passfile so that `eval "$(pgx agent up …)"; psql` connects. The password never reaches stdout unless asked for.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LAUNCHER, jsonOf, makeProject, runPgx } from '../helpers/pgx.js';
import { needs } from '../helpers/client-programs.js';
import { nodeClientPath } from '../helpers/node-client.js';

const started: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
afterAll(() => {
  for (const p of started) {
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    runPgx(['local', 'down'], p);
    if (s.data_dir?.startsWith('/var/lib/pgx/')) rmSync(dirname(dirname(s.data_dir)), { recursive: true, force: true });
  }
});

function localProject() {
  const p = makeProject();
  delete p.env.PGX_DATABASE_URL;
  started.push(p);
  return p;
}

const password = (p: { env: NodeJS.ProcessEnv }) =>
  JSON.parse(readFileSync(join(p.env.PGX_HOME!, 'local', 'state.json'), 'utf8')).password as string;
const bash = (script: string, p: { cwd: string; env: NodeJS.ProcessEnv }, env: NodeJS.ProcessEnv = {}) =>
  spawnSync('bash', ['-c', script], { cwd: p.cwd, env: { ...p.env, ...env, PGX: LAUNCHER }, encoding: 'utf8' });

describe('pgx local psql | env | url', () => {
  it('psql runs on the local server (started on demand) with its arguments and exit status passed through', (ctx) => {
    needs(ctx, ['psql'], '`pgx local psql` runs it');
    const p = localProject();
    const mk = runPgx(['local', 'psql', '-X', '-q', '-c', 'CREATE DATABASE shop_dev'], p);
    expect(mk.status, mk.stderr).toBe(0);
    expect(mk.stderr).toMatch(/initialising the local PostgreSQL/); // first start: progress, not silence
    const r = runPgx(
      ['local', 'psql', '-X', '-At', '-d', 'shop_dev', '-c', 'select current_database(), current_user'],
      p,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('shop_dev|pgx');
    expect(runPgx(['local', 'psql', '-X', '-c', 'select 1/0'], p).status).toBe(1);
    expect(runPgx(['local', 'psql', '--version'], p).stdout).toMatch(/^psql \(PostgreSQL\)/); // psql's flags, not pgx's
  });

  it('env prints libpq exports and a 0600 passfile, never the password; eval "$(pgx local env)"; psql connects', (ctx) => {
    needs(ctx, ['psql'], 'it connects with psql through the exports');
    const p = localProject();
    const r = runPgx(['local', 'env'], p);
    expect(r.status, r.stderr).toBe(0);
    const pw = password(p);
    expect(r.stdout + r.stderr).not.toContain(pw);
    expect(r.stdout).toMatch(/^unset .*PGPASSWORD/m);
    expect(r.stdout).toMatch(/^export PGPASSFILE=/m);
    const j = jsonOf(runPgx(['local', 'env', '--json', '-d', 'template1'], p));
    expect(j.env).toMatchObject({ PGHOST: '127.0.0.1', PGUSER: 'pgx', PGDATABASE: 'template1', PGSSLMODE: 'disable' });
    expect(statSync(j.passfile).mode & 0o777).toBe(0o600);
    expect(readFileSync(j.passfile, 'utf8')).toContain(pw);
    // A PGPASSWORD and PGDATABASE left in the user's shell must not win over the exports.
    const s = bash('eval "$(node "$PGX" local env)" && psql -X -Atc "select current_database()"', p, {
      PGPASSWORD: 'wrong',
      PGDATABASE: 'nope',
    });
    expect(s.status, s.stderr).toBe(0);
    expect(s.stdout.trim()).toBe('postgres');
  });

  it('url has no password unless --show-password', (ctx) => {
    needs(ctx, ['psql'], 'it connects with psql through the URL');
    const p = localProject();
    const plain = runPgx(['local', 'url'], p);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^postgresql:\/\/pgx@127\.0\.0\.1:\d+\/postgres\?sslmode=disable$/);
    const shown = jsonOf(runPgx(['local', 'url', '--show-password', '--json', '--database', 'postgres'], p));
    expect(shown.url).toContain(`:${encodeURIComponent(password(p))}@`);
    const q = spawnSync('psql', [shown.url, '-X', '-Atc', 'select 1'], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    });
    expect(q.stdout.trim(), q.stderr).toBe('1');

    // down --purge --yes: stopped, and its data (under /var/lib/pgx as root, else $PGX_HOME/local) is gone
    const s = jsonOf(runPgx(['local', 'status', '--json'], p));
    const purge = jsonOf(runPgx(['local', 'down', '--purge', '--yes', '--json'], p));
    expect(purge).toMatchObject({ stopped: true, purged: true });
    expect(purge.removed.map((r: { path: string }) => r.path)).toContain(join(p.env.PGX_HOME!, 'local'));
    expect(existsSync(s.data_dir)).toBe(false);
    expect(existsSync(join(p.env.PGX_HOME!, 'passfiles'))).toBe(false);
    expect(jsonOf(runPgx(['local', 'status', '--json'], p))).toMatchObject({ initialized: false, running: false });
  });
});

describe("pgx local sql: SQL through pgx's own driver (no psql needed)", () => {
  it('runs each -c in order on the database named, prints rows as psql -At does, --json the rows; stdin too', () => {
    const p = localProject();
    const mk = runPgx(['local', 'sql', '-c', 'CREATE DATABASE shop_dev'], p);
    expect(mk.status, mk.stderr).toBe(0);
    expect(mk.stdout).toBe(''); // no rows, nothing printed
    const r = runPgx(
      [
        'local',
        'sql',
        '-d',
        'shop_dev',
        '-c',
        "CREATE TABLE t (id int, note text); INSERT INTO t VALUES (1, 'a'), (2, NULL)",
        '-c',
        'SELECT id, note FROM t ORDER BY id',
        '-c',
        'SELECT current_database(), current_user',
      ],
      p,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('1|a\n2|\nshop_dev|pgx\n');
    const j = jsonOf(
      runPgx(['local', 'sql', '--json', '-d', 'shop_dev', '-c', 'SELECT id, note FROM t ORDER BY id'], p),
    );
    expect(j).toEqual({
      database: 'shop_dev',
      results: [
        {
          command: 'SELECT',
          row_count: 2,
          columns: ['id', 'note'],
          rows: [
            { id: '1', note: 'a' },
            { id: '2', note: null },
          ],
        },
      ],
    });
    const piped = runPgx(['local', 'sql', '-d', 'shop_dev', '--header', '-F', ','], {
      ...p,
      input: 'SELECT count(*) AS n FROM t',
    });
    expect(piped.stdout).toBe('n\n2\n');
    expect(password(p).length).toBeGreaterThan(0);
    expect(r.stdout + r.stderr + piped.stdout + piped.stderr).not.toContain(password(p));
  });

  it('a statement the server refuses: exit 10, its error, and the rows of what ran before it', () => {
    const p = localProject();
    const r = runPgx(['local', 'sql', '-c', 'SELECT 41 + 1', '-c', 'SELECT nope', '-c', 'SELECT 3'], p);
    expect(r.status).toBe(10);
    expect(r.stdout).toBe('42\n'); // the first ran; the third did not
    expect(r.stderr).toMatch(/ERROR: column "nope" does not exist \(SQLSTATE 42703, database "postgres"\)/);
  });

  it("inside a routed command it is refused: the local server is the admin's, not an agent's", () => {
    const p = localProject();
    const r = runPgx(
      [
        'agent',
        'exec',
        '--agent',
        'sneaky',
        '--session',
        's1',
        '--',
        'node',
        LAUNCHER,
        'local',
        'sql',
        '-c',
        'SELECT 1',
      ],
      p,
    );
    expect(r.status, r.stderr).toBe(6); // routed-guard.ts: `local sql` is not among what a routed command may run
    expect(r.stdout).not.toContain('1\n');
    expect(r.stderr).toContain('`pgx local sql`');
  });
});

describe('pgx local psql where there is no psql', () => {
  it('says what it needs and what works instead, without starting the server', () => {
    const p = localProject();
    const r = runPgx(['local', 'psql', '-c', 'select 1'], { ...p, env: { ...p.env, PATH: '/nonexistent' } });
    expect(r.status).toBe(125);
    expect(r.stderr).toContain('`pgx local psql` runs psql, which is not installed here');
    expect(r.stderr).toContain("`pgx local sql -c '<SQL>'`");
    expect(r.stderr).toContain('`pgx local url`');
    expect(r.stderr).toContain('eval "$(pgx local env)"');
    expect(existsSync(join(p.env.PGX_HOME!, 'local', 'state.json'))).toBe(false); // nothing started for nothing
  });
});

describe('agent up on the local server', () => {
  it('eval "$(pgx agent up --id bob)"; psql works: a 0600 PGPASSFILE, no password on stdout', (ctx) => {
    needs(ctx, ['psql'], 'it connects with psql through the exports');
    const p = localProject();
    // the first command starts the local server: progress on stderr, not seconds of silence
    const first = runPgx(['agent', 'exec', '--id', 'warm', '--', 'true'], p);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/initialising the local PostgreSQL[\s\S]*starting the local PostgreSQL/);
    expect(runPgx(['agent', 'exec', '--id', 'warm', '--', 'true'], p).stderr).toBe(''); // running: nothing to say
    const up = runPgx(['agent', 'up', '--id', 'bob'], p);
    expect(up.status, up.stderr).toBe(0);
    expect(up.stdout + up.stderr).not.toContain(password(p));
    expect(up.stdout).toMatch(/^export PGPASSFILE=/m);
    const s = bash('eval "$(node "$PGX" agent up --id bob)" && psql -X -Atc "select current_database()"', p, {
      PGPASSWORD: 'stale',
    });
    expect(s.status, s.stderr).toBe(0);
    expect(s.stdout.trim()).toBe(`exec_${p.host}_bob`);
    const j = jsonOf(runPgx(['agent', 'up', '--id', 'bob', '--json'], p));
    expect(j).toMatchObject({ branch: `exec_${p.host}_bob`, password_env: 'PGPASSFILE (not printed)' });
    expect(j.env.PGPASSFILE).toBe(j.passfile);
    expect(statSync(j.passfile).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(j)).not.toContain(password(p));
  });
});

describe('outside a project', () => {
  it('agent exec and agent up refuse with exit 3 and name `pgx init`; --anywhere keeps the old behaviour', () => {
    const p = makeProject();
    const dir = mkdtempSync(join(tmpdir(), 'pgx-noproj-'));
    for (const args of [
      ['agent', 'exec', '--id', 'x', '--', 'true'],
      ['agent', 'up', '--id', 'x', '--json'],
    ]) {
      const r = runPgx(args, { cwd: dir, env: p.env });
      expect(r.status, r.stdout + r.stderr).toBe(3);
      expect(r.stdout + r.stderr).toMatch(/not a pgx project[\s\S]*pgx init/);
    }
    const ok = runPgx(
      ['agent', 'exec', '--anywhere', '--id', 'x', '--', 'node', nodeClientPath(), 'select current_database()'],
      {
        cwd: dir,
        env: p.env,
      },
    );
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe(`exec_${p.host}_x`);
  });
});

describe('doctor fixes on the local server', () => {
  it("the missing-source fix names commands that reach pgx's local server, and running it fixes the check", () => {
    const p = localProject();
    writeFileSync(join(p.dir, '.pgx.toml'), `[project]\nname = "fixme"\nsource = "shop_dev"\n`);
    expect(runPgx(['local', 'up'], p).status).toBe(0);
    const before = jsonOf(runPgx(['agent', 'doctor', '--json'], p)).checks.find(
      (c: { name: string }) => c.name === 'template',
    );
    expect(before.status).toBe('fail');
    expect(before.fix).toContain('pgx source import --from');
    const create = /pgx local sql -c '[^']*'/.exec(before.fix)?.[0];
    expect(create).toBe(`pgx local sql -c 'CREATE DATABASE "shop_dev"'`); // needs no psql (decision 487)
    const r = bash(create!.replace(/^pgx/, 'node "$PGX"'), p);
    expect(r.status, r.stderr).toBe(0);
    const after = jsonOf(runPgx(['agent', 'doctor', '--json'], p)).checks.find(
      (c: { name: string }) => c.name === 'template',
    );
    expect(after.status, after.detail).not.toBe('fail');
  });
});
