// A source database full of realistic personal data (@faker-js/faker, seeded: the same rows every run), for the
// masking tests and bench: customers with emails, names, phones, tokens, birth dates, a jsonb profile and an IP;
// orders joined to them by email; a table with nothing personal in it.
import { Faker, en } from '@faker-js/faker';
import { sql } from './pgx.js';

export const PERSONAL_SCHEMA = `
CREATE TABLE customers (
  id serial PRIMARY KEY,
  email text NOT NULL UNIQUE,
  full_name text NOT NULL,
  phone varchar(40),
  api_token text,
  plan text NOT NULL CHECK (plan IN ('free', 'pro', 'team')),
  birth_date date,
  profile jsonb,
  last_ip inet
);
CREATE TABLE orders (
  id serial PRIMARY KEY,
  customer_email text NOT NULL REFERENCES customers (email),
  amount int NOT NULL,
  card_number text
);
CREATE TABLE products (id serial PRIMARY KEY, name text NOT NULL, price int NOT NULL);
-- A view over a masked column: that table is masked by UPDATE (ALTER … TYPE refuses), the other by a rewrite.
CREATE VIEW customer_contacts AS SELECT id, email, full_name FROM customers;
`;

/** Every personal column of the schema, with the rule the tests give it. */
export const RULES: Record<string, string> = {
  'public.customers.email': 'email',
  'public.customers.full_name': 'name',
  'public.customers.phone': 'phone',
  'public.customers.api_token': 'null',
  'public.customers.birth_date': 'date_shift:90',
  'public.customers.last_ip': 'ip',
  'public.orders.customer_email': 'email',
  'public.orders.card_number': 'partial',
};

export const RULES_TOML =
  [
    '[mask]',
    ...Object.entries(RULES).map(([k, v]) => `"${k}" = "${v}"`),
    `"public.customers.profile" = { jsonb = { "contact.email" = "email", "contact.phone" = "phone", "address.street" = "hash" } }`,
  ].join('\n') + '\n';

/** Fills `database` with `customers` customers and 4 orders each (seeded). */
export async function fillPersonalSource(database: string, customers: number, seed = 42): Promise<void> {
  const f = new Faker({ locale: [en] });
  f.seed(seed);
  await sql(PERSONAL_SCHEMA, [], database);
  const emails: string[] = [];
  for (let at = 0; at < customers; at += 500) {
    const rows: unknown[] = [];
    const values: string[] = [];
    for (let i = at; i < Math.min(customers, at + 500); i++) {
      const first = f.person.firstName();
      const last = f.person.lastName();
      const email = `${first}.${last}.${i}@${f.internet.domainName()}`.toLowerCase();
      emails.push(email);
      const profile = {
        contact: { email, phone: f.phone.number({ style: 'international' }) },
        address: { street: f.location.streetAddress(), city: f.location.city() },
        newsletter: f.datatype.boolean(),
      };
      const b = rows.length;
      values.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8})`);
      rows.push(
        email,
        `${first} ${last}`,
        f.phone.number({ style: 'international' }),
        `sk_live_${f.string.alphanumeric(24)}`,
        f.helpers.arrayElement(['free', 'pro', 'team']),
        f.date.birthdate().toISOString().slice(0, 10),
        JSON.stringify(profile),
        f.internet.ipv4(),
      );
    }
    await sql(
      `INSERT INTO customers (email, full_name, phone, api_token, plan, birth_date, profile, last_ip) VALUES ${values.join(', ')}`,
      rows,
      database,
    );
  }
  await sql(
    `INSERT INTO orders (customer_email, amount, card_number) SELECT c.email, (c.id * 7 + g) % 500, CASE WHEN g = 1 THEN $1 END FROM customers c, generate_series(1, 4) g`,
    [f.finance.creditCardNumber({ issuer: '4###-####-####-###L' })],
    database,
  );
  await sql(`INSERT INTO products (name, price) VALUES ('tea', 3), ('cake', 5), ('jam', 4)`, [], database);
}

/** A checksum of every row of the personal source (to prove it never changed). */
export async function checksum(database: string): Promise<string> {
  const [r] = await sql(
    `SELECT md5((SELECT string_agg(c::text, '|' ORDER BY id) FROM customers c) || (SELECT string_agg(o::text, '|' ORDER BY id) FROM orders o)) AS sum`,
    [],
    database,
  );
  return r.sum;
}
