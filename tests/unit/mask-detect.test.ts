// The pure parts of masking: what looks personal by name and by value (src/mask/detect.ts), and the [mask] rules'
// parsing (src/mask/rules.ts). The database side is tests/engine/masking.test.ts.
import { describe, expect, it } from 'vitest';
import { jsonPaths, luhn, nameSign, proseKind, valueKind, type TypeClass } from '../../src/mask/detect.js';
import { avoiding, FIRST_NAMES, LAST_NAMES } from '../../src/mask/names.js';
import { keyOf, maskSection, parseKey, parseStrategy, rulesDigest, type MaskRule } from '../../src/mask/rules.js';

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

  it('the names real schemas use (issue 41): each flagged, with the class of type it is personal in', () => {
    const text = { cls: 'text' as const, key: false };
    const flagged: [string, string, TypeClass?][] = [
      ['address2', 'hash'],
      ['address_line_1', 'hash'],
      ['addressLine2', 'hash'],
      ['BillingAddress', 'hash'],
      ['street2', 'hash'],
      ['house_number', 'hash'],
      ['PostalCode', 'hash'],
      ['BillingPostalCode', 'hash'],
      ['zip', 'hash', 'number'],
      ['email2', 'email'],
      ['contact_email', 'email'],
      ['emails', 'email', 'array'],
      ['home_phone', 'phone'],
      ['phone_work', 'phone'],
      ['Fax', 'phone'],
      ['mobile_phone', 'phone'],
      ['FirstName', 'first_name'],
      ['LastName', 'last_name'],
      ['username', 'username'],
      ['login', 'username'],
      ['screen_name', 'username'],
      ['contact_person', 'name'],
      ['emergency_contact', 'name'],
      ['BirthDate', 'date_shift:180', 'date'],
      ['passport_number', 'hash'],
      ['national_insurance_number', 'hash'],
      ['tax_id', 'hash'],
      ['device_id', 'hash'],
      ['mac_address', 'hash'],
      ['session_id', 'null'],
      ['security_answer', 'null'],
      ['picture', 'null', 'blob'],
      ['photo', 'null', 'blob'],
      ['avatar_url', 'null'],
      ['profile_image', 'null', 'blob'],
      ['document', 'null', 'blob'],
      ['scan', 'null', 'blob'],
      ['signature', 'null', 'blob'],
      ['attachment', 'null', 'blob'],
      ['latitude', 'null', 'number'],
    ];
    for (const [c, suggest, cls] of flagged)
      expect(nameSign('t', c, cls ? { cls, key: false } : text)?.suggest, c).toBe(suggest);
    // Not by name alone: keys and references, and names whose type holds no such data.
    const not: [string, TypeClass, boolean?][] = [
      ['address_id', 'number'],
      ['billing_address_id', 'number', true],
      ['address_id', 'number', true],
      ['customer_email_id', 'number'],
      ['phone_id', 'uuid', true],
      ['email_verified', 'other'],
      ['email_confirmed_at', 'date'],
      ['last_login', 'date'],
      ['login_count', 'number'],
      ['address_type', 'text'],
      ['email_status', 'text'],
      ['email_template', 'text'],
      ['cell_type', 'text'],
      ['document', 'text'],
      ['image', 'text'],
      ['mobile_app_version', 'text'],
    ];
    for (const [c, cls, key] of not) expect(nameSign('t', c, { cls, key: !!key }), c).toBeUndefined();
    // A key is never personal by its name; an identifier stays one even when its name ends in _id.
    expect(nameSign('t', 'tax_id', { cls: 'number', key: false })?.suggest).toBe('hash');
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

  it('keys beyond columns: comments, materialized views, the large objects, each with its own strategies', () => {
    const parse = (raw: Record<string, unknown>) => maskSection.safeParse(raw);
    const ok = parse({
      'comment on column public.users.email': 'null',
      'COMMENT ON TABLE public.users': 'fixed:user accounts',
      'materialized view public.mv': 'empty',
      'materialized view "My Schema".mv': 'refresh',
      'large objects': 'empty',
    });
    expect(ok.success).toBe(true);
    expect(ok.data!.map((r) => [r.on, r.object ?? `${r.schema}.${r.table}`, r.text])).toEqual([
      ['comment', 'column public.users.email', 'null'],
      ['comment', 'table public.users', 'fixed:user accounts'],
      ['matview', 'public.mv', 'empty'],
      ['matview', 'My Schema.mv', 'refresh'],
      ['large_objects', '.', 'empty'],
    ]);
    const bad = parse({
      'comment on column public.users.email': 'email',
      'materialized view public.mv': 'null',
      'large objects of x': 'empty',
      'public.users.email': 'empty',
    });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'comment on column public.users.email: "email" does not apply here (it takes null, keep, fixed)',
      'materialized view public.mv: "null" does not apply here (it takes refresh, empty, keep)',
      'large objects of x: a "large objects" key names all of them: nothing may follow it',
      'public.users.email: "empty" applies to a materialized view or the large objects, not to a column',
    ]);
  });
});

describe('prose (comments)', () => {
  it('emails, keys, phone numbers with their country code and IP addresses; not dates or versions', () => {
    expect(proseKind('escalations go to jane.doe@initech.com')).toMatch(/email/);
    expect(proseKind('call +44 20 7946 0958 after 5')).toBe('phone numbers');
    expect(proseKind('the old host was 81.2.69.160')).toBe('IP addresses');
    expect(proseKind('token sk_live_abcdefghijklmnop1234 rotated')).toMatch(/API keys/);
    for (const t of ['free, pro or team', 'since 2024-01-15, v1.2.3.4', 'see docs@example.com', '+1 555 123 4567'])
      expect(proseKind(t), t).toBeUndefined();
  });
});

describe('name pools', () => {
  it('600 invented first and last names; avoiding a word moves only the values that would have picked it', () => {
    expect(new Set(FIRST_NAMES).size).toBe(600);
    expect(new Set(LAST_NAMES).size).toBe(600);
    const p = avoiding(new Set([FIRST_NAMES[3]!.toLowerCase(), FIRST_NAMES[4]!.toLowerCase(), 'mary']));
    expect(p.first.length).toBe(600);
    expect(p.first[3]).toBe(FIRST_NAMES[5]);
    expect(p.first[4]).toBe(FIRST_NAMES[5]);
    expect(p.first.filter((n, i) => n !== FIRST_NAMES[i])).toHaveLength(2);
    expect(p.last).toEqual(LAST_NAMES);
  });
});
