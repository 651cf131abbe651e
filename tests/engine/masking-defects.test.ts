// Issue 41's masking defects, each from its reproduction, in-process against the real server: a materialized view
// that kept the real emails (1), a jsonb path that matched nothing and values beyond the scan's sample (2), names
// the scan missed (3), comments copied as they were (4), `hash` on integer keys that collided (5), integer
// `*_address_id` keys flagged as addresses and hashed under their sequence (6), a generated column no block could
// import (7), name pools so small that distinct usernames merged and real names survived (8). Each failed on main
// before the fix (the report of the change says so).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Faker, en } from '@faker-js/faker';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyInput } from '../../src/project/source-input.js';
import type { ScanReport } from '../../src/mask/scan.js';
import { dbRow, testProject, type TestProject } from '../helpers/engine.js';
import { pgInfo, sql } from '../helpers/pgx.js';
import { fillPersonalSource, RULES_TOML } from '../helpers/personal-source.js';

const rand = () => randomBytes(4).toString('hex');
const made: string[] = [];
const dirs: string[] = [];
const quiet = () => {};

afterAll(async () => {
  for (const d of made) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const url = (db: string) =>
  `postgresql://${pgInfo().user}:${encodeURIComponent(pgInfo().password)}@${pgInfo().host}:${pgInfo().port}/${db}`;

/** A new origin database holding `ddl`. */
async function origin(ddl: string): Promise<string> {
  const name = `mdef_${rand()}`;
  made.push(name);
  await sql(`CREATE DATABASE ${name}`);
  await sql(ddl, [], name);
  return name;
}

function project(toml: string): TestProject {
  const source = `mdef_copy_${rand()}`;
  made.push(source);
  const t = testProject({ source, toml });
  dirs.push(t.config.projectDir);
  return t;
}

type Failure = { code: string; message: string; hint: string };

async function importFrom(db: string, toml: string) {
  const t = project(toml);
  const input = classifyInput(url(db), process.cwd());
  const r = await t
    .run((e) => e.importSource({ input, into: t.config.source!, progress: quiet }))
    .catch((x: unknown) => x as Failure);
  return { t, r, failure: r instanceof Error ? (r as unknown as Failure) : undefined };
}

async function scan(db: string, toml = ''): Promise<ScanReport> {
  const t = project(toml);
  return t.run((e) => e.scanSource({ conn: classifyInput(url(db), process.cwd()).conn!, progress: quiet }));
}

/** No database of the project's name and no unfinished copy of it: what a failed import must leave. */
async function nothingKept(t: TestProject) {
  expect(await dbRow(t.config.source!)).toBeUndefined();
  expect(await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [t.config.source], 'pgx_registry')).toEqual(
    [],
  );
  expect(
    await sql(`SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE $1`, [
      `%"project":"${t.name}"%`,
    ]),
  ).toEqual([]);
}

const flagged = (r: ScanReport) => r.personal.map((f) => f.key).sort();

describe('issue 41: masking defects, each from its reproduction', () => {
  it('1. a materialized view over masked columns is refreshed from the masked tables: none of its 300 real emails is left', async () => {
    const db = await origin('SELECT 1');
    await fillPersonalSource(db, 300);
    await sql(`CREATE MATERIALIZED VIEW customer_emails AS SELECT id, email, full_name FROM customers`, [], db);
    const real = (await sql(`SELECT email FROM customers`, [], db)).map((r) => r.email);
    const { t, failure } = await importFrom(db, RULES_TOML);
    expect(failure?.message).toBeUndefined();
    const [m] = await sql(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE email = ANY ($1))::int AS real,
              bool_and(email ~ '^u[0-9a-f]{16}@example\\.com$') AS masked FROM customer_emails`,
      [real],
      t.config.source!,
    );
    expect(m).toEqual({ n: 300, real: 0, masked: true });
  }, 120_000);

  it('2a. a jsonb path that matches no value in the sample is a rule error ("contact.mial" for contact.mail)', async () => {
    const db = await origin(`CREATE TABLE people (id serial PRIMARY KEY, profile jsonb);
      INSERT INTO people (profile) SELECT jsonb_build_object('contact', jsonb_build_object('mail', 'person' || i || '@gmail.com'))
      FROM generate_series(1, 300) i;`);
    const toml = `[mask]\n"public.people.profile" = { jsonb = { "contact.mial" = "email" } }\n`;
    const { t, failure } = await importFrom(db, toml);
    expect(failure?.code).toBe('CONFIG_INVALID');
    expect(failure?.message).toMatch(/"public\.people\.profile": path "contact\.mial" matches no value/);
    expect(failure?.message).toContain('contact.mail');
    await nothingKept(t);
  }, 60_000);

  it('2b. values beyond the 200-row sample: the masked copy is checked over every row, and dropped when one is left', async () => {
    // 3,500 rows: the scan reads the first 800; three rows after them hold an email at a path no rule names.
    const db = await origin(`CREATE TABLE tickets (id int PRIMARY KEY, contact jsonb NOT NULL);
      INSERT INTO tickets SELECT i, jsonb_build_object('email', 'client' || i || '@corp.io',
        'cc', CASE WHEN i BETWEEN 3001 AND 3003 THEN 'boss' || i || '@corp.io' END) FROM generate_series(1, 3500) i;`);
    const scanned = await scan(db);
    expect(scanned.unruled.map((f) => f.suggest)).toEqual(['{ jsonb = { "email" = "email" } }']);
    const { t, failure } = await importFrom(db, `[mask]\n"public.tickets.contact" = ${scanned.unruled[0]!.suggest}\n`);
    expect(failure?.code).toBe('REFUSED');
    expect(failure?.message).toMatch(/public\.tickets\.contact.*3 .*email addresses/);
    expect(failure?.message).toMatch(/"cc"/);
    expect(failure?.message).not.toContain('@corp.io'); // never the value itself
    await nothingKept(t);
  }, 60_000);

  it('3. the scan sees address2-style names and bytea photos', async () => {
    const db = await origin(`CREATE TABLE address (address_id serial PRIMARY KEY, address text, address2 text,
        postal_code text, phone text, district text);
      CREATE TABLE staff (staff_id serial PRIMARY KEY, username text, picture bytea, last_update timestamptz);`);
    const r = await scan(db);
    expect(flagged(r)).toEqual(
      [
        'public.address.address',
        'public.address.address2',
        'public.address.phone',
        'public.address.postal_code',
        'public.staff.picture',
        'public.staff.username',
      ].sort(),
    );
    expect(r.personal.find((f) => f.key === 'public.staff.picture')?.suggest).toBe('null');
  }, 60_000);

  it('4. comments on tables and columns holding personal data are refused with a rule to paste, then masked', async () => {
    const db = await origin('SELECT 1');
    await fillPersonalSource(db, 50);
    await sql(
      `COMMENT ON TABLE customers IS 'owner: bob.smith@initech.com';
       COMMENT ON COLUMN customers.email IS 'escalations go to jane.doe@initech.com';
       COMMENT ON COLUMN customers.plan IS 'free, pro or team';`,
      [],
      db,
    );
    const { t, failure } = await importFrom(db, RULES_TOML);
    expect(failure?.code).toBe('REFUSED');
    expect(failure?.message).toContain('comment on table public.customers');
    expect(failure?.message).toContain('comment on column public.customers.email');
    expect(failure?.message).not.toContain('plan');
    await nothingKept(t);
    const block = failure!.hint.slice(
      failure!.hint.indexOf('[mask]') + '[mask]\n'.length,
      failure!.hint.indexOf('\n\nThen'),
    );
    const again = await importFrom(db, RULES_TOML + block + '\n');
    expect(again.failure?.message).toBeUndefined();
    const comments = await sql(
      `SELECT objsubid, description FROM pg_description WHERE objoid = 'customers'::regclass ORDER BY objsubid`,
      [],
      again.t.config.source!,
    );
    expect(comments).toEqual([{ objsubid: 6, description: 'free, pro or team' }]);
  }, 120_000);

  it('5. hash on integer keys keeps them distinct (200,000 int4 and 20,000 int2 primary keys)', async () => {
    const db = await origin(`CREATE TABLE badges (badge_no int PRIMARY KEY, holder text);
      INSERT INTO badges SELECT i * 7919, 'x' FROM generate_series(1, 200000) i;
      CREATE TABLE desks (desk smallint PRIMARY KEY);
      INSERT INTO desks SELECT i FROM generate_series(-10000, 9999) i;`);
    const toml = `[mask]\n"public.badges.badge_no" = "hash"\n"public.desks.desk" = "hash"\n`;
    const { t, failure } = await importFrom(db, toml);
    expect(failure?.message).toBeUndefined();
    const [b] = await sql(
      `SELECT count(DISTINCT badge_no)::int AS d, count(*) FILTER (WHERE badge_no % 7919 = 0 AND badge_no BETWEEN 7919 AND 7919 * 200000)::int AS kept FROM badges`,
      [],
      t.config.source!,
    );
    expect(b.d).toBe(200000);
    expect(b.kept).toBeLessThan(100); // a permutation, not the identity
    const [d] = await sql(`SELECT count(DISTINCT desk)::int AS d FROM desks`, [], t.config.source!);
    expect(d.d).toBe(20000);
  }, 120_000);

  it('6. integer *_address_id keys are not flagged by their name; hash on a key fed by a sequence is a rule error', async () => {
    const db = await origin(`CREATE TABLE address (address_id serial PRIMARY KEY, address text NOT NULL);
      CREATE TABLE customer (customer_id serial PRIMARY KEY, address_id int REFERENCES address,
        billing_address_id int REFERENCES address, email text);
      INSERT INTO address (address) VALUES ('12 Oak Street'), ('3 Elm Road');
      INSERT INTO customer (address_id, billing_address_id, email) VALUES (1, 2, 'ann@corp.io');`);
    const r = await scan(db);
    expect(flagged(r)).toEqual(['public.address.address', 'public.customer.email']);
    const bad = await scan(
      db,
      `[mask]\n"public.address.address_id" = "hash"\n"public.customer.address_id" = "hash"\n"public.customer.billing_address_id" = "hash"\n`,
    );
    expect(bad.problems.find((p) => p.key === 'public.address.address_id')?.problem).toMatch(/sequence/);
  }, 60_000);

  it('7. a generated column computed from an email follows its rule: the printed block imports as pasted', async () => {
    const db = await origin(`CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL UNIQUE,
        email_lower text GENERATED ALWAYS AS (lower(email)) STORED);
      INSERT INTO users (email) SELECT 'Person' || i || '@Gmail.com' FROM generate_series(1, 100) i;`);
    const r = await scan(db);
    expect(r.block).not.toContain('email_lower');
    const { t, failure } = await importFrom(db, r.block + '\n');
    expect(failure?.message).toBeUndefined();
    const [u] = await sql(
      `SELECT bool_and(email ~ '^u[0-9a-f]{16}@example\\.com$' AND email_lower = lower(email)) AS ok FROM users`,
      [],
      t.config.source!,
    );
    expect(u.ok).toBe(true);
  }, 60_000);

  it('8. 1,499 distinct usernames stay distinct, and no masked first name or username is a real one', async () => {
    const f = new Faker({ locale: [en] });
    f.seed(8);
    const rows = Array.from({ length: 1499 }, (_, i) => [`${f.internet.username()}${i}`, f.person.firstName()]);
    const db = await origin(
      `CREATE TABLE accounts (id serial PRIMARY KEY, username text NOT NULL, first_name text NOT NULL)`,
    );
    await sql(
      `INSERT INTO accounts (username, first_name) SELECT * FROM unnest($1::text[], $2::text[])`,
      [rows.map((r) => r[0]), rows.map((r) => r[1])],
      db,
    );
    const r = await scan(db);
    const { t, failure } = await importFrom(db, r.block + '\n');
    expect(failure?.message).toBeUndefined();
    const [a] = await sql(
      `SELECT count(DISTINCT username)::int AS users,
              count(*) FILTER (WHERE lower(first_name) = ANY ($1))::int AS real_first,
              count(*) FILTER (WHERE lower(username) = ANY ($2))::int AS real_user FROM accounts`,
      [rows.map((r) => r[1]!.toLowerCase()), rows.map((r) => r[0]!.toLowerCase())],
      t.config.source!,
    );
    expect(a).toEqual({ users: 1499, real_first: 0, real_user: 0 });
  }, 60_000);
});
