import { describe, expect, it } from 'vitest';
import { mapConnectError } from '../../src/server/db.js';
import { parseUrl, SSL_MODES } from '../../src/server/conn-params.js';
import { libpqEnv } from '../../src/server/libpq-env.js';
import { PgxError } from '../../src/lib/errors.js';

const SECRET = 's3cr%40t'; // percent-encoded in the URL, "s3cr@t" decoded

function refusal(url: string): PgxError {
  try {
    parseUrl(url);
  } catch (e) {
    expect(e).toBeInstanceOf(PgxError);
    const err = e as PgxError;
    expect(err.code).toBe('CONFIG_INVALID');
    for (const text of [err.message, err.hint]) {
      expect(text).not.toContain('s3cr');
      expect(text).not.toContain('db.example.com');
    }
    return err;
  }
  throw new Error(`parseUrl accepted ${url}`);
}

describe('parseUrl', () => {
  it('reads user, password, host, port and database; no sslmode unless given', () => {
    expect(parseUrl(`postgresql://app:${SECRET}@db.example.com:6543/shop`)).toEqual({
      host: 'db.example.com',
      port: 6543,
      user: 'app',
      password: 's3cr@t',
      database: 'shop',
      from: '[server] url in .pgx.toml or PGX_DATABASE_URL',
    });
    // where it came from, for the hints of a later failure
    expect(parseUrl('postgresql://app@db.example.com/shop', 'PGX_DATABASE_URL').from).toBe('PGX_DATABASE_URL');
  });

  it('keeps sslmode (every libpq value), the port and host parameters and application_name', () => {
    for (const mode of SSL_MODES)
      expect(parseUrl(`postgres://app@db.example.com/shop?sslmode=${mode}`).sslmode).toBe(mode);
    expect(parseUrl('postgres://app@localhost/shop?host=/var/run/postgresql&port=5433')).toMatchObject({
      host: '/var/run/postgresql',
      port: 5433,
      database: 'shop',
    });
    expect(parseUrl('postgres://app@db.example.com:1111/shop?port=2222').port).toBe(2222);
    expect(parseUrl('postgres://app@db.example.com/shop?application_name=my%20tool').application_name).toBe('my tool');
    // Neon-style URLs carry channel_binding; connect_timeout is seconds
    expect(
      parseUrl('postgres://app@db.example.com/shop?sslmode=require&channel_binding=require&connect_timeout=10'),
    ).toMatchObject({ sslmode: 'require', channelBinding: true, connectTimeoutMs: 10_000 });
    expect(parseUrl('postgres://app@db.example.com/shop?channel_binding=disable').channelBinding).toBeUndefined();
    expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?connect_timeout=soon`).message).toContain(
      'connect_timeout',
    );
    expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?channel_binding=maybe`).message).toContain(
      'channel_binding',
    );
  });

  it('refuses any other query parameter, naming it but never the URL or a value', () => {
    for (const key of ['options', 'sslrootcert', 'target_session_attrs', 'keepalives']) {
      expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?sslmode=require&${key}=x`).message).toContain(
        `"${key}"`,
      );
    }
  });

  it('a malformed percent escape in the password: exit 3 saying how to percent-encode (not "URI malformed", exit 1)', () => {
    const e = refusal('postgresql://app:s3cr%zz@db.example.com/shop');
    expect(e.exitCode).toBe(3);
    expect(e.message).toMatch(/password has a malformed percent escape/);
    expect(e.hint).toMatch(/% → %25/);
    expect(refusal('postgresql://app@db.example.com/sh%op').message).toMatch(
      /database name has a malformed percent escape/,
    );
  });

  it('a password with an unencoded #, /, ? or @: refused with how to encode it, no part of it (or of the host) shown', () => {
    for (const pw of ['s3cr#Zq9', '1234#s3cr', 's3cr/Zq9', '98765/s3cr', 's3cr?Zq9', 's3cr@Zq9']) {
      const e = refusal(`postgresql://app:${pw}@db.example.com:5432/shop`);
      expect(e.exitCode).toBe(3);
      expect(e.message).toMatch(/must be percent-encoded/);
      expect(e.hint).toMatch(/@ → %40, # → %23, \/ → %2F, \? → %3F/);
      expect(`${e.message} ${e.hint}`).not.toMatch(/Zq9|1234|98765/);
    }
    // the same passwords, encoded, are read back exactly
    for (const pw of ['s3cr#et', 's3cr/et', 's3cr?et', 's3cr@et', '100%']) {
      expect(parseUrl(`postgresql://app:${encodeURIComponent(pw)}@db.example.com:5432/shop`)).toMatchObject({
        host: 'db.example.com',
        port: 5432,
        password: pw,
        database: 'shop',
      });
    }
    // an "@" in a query value is not mistaken for one
    expect(parseUrl('postgresql://app@db.example.com/shop?application_name=me@work').application_name).toBe('me@work');
  });

  it('refuses template0/template1 as the admin database', () => {
    for (const db of ['template0', 'template1'])
      expect(refusal(`postgresql://app:${SECRET}@db.example.com/${db}`).message).toContain(`"${db}"`);
  });

  it('refuses an invalid sslmode or port parameter', () => {
    expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?sslmode=s3cr`).hint).toContain('verify-full');
    refusal(`postgresql://app:${SECRET}@db.example.com/shop?port=s3cr`);
  });
});

describe('libpqEnv and sslmode', () => {
  const base = { host: 'h', port: 5432, user: 'u', database: 'd' };
  it("the URL's sslmode reaches the child as PGSSLMODE, replacing an inherited one", () => {
    expect(libpqEnv({ PGSSLMODE: 'disable' }, { ...base, sslmode: 'verify-full' }).PGSSLMODE).toBe('verify-full');
  });
  it('without one in the URL, an inherited PGSSLMODE is kept and none is invented', () => {
    expect(libpqEnv({ PGSSLMODE: 'require' }, base).PGSSLMODE).toBe('require');
    expect(libpqEnv({}, base).PGSSLMODE).toBeUndefined();
  });
});

describe('mapConnectError: what happened, and only a dead address says "start the server"', () => {
  const p = { host: '10.0.0.9', port: 5432, user: 'app', password: 's3cr', database: 'postgres' };
  const err = (code: string | undefined, message: string) => Object.assign(new Error(message), code ? { code } : {});
  it('classifies', () => {
    expect(mapConnectError(err('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.9:5432'), p).hint).toMatch(
      /Start the server/,
    );
    const timeout = mapConnectError(err(undefined, 'timeout expired'), p, { timedOut: true, timeoutMs: 23_700 });
    expect(timeout.message).toMatch(/did not complete the connection within 23\.7 s \(timed out\).*overloaded/);
    expect(timeout.hint).not.toMatch(/Start the server/);
    expect(mapConnectError(err('53300', 'sorry, too many clients already'), p).message).toMatch(
      /no free connection slots/,
    );
    expect(mapConnectError(err('57P03', 'the database system is starting up'), p).message).toMatch(/starting up/);
    const ssl = mapConnectError(err(undefined, 'The server does not support SSL connections'), {
      ...p,
      sslmode: 'require',
    });
    expect(ssl.message).toMatch(/is running but does not support SSL connections, and sslmode=require/);
    expect(ssl.hint).not.toMatch(/Start the server/);
    expect(mapConnectError(err('ENOTFOUND', 'getaddrinfo ENOTFOUND x'), p).hint).toMatch(/Fix the host/);
    for (const e of [timeout, ssl]) expect(`${e.message} ${e.hint}`).not.toContain('s3cr');
  });
});
