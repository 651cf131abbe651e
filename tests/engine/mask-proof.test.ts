// The check after masking reads the copy with the scan's value detectors written a second time, in SQL
// (src/server/mask-proof-catalog.ts). Both versions must give the same answer on every value, or the check would miss
// what the scan flags (or refuse what it never would): compared here on a corpus of hand-picked values and thousands
// of generated ones, against the real server.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedKind, valueKind } from '../../src/mask/detect.js';
import { connect, type Db } from '../../src/server/db.js';
import { installDetectors, kindsOf } from '../../src/server/mask-proof-catalog.js';
import { pgInfo, sql } from '../helpers/pgx.js';

const DB = `mproof_${randomBytes(4).toString('hex')}`;
let db: Db;

beforeAll(async () => {
  await sql(`CREATE DATABASE ${DB}`);
  const p = pgInfo();
  db = await connect({ host: p.host, port: p.port, user: p.user, password: p.password, database: DB });
  await installDetectors(db);
});
afterAll(async () => {
  await db?.close();
  await sql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
});

/** detect.ts's words → the SQL's codes. */
const CODE: Record<string, string> = {
  'email addresses outside the reserved example domains': 'email',
  JWTs: 'jwt',
  'API keys (a well-known prefix)': 'key',
  'IP addresses': 'ip',
  'card numbers (they pass the Luhn check)': 'card',
  IBANs: 'iban',
  'phone numbers': 'phone',
};

async function expectSameKinds(values: string[]) {
  const sqlKinds = await kindsOf(db, values);
  const differ = values
    .map((v, i) => ({ v, js: CODE[valueKind(v) ?? ''] ?? null, sql: sqlKinds[i] }))
    .filter((x) => x.js !== x.sql);
  expect(JSON.stringify(differ)).toBe('[]');
}

const CORPUS = [
  'alice.smith@gmail.com',
  ' bob@corp.io ',
  'u1234@example.com',
  'x@mail.example.org',
  'a@foo.test',
  'b@svc.invalid',
  'not an @email',
  'jane@localhost',
  '+44 20 7946 0958',
  '(555) 123-4567',
  '+1 555 123 4567',
  '555-1234',
  '2024-01-15 10:00',
  '4111 1111 1111 1111',
  '4111 1111 1111 1112',
  '4111111111111111',
  '1111111111111111',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'sk_live_abcdefghijklmnop1234',
  'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'AKIAIOSFODNN7EXAMPLE',
  'xoxb-123456789012-abcdefghij',
  'sk-ant-abcdefghijklmnopqrstuvwxyz',
  'AIzaSyA-abcdefghijklmnopqrstuvwxyz12345',
  '81.2.69.160',
  '198.51.100.7',
  '127.0.0.1',
  '300.1.1.1',
  '10.0.0.1/8',
  '2a00:1450:4001:82b::200e',
  '2001:db8::1',
  '::1',
  '12:30:45',
  'GB82WEST12345698765432',
  'GB82 WEST 1234 5698 7654 32',
  '2024-01-15',
  'tea',
  '1.2.3',
  '12345678',
  '3.14159265',
  '+1 555 012 3456 x123456789',
  '************1111',
  'u0123456789abcdef@example.com',
  'alvena.dornwick.3f9a2c',
  'Alvena Dornwick',
  'd41d8cd98f00b204e9800998ecf8427e',
  '',
  '\u00a0carol@corp.io\u000b',
  'dave@corp.io\ufeff',
];

describe('the detectors in SQL answer as the scan does', () => {
  it('on hand-picked values', async () => {
    await expectSameKinds(CORPUS);
  });

  it('on generated values: emails, phones, numbers, addresses and noise', async () => {
    const values = fc.sample(
      fc.oneof(
        fc.emailAddress(),
        fc.ipV4(),
        fc.ipV6(),
        fc.stringMatching(/^\+?\d{1,3}[ -]?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{3,5}$/),
        fc.stringMatching(/^\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,7}$/),
        fc.stringMatching(/^[A-Z]{2}\d{2}[A-Z0-9 ]{11,30}$/),
        fc.string({ minLength: 0, maxLength: 40 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
      ),
      { numRuns: 4000, seed: 41 },
    );
    await expectSameKinds(values.map((v) => v.replace(/\0/g, '')));
  });

  it('on json documents: an email, JWT or key anywhere, or a string that is a personal value', async () => {
    const docs = [
      { contact: { mail: 'ann@corp.io' } },
      { contact: { mail: 'ann@example.com' }, phone: '+44 20 7946 0958' },
      { tags: ['x', '81.2.69.160'] },
      { note: 'write to bob@corp.io today' },
      { 'key@corp.io': 1 },
      { n: 4111111111111111, ok: 'tea' },
      { token: 'sk_live_abcdefghijklmnop1234' },
      { fine: ['198.51.100.7', 'u12@example.com', '+1 555 123 4567'] },
    ];
    const js = docs.map((d) => {
      const strings: string[] = [];
      const walk = (v: unknown) =>
        v && typeof v === 'object' ? Object.values(v).forEach(walk) : typeof v === 'string' && strings.push(v);
      walk(d);
      return embeddedKind(JSON.stringify(d)) ?? strings.map((x) => valueKind(x)).find(Boolean) ?? null;
    });
    const rows = await db.query<{ k: string | null }>(
      `SELECT pg_temp.pgx_json_kind(d) AS k FROM unnest($1::jsonb[]) WITH ORDINALITY u(d, i) ORDER BY i`,
      [docs.map((d) => JSON.stringify(d))],
    );
    expect(rows.map((r) => r.k)).toEqual(js.map((k) => (k ? CODE[k] : null)));
    expect(rows.map((r) => r.k)).toEqual(['email', 'phone', 'ip', 'email', 'email', null, 'key', null]);
  });
});
