// The server URL's sslmode is honoured by pgx's own connections and passed to the commands it runs: against the
// (plain-text) test server and against a throwaway TLS-enabled cluster with a self-signed certificate.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/server/db.js';
import type { ConnParams, SslMode } from '../../src/server/conn-params.js';
import { findBinaries } from '../../src/server/binaries.js';
import { clusterUser, freePort, initCluster, startCluster, stopCluster } from '../../src/server/local.js';
import { jsonOf, makeProject, pgInfo, runPgx } from '../helpers/pgx.js';

const opensslAvailable = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

async function sslOf(p: ConnParams): Promise<boolean> {
  const db = await connect(p);
  try {
    const [row] = await db.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    return row!.ssl;
  } finally {
    await db.close();
  }
}

const plainParams = (): ConnParams => {
  const i = pgInfo();
  return { host: i.host, port: i.port, user: i.user, password: i.password, database: 'postgres' };
};
const withMode = (url: string, mode: string) => `${url}${url.includes('?') ? '&' : '?'}sslmode=${mode}`;

describe('sslmode against a server without TLS', () => {
  it('require and verify-full fail (TLS is really asked for); prefer, allow and disable connect in plain text', async () => {
    const p = plainParams();
    if (await sslOf({ ...p, sslmode: 'prefer' })) return; // this test server has TLS on: the TLS block below covers it
    for (const mode of ['require', 'verify-ca', 'verify-full'] as SslMode[]) {
      await expect(connect({ ...p, sslmode: mode })).rejects.toMatchObject({
        code: 'SERVER_UNREACHABLE',
        message: expect.stringMatching(/does not support SSL/),
      });
    }
    for (const mode of ['prefer', 'allow', 'disable'] as SslMode[])
      expect(await sslOf({ ...p, sslmode: mode })).toBe(false);
  });

  it('the CLI refuses to go on in plain text when the URL says sslmode=require', () => {
    const proj = makeProject();
    proj.env.PGX_DATABASE_URL = withMode(pgInfo().url, 'require');
    const r = runPgx(['agent', 'up', '--id', 'tls', '--json'], proj);
    expect(r.status, r.stdout + r.stderr).toBe(4);
    const err = jsonOf(r).error;
    expect(err.message).toMatch(/is running but does not support SSL/);
    // the server is up: the hint must not send the user to start it
    expect(err.hint).not.toMatch(/Start the server/);
    expect(err.hint).toMatch(/sslmode=prefer/);
  });

  it('a URL naming template1 or template0 as the admin database is refused (exit 3) before any connection', () => {
    const proj = makeProject();
    for (const db of ['template1', 'template0']) {
      proj.env.PGX_DATABASE_URL = pgInfo().url.replace(/\/postgres$/, `/${db}`);
      const r = runPgx(['agent', 'up', '--id', 'tpl', '--json'], proj);
      expect(r.status, r.stdout + r.stderr).toBe(3);
      expect(jsonOf(r).error.message).toMatch(new RegExp(`names the database "${db}".*template database`));
      expect(jsonOf(r).error.hint).toMatch(/\/postgres/);
    }
  });
});

describe.skipIf(!opensslAvailable)('sslmode against a TLS server (self-signed certificate)', () => {
  let base = '';
  let spec: Parameters<typeof initCluster>[0];
  let params: ConnParams;
  let url = '';

  beforeAll(async () => {
    const bins = findBinaries();
    base = mkdtempSync(join(tmpdir(), 'pgx-tls-pg-'));
    chmodSync(base, 0o755);
    const runAs = clusterUser();
    const password = randomBytes(12).toString('base64url');
    const port = await freePort();
    const crt = join(base, 'server.crt');
    const key = join(base, 'server.key');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        crt,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    chmodSync(key, 0o600);
    if (runAs) for (const f of [crt, key]) chownSync(f, runAs.uid, runAs.gid);
    spec = {
      bindir: bins.bindir,
      dataDir: join(base, 'data'),
      logFile: join(base, 'postgres.log'),
      port,
      user: 'pgx',
      password,
      runAs,
      extraConf: ['fsync = off', 'ssl = on', `ssl_cert_file = '${crt}'`, `ssl_key_file = '${key}'`],
    };
    await initCluster(spec);
    startCluster(spec);
    params = { host: '127.0.0.1', port, user: 'pgx', password, database: 'postgres' };
    url = `postgresql://pgx:${password}@127.0.0.1:${port}/postgres`;
  });

  afterAll(() => {
    try {
      if (spec) stopCluster(spec, 'immediate');
    } finally {
      if (base && existsSync(base)) rmSync(base, { recursive: true, force: true });
    }
  });

  it("pgx's own connections: require, prefer encrypt; disable, allow don't; verify-full rejects the self-signed certificate", async () => {
    expect(await sslOf({ ...params, sslmode: 'require' })).toBe(true);
    expect(await sslOf({ ...params, sslmode: 'prefer' })).toBe(true);
    expect(await sslOf({ ...params, sslmode: 'disable' })).toBe(false);
    expect(await sslOf({ ...params, sslmode: 'allow' })).toBe(false);
    await expect(connect({ ...params, sslmode: 'verify-full' })).rejects.toMatchObject({ code: 'SERVER_UNREACHABLE' });
    await expect(connect({ ...params, sslmode: 'verify-ca' })).rejects.toMatchObject({ code: 'SERVER_UNREACHABLE' });
  });

  it("the command pgx runs gets the URL's sslmode (PGSSLMODE), replacing the user's", () => {
    const proj = makeProject();
    const inBranch = (mode: string) => {
      proj.env.PGX_DATABASE_URL = withMode(url, mode);
      proj.env.PGSSLMODE = mode === 'disable' ? 'require' : 'disable'; // a decoy from the user's shell
      const r = runPgx(
        [
          'agent',
          'exec',
          '--id',
          'tls',
          '--',
          'sh',
          '-c',
          'echo "$PGSSLMODE"; psql -X -Atc "select ssl from pg_stat_ssl where pid = pg_backend_pid()"',
        ],
        proj,
      );
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n');
    };
    expect(inBranch('require')).toEqual(['require', 't']);
    expect(inBranch('disable')).toEqual(['disable', 'f']); // psql's own default (prefer) would have used TLS
  });
});
