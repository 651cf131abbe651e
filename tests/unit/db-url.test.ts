import { describe, expect, it } from 'vitest';
import { parseUrl, SSL_MODES } from '../../src/server/db.js';
import { libpqEnv } from '../../src/server/libpq-env.js';
import { PgxError } from '../../src/errors.js';

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
    expect(parseUrl(`postgresql://app:${SECRET}@db.example.com:6543/shop`)).toEqual({ host: 'db.example.com', port: 6543, user: 'app', password: 's3cr@t', database: 'shop' });
  });

  it('keeps sslmode (every libpq value), the port and host parameters and application_name', () => {
    for (const mode of SSL_MODES) expect(parseUrl(`postgres://app@db.example.com/shop?sslmode=${mode}`).sslmode).toBe(mode);
    expect(parseUrl('postgres://app@localhost/shop?host=/var/run/postgresql&port=5433')).toMatchObject({ host: '/var/run/postgresql', port: 5433, database: 'shop' });
    expect(parseUrl('postgres://app@db.example.com:1111/shop?port=2222').port).toBe(2222);
    expect(parseUrl('postgres://app@db.example.com/shop?application_name=my%20tool').application_name).toBe('my tool');
    // Neon-style URLs carry channel_binding; connect_timeout is seconds
    expect(parseUrl('postgres://app@db.example.com/shop?sslmode=require&channel_binding=require&connect_timeout=10')).toMatchObject({ sslmode: 'require', channelBinding: true, connectTimeoutMs: 10_000 });
    expect(parseUrl('postgres://app@db.example.com/shop?channel_binding=disable').channelBinding).toBeUndefined();
    expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?connect_timeout=soon`).message).toContain('connect_timeout');
    expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?channel_binding=maybe`).message).toContain('channel_binding');
  });

  it('refuses any other query parameter, naming it but never the URL or a value', () => {
    for (const key of ['options', 'sslrootcert', 'target_session_attrs', 'keepalives']) {
      expect(refusal(`postgresql://app:${SECRET}@db.example.com/shop?sslmode=require&${key}=x`).message).toContain(`"${key}"`);
    }
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
