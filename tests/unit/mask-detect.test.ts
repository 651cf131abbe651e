// The pure parts of masking: what looks personal by name and by value (src/mask/detect.ts), and the [mask] rules'
// parsing (src/mask/rules.ts). The database side is tests/engine/masking.test.ts.
import { describe, expect, it } from 'vitest';
import { jsonPaths, luhn, nameSign, valueKind } from '../../src/mask/detect.js';
import { keyOf, parseKey, parseStrategy, rulesDigest, type MaskRule } from '../../src/mask/rules.js';

describe('what looks personal', () => {
  it('by column name', () => {
    const s = (t: string, c: string) => nameSign(t, c)?.suggest;
    expect([
      s('users', 'email'),
      s('users', 'billingEmailAddress'),
      s('users', 'ip_address'),
      s('users', 'mobile_number'),
      s('users', 'first_name'),
      s('users', 'surname'),
      s('users', 'date_of_birth'),
      s('users', 'ssn'),
      s('pay', 'card_number'),
      s('pay', 'iban'),
      s('users', 'password_digest'),
      s('keys', 'api_key'),
      s('users', 'street_address'),
      s('users', 'postcode'),
    ]).toEqual([
      'email',
      'email',
      'ip',
      'phone',
      'first_name',
      'last_name',
      'date_shift:180',
      'hash',
      'partial',
      'hash',
      'null',
      'null',
      'hash',
      'hash',
    ]);
    // a bare "name" is a person's only in a table of people
    expect(s('customers', 'name')).toBe('name');
    expect(s('products', 'name')).toBeUndefined();
    for (const c of ['id', 'plan', 'created_at', 'amount', 'status', 'description', 'sku', 'tokenised_version'])
      expect(s('users', c), c).toBeUndefined();
  });

  it('by value: emails outside the reserved domains, phones, Luhn card numbers, JWTs, API keys, IPs, IBANs', () => {
    expect(valueKind('alice.smith@gmail.com')).toMatch(/email/);
    for (const v of ['u1234@example.com', 'x@mail.example.org', 'a@foo.test', 'b@svc.invalid'])
      expect(valueKind(v), v).toBeUndefined();
    expect(valueKind('+44 20 7946 0958')).toBe('phone numbers');
    expect(valueKind('(555) 123-4567')).toBe('phone numbers');
    expect(valueKind('+1 555 123 4567')).toBeUndefined(); // what the phone strategy writes
    expect(valueKind('4111 1111 1111 1111')).toMatch(/card numbers/);
    expect(valueKind('4111 1111 1111 1112')).toBeUndefined(); // fails Luhn
    expect(luhn('79927398713')).toBe(true);
    expect(
      valueKind('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'),
    ).toBe('JWTs');
    for (const k of [
      'sk_live_abcdefghijklmnop1234',
      'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      'AKIAIOSFODNN7EXAMPLE',
      'xoxb-123456789012-abcdefghij',
    ])
      expect(valueKind(k), k).toMatch(/API keys/);
    expect(valueKind('81.2.69.160')).toBe('IP addresses');
    expect(valueKind('198.51.100.7')).toBeUndefined(); // documentation range
    expect(valueKind('2a00:1450:4001:82b::200e')).toBe('IP addresses');
    expect(valueKind('GB82WEST12345698765432')).toBe('IBANs');
    for (const v of ['2024-01-15', '12:30:45', 'tea', '1.2.3', 'pro', '12345678', '3.14159265'])
      expect(valueKind(v), v).toBeUndefined();
  });

  it("a json value's personal paths, by key and by value", () => {
    const paths = jsonPaths({
      contact: { email: 'a@corp.io', phone: '+44 20 7946 0958' },
      note: 'hi',
      tags: ['x'],
      address: { street: '1 Long Rd' },
    });
    expect(Object.fromEntries(paths)).toEqual({
      'contact.email': 'email',
      'contact.phone': 'phone',
      'address.street': 'hash',
    });
  });
});

describe('[mask] rules', () => {
  it('strategies, with their arguments; an unknown one is named', () => {
    expect(parseStrategy('email')).toEqual({ kind: 'email' });
    expect(parseStrategy('fixed:n/a: none')).toEqual({ kind: 'fixed', value: 'n/a: none' });
    expect(parseStrategy('date_shift')).toEqual({ kind: 'date_shift', days: 30 });
    expect(parseStrategy('partial:2')).toEqual({ kind: 'partial', keep: 2 });
    expect(parseStrategy('scramble')).toMatch(/^unknown strategy "scramble" \(known: email, name/);
    expect(parseStrategy('partial:x')).toMatch(/partial takes a whole number/);
  });

  it('keys: three parts, quoted where a part holds a dot or a quote', () => {
    expect(parseKey('public.users.email')).toEqual({ schema: 'public', table: 'users', column: 'email' });
    expect(parseKey('"my.schema"."Users"."e""mail"')).toEqual({
      schema: 'my.schema',
      table: 'Users',
      column: 'e"mail',
    });
    expect(parseKey('users.email')).toBeUndefined();
    expect(keyOf('my.schema', 'Users', 'e"mail')).toBe('"my.schema".Users."e""mail"');
  });

  it('the digest: the same rules in any order give the same value; none gives null', () => {
    const r = (column: string, text: string): MaskRule => ({
      key: `public.t.${column}`,
      on: 'column',
      schema: 'public',
      table: 't',
      column,
      strategy: { kind: 'email' },
      text,
    });
    expect(rulesDigest([r('a', 'email'), r('b', 'hash')])).toBe(rulesDigest([r('b', 'hash'), r('a', 'email')]));
    expect(rulesDigest([r('a', 'email')])).not.toBe(rulesDigest([r('a', 'hash')]));
    expect(rulesDigest([])).toBeNull();
  });
});
