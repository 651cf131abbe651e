// Every command that takes a URL, run as a user would (the built CLI, text and --json), with connection strings pgx
// does not read and passwords in every position: a clear error (unsupported scheme, keyword/value, no scheme), the
// documented exit code, and never the password. Then the real server: a wrong password on import is exit 4 with a
// hint about the password, and `init --url` tries the URL (a dead port is a warning; the file is still written).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, pgInfo, runPgx } from '../helpers/pgx.js';

const dirs: string[] = [];
/** A project (a package.json: still one once a test removes its .pgx.toml to run `init`). */
function project(toml?: string) {
  const p = makeProject({ toml });
  dirs.push(p.dir);
  writeFileSync(join(p.dir, 'package.json'), '{}\n');
  return p;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SECRET = 'Qz7s3cretPW9';
/** [argument, what the error must say] */
const FORMS: [string, RegExp][] = [
  [`postgress://me:${SECRET}@127.0.0.1:5432/shop`, /unsupported scheme 'postgress' \(a typo for postgresql:\/\/\?\)/],
  [`mysql://u:${SECRET}@db.example.com/shop`, /unsupported scheme 'mysql'/],
  [`postgresql:/me:${SECRET}@127.0.0.1/shop`, /unsupported scheme 'postgresql'/],
  [
    `jdbc:postgresql://db/shop?user=me&password=${SECRET}`,
    /unsupported scheme 'jdbc:postgresql' \(drop the jdbc: prefix/,
  ],
  [`me:${SECRET}@127.0.0.1:5432/shop`, /user name and password before @host, without a scheme/],
  [`host=127.0.0.1 user=me password=${SECRET} dbname=shop`, /keyword\/value connection string/],
  [`host=/tmp user=me password='a b ${SECRET}'`, /keyword\/value connection string/],
  [`postgresql://me:pa@${SECRET}@[::1]:5432/shop`, /"@" more than once/],
  [`postgresql://me:${SECRET}#x@127.0.0.1/shop`, /contains "#"/],
  [`postgresql://me@127.0.0.1/shop?password=&${SECRET}&sslmode=bogus`, /./],
  [`postgresql://me:1?${SECRET}@127.0.0.1/shop`, /"@" after the host/],
];

function noSecret(r: { stdout: string; stderr: string }, what: string) {
  expect(r.stdout + r.stderr, what).not.toContain(SECRET);
}

describe('URL intake: a clear error, never the password', () => {
  it('source import --from', () => {
    const p = project();
    for (const [arg, says] of FORMS) {
      const r = runPgx(['source', 'import', '--from', arg], p);
      noSecret(r, arg);
      expect(r.status, `${arg}: ${r.stderr}`).toBe(2);
      expect(r.stderr, arg).toMatch(says);
      expect(r.stderr, arg).not.toMatch(/no such file or directory/);
      const j = runPgx(['source', 'import', '--from', arg, '--json'], p);
      noSecret(j, arg);
      expect(jsonOf(j).error.code).toBe('USAGE');
    }
  });

  it('source import --from-env (the variable in .env and in the environment)', () => {
    const p = project();
    for (const [arg] of FORMS) {
      writeFileSync(join(p.dir, '.env'), `DATABASE_URL="${arg.replace(/"/g, '\\"')}"\n`);
      const r = runPgx(['source', 'import', '--from-env', 'DATABASE_URL'], p);
      noSecret(r, arg);
      expect(r.status, arg).not.toBe(0);
      const e = runPgx(['source', 'import', '--from-env', 'SOME_URL'], { ...p, env: { ...p.env, SOME_URL: arg } });
      noSecret(e, arg);
      expect(e.status, arg).not.toBe(0);
    }
  });

  it('init --url', () => {
    for (const [arg, says] of FORMS) {
      const p = project();
      rmSync(join(p.dir, '.pgx.toml'));
      const r = runPgx(['init', '--url', arg], p);
      noSecret(r, arg);
      expect(r.status, `${arg}: ${r.stderr}`).toBe(2);
      expect(r.stderr, arg).toMatch(says);
      expect(existsSync(join(p.dir, '.pgx.toml')), arg).toBe(false); // nothing written
      noSecret(runPgx(['init', '--url', arg, '--json'], p), arg);
      noSecret(runPgx(['init', `--urll=${arg}`], p), arg); // commander's own "unknown option" quotes it: masked
    }
  });

  it('PGX_DATABASE_URL and [server] url: every command that connects, and the doctor', () => {
    for (const [arg] of FORMS) {
      const viaEnv = project();
      viaEnv.env.PGX_DATABASE_URL = arg;
      for (const args of [
        ['agent', 'ls'],
        ['agent', 'exec', '--id', 'x', '--', 'true'],
        ['agent', 'gc', '--json'],
        ['agent', 'doctor', '--json'],
        ['template', 'refresh'],
      ]) {
        const r = runPgx(args, viaEnv);
        noSecret(r, `${args.join(' ')} with PGX_DATABASE_URL=${arg}`);
        expect(r.status, `${args.join(' ')}: ${arg}`).not.toBe(0);
      }
      const inFile = project(`[server]\nurl = ${JSON.stringify(arg)}\n`);
      delete inFile.env.PGX_DATABASE_URL;
      for (const args of [
        ['agent', 'ls'],
        ['agent', 'doctor'],
        ['agent', 'doctor', '--json'],
      ]) {
        const r = runPgx(args, inFile);
        noSecret(r, `${args.join(' ')} with [server] url = ${arg}`);
        expect(r.status).toBe(args[1] === 'doctor' ? 8 : 3);
      }
    }
    const p = project();
    p.env.PGX_DATABASE_URL = `mysql://u:${SECRET}@127.0.0.1/x`;
    const r = runPgx(['agent', 'ls'], p);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/The server URL \(PGX_DATABASE_URL\): unsupported scheme 'mysql'/);
  });

  it('a "#" in the password: every hint names the flag, variable or file and key it came from, and suggests %23', () => {
    const arg = `postgresql://me:${SECRET}#x@127.0.0.1/shop`;
    const suggests = (text: string, where: string) =>
      expect(text).toContain(`Write each "#" of the user name or password as %23 in ${where}.`);
    const hintOf = (r: { stdout: string; stderr: string }) => /^hint: (.*)$/m.exec(r.stderr)?.[1] ?? '';

    const fresh = project();
    rmSync(join(fresh.dir, '.pgx.toml'));
    const init = runPgx(['init', '--url', arg], fresh);
    expect(init.status).toBe(2);
    suggests(hintOf(init), '--url');
    expect(hintOf(init)).not.toMatch(/flag named above|\.pgx\.toml/);
    // the other flags of init: the hint names the flag, and the key it writes
    const source = runPgx(['init', '--source', 'postgres'], fresh);
    expect(source.status).toBe(2);
    expect(hintOf(source)).toBe('Fix --source (it writes [project] source); nothing was written.');

    const viaEnv = project();
    viaEnv.env.PGX_DATABASE_URL = arg;
    const ls = runPgx(['agent', 'ls'], viaEnv);
    expect(ls.status).toBe(3);
    suggests(hintOf(ls), 'PGX_DATABASE_URL');
    expect(hintOf(ls)).toMatch(/Then fix PGX_DATABASE_URL\.$/);

    const inFile = project(`[server]\nurl = ${JSON.stringify(arg)}\n`);
    delete inFile.env.PGX_DATABASE_URL;
    const where = `[server] url in ${join(inFile.dir, '.pgx.toml')}`;
    suggests(hintOf(runPgx(['agent', 'ls'], inFile)), where);
    const server = jsonOf(runPgx(['agent', 'doctor', '--json'], inFile)).checks.find(
      (c: { name: string }) => c.name === 'server',
    );
    suggests(server.fix, where);

    const p = project();
    const from = runPgx(['source', 'import', '--from', arg], p);
    suggests(hintOf(from), '--from');
    writeFileSync(join(p.dir, '.env'), `DATABASE_URL=${arg}\n`);
    const fromEnv = runPgx(['source', 'import', '--from-env', 'DATABASE_URL'], p);
    suggests(hintOf(fromEnv), `$DATABASE_URL (from ${join(p.dir, '.env')})`);
    for (const r of [init, ls, from, fromEnv]) noSecret(r, arg);
  });
});

describe('on the real server', () => {
  const url = (password: string, db = 'postgres') =>
    `postgresql://${pgInfo().user}:${encodeURIComponent(password)}@${pgInfo().host}:${pgInfo().port}/${db}`;

  it('a wrong password on import: exit 4 (login refused), a hint about the password, never the password', () => {
    const p = project();
    p.env.WRONG_URL = url(SECRET, 'some_source_db');
    const into = ['--into', `never_${Math.random().toString(36).slice(2, 8)}`];
    const r = runPgx(['source', 'import', '--from-env', 'WRONG_URL', ...into], p);
    noSecret(r, 'wrong password');
    expect(r.status, r.stderr).toBe(4);
    // pgx's own connection meets the refusal first now (the copy method's probe: decision 480), before any pg_dump
    expect(r.stderr).toMatch(/refused the login: PostgreSQL at \S+ refused the login for role/);
    expect(r.stderr).toMatch(
      /hint: Check the user name and password of the URL of \$WRONG_URL \(from the environment\)/,
    );
    expect(r.stderr).not.toMatch(/pg_dump --version/);
    const j = runPgx(['source', 'import', '--from-env', 'WRONG_URL', ...into, '--json'], p);
    expect(j.status).toBe(4);
    expect(jsonOf(j).error).toMatchObject({ code: 'SERVER_AUTH' });
  });

  it('a refused login: the hint names where the URL came from (PGX_DATABASE_URL, or [server] url in the file)', () => {
    const viaEnv = project();
    viaEnv.env.PGX_DATABASE_URL = url(SECRET);
    const ls = runPgx(['agent', 'ls'], viaEnv);
    noSecret(ls, 'wrong password via PGX_DATABASE_URL');
    expect(ls.status).toBe(4);
    expect(ls.stderr).toContain('hint: Check the user and password in PGX_DATABASE_URL.');
    // A wrong password, not a missing database: once pgx_registry exists (an earlier test made it), `agent ls` connects
    // to it alone and never to the URL's database, so a missing one is found only on a server pgx has not used yet.
    const inFile = project(`[server]\nurl = "${url(SECRET)}"\n`);
    delete inFile.env.PGX_DATABASE_URL;
    const r = runPgx(['agent', 'ls'], inFile);
    noSecret(r, 'wrong password via [server] url');
    expect(r.status).toBe(4);
    expect(r.stderr).toContain(
      `hint: Check the user and password in [server] url in ${join(inFile.dir, '.pgx.toml')}.`,
    );
  });

  it('init --url tries the URL: a dead port or a wrong password is a warning (the file is written), --no-check skips it', () => {
    const p = project();
    rmSync(join(p.dir, '.pgx.toml'));
    const dead = runPgx(['init', '--url', `postgresql://me:${SECRET}@127.0.0.1:1/postgres`, '--json'], p);
    noSecret(dead, 'dead port');
    expect(dead.status, dead.stderr).toBe(0);
    expect(jsonOf(dead).server_check).toMatchObject({ ok: false });
    expect(dead.stderr).toMatch(/warning: Cannot reach PostgreSQL at 127\.0\.0\.1:1.* was written anyway\./);
    expect(readFileSync(join(p.dir, '.pgx.toml'), 'utf8')).toContain('127.0.0.1:1');

    const text = runPgx(['init', '--force', '--url', 'postgresql://me@127.0.0.1:1/postgres'], p);
    expect(text.stdout).toMatch(
      /server {2}postgresql:\/\/me@127\.0\.0\.1:1\/postgres \(NOT reached: see the warning above\)/,
    );

    const wrong = runPgx(['init', '--force', '--url', url(SECRET), '--json'], p);
    noSecret(wrong, 'wrong password');
    expect(wrong.status).toBe(0);
    expect(jsonOf(wrong).server_check.error).toMatch(/refused the login/);

    const good = runPgx(['init', '--force', '--url', url(pgInfo().password), '--json'], p);
    expect(good.stdout + good.stderr).not.toContain(pgInfo().password);
    expect(jsonOf(good).server_check).toEqual({ ok: true });
    expect(good.stderr).not.toMatch(/Cannot reach|refused/);

    const skipped = runPgx(
      ['init', '--force', '--no-check', '--url', 'postgresql://me@127.0.0.1:1/postgres', '--json'],
      p,
    );
    expect(jsonOf(skipped).server_check).toBeNull();
    expect(skipped.stderr).toBe('');
  });
});
