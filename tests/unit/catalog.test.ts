import { describe, expect, it } from 'vitest';
import {
  formatStamp,
  isOwnSourceCopy,
  parseStamp,
  quoteIdent,
  quoteLiteral,
  STAMP_PREFIX,
  type DatabaseInfo,
  type Stamp,
} from '../../src/server/catalog.js';
import { LOCK, LOCK_CLASS, lockKey } from '../../src/registry/locks.js';

describe('stamps: one prefix table', () => {
  const key = 'a'.repeat(64);
  const stamps: Stamp[] = [
    { kind: 'branch', identityKey: key },
    { kind: 'branch', identityKey: key, nonce: 'abcdefgh01234567' },
    {
      kind: 'template',
      project: 'p',
      source: 'src',
      fingerprint: 'f',
      refreshed_at: '2026-01-01T00:00:00.000Z',
      method: 'template-copy',
    },
    { kind: 'building', project: 'p', started_at: '2026-01-01T00:00:00.000Z' },
    {
      kind: 'pool',
      project: 'p',
      template: 'pgx_tpl_p_12345678',
      generation: '16384',
      member: 'pgx_pool_p_12345678_abc123',
    },
    { kind: 'importing', project: 'p', from: '/tmp/shop.dump', started_at: '2026-01-01T00:00:00.000Z' },
    {
      kind: 'importing',
      project: 'p',
      from: '/tmp/shop.dump',
      started_at: '2026-01-01T00:00:00.000Z',
      nonce: 'abcdefgh01234567',
    },
    { kind: 'source', project: 'p', nonce: 'abcdefgh01234567', imported_at: '2026-01-01T00:00:00.000Z' },
    {
      kind: 'frozen',
      project: 'p',
      parent: 'agent_h_1234abcd',
      nonce: 'abcdefgh01234567',
      taken_at: '2026-01-01T00:00:00.000Z',
    },
    { kind: 'registry' },
  ];
  it('formats every kind under its prefix and parses it back', () => {
    for (const s of stamps) {
      const text = formatStamp(s);
      expect(text.startsWith(STAMP_PREFIX[s.kind])).toBe(true);
      expect(parseStamp(text)).toEqual(s);
    }
    expect(formatStamp(stamps[0]!)).toBe(`pgx:branch:${key}`);
  });
  it('reads anything pgx did not write as no stamp', () => {
    for (const c of [
      null,
      '',
      'my app db',
      'pgx:branch:',
      'pgx:branch:XYZ',
      'pgx:template:{not json',
      'pgx:template:{"source":null}',
      'pgx:pool:[]',
      'pgx:registryx',
    ]) {
      expect(parseStamp(c)).toBeUndefined();
    }
  });
});

describe('an imported source copy', () => {
  const info = (comment: string | null): DatabaseInfo => ({
    exists: true,
    comment,
    stamp: parseStamp(comment),
    allowConn: true,
    isTemplate: false,
  });
  const stamp = (nonce: string) => formatStamp({ kind: 'source', project: 'p', nonce, imported_at: 'x' });
  it("is pgx's only with the recorded nonce in its stamp", () => {
    expect(isOwnSourceCopy(info(stamp('abcdefgh01234567')), { nonce: 'abcdefgh01234567' })).toBe(true);
    expect(isOwnSourceCopy(info(stamp('zzzzzzzz01234567')), { nonce: 'abcdefgh01234567' })).toBe(false);
    expect(isOwnSourceCopy(info(null), { nonce: 'abcdefgh01234567' })).toBe(false);
    expect(isOwnSourceCopy({ ...info(stamp('abcdefgh01234567')), exists: false }, { nonce: 'abcdefgh01234567' })).toBe(
      false,
    );
    // the source stamp's prefix is not the importing stamp's
    expect(parseStamp('pgx:source-importing:{"project":"p","from":"f","started_at":"x"}')?.kind).toBe('importing');
  });
});

describe('quoting', () => {
  it('always quotes identifiers, doubling quotes', () => {
    expect(quoteIdent('Ab')).toBe('"Ab"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
  });
  it('quotes literals, with E-syntax only for backslashes', () => {
    expect(quoteLiteral("it's")).toBe("'it''s'");
    expect(quoteLiteral('a\\b')).toBe("E'a\\\\b'");
  });
});

describe('advisory lock key space', () => {
  it('keeps classes apart and keys within a signed bigint', () => {
    const hex = 'f'.repeat(64);
    const keys = [LOCK.schema, LOCK.identity(hex), LOCK.template('pgx_tpl_x')];
    expect(new Set(keys).size).toBe(3);
    for (const k of keys) expect(BigInt(k) < 2n ** 63n && BigInt(k) >= 0n).toBe(true);
    expect(BigInt(LOCK.identity(hex)) >> 56n).toBe(BigInt(LOCK_CLASS.identity));
    expect(lockKey(LOCK_CLASS.identity, hex)).not.toBe(lockKey(LOCK_CLASS.template, hex));
  });
});
