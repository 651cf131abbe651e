// Masking beyond a table's plain columns (decision 466), in-process against the real server: text arrays (masked
// element by element, checked over every row), large objects (a rule, or refused; emptied), a materialized view that
// cannot be refreshed (refused with the rule to paste), comments replaced by `fixed:`; and the check after masking
// itself: it fails an import when a masked column holds what its strategy never writes, and reads a relation over its
// bound through a sample.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyInput } from '../../src/project/source-input.js';
import { maskSection } from '../../src/mask/rules.js';
import { proveMasked } from '../../src/mask/prove.js';
import { connect } from '../../src/server/db.js';
import { columnsOf } from '../../src/server/mask-catalog.js';
import { dbRow, testProject, type TestProject } from '../helpers/engine.js';
import { Faults } from '../helpers/faults.js';
import { fillPersonalSource, RULES_TOML } from '../helpers/personal-source.js';
import { pgInfo, sql } from '../helpers/pgx.js';

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

async function origin(ddl: string): Promise<string> {
  const name = `mobj_${rand()}`;
  made.push(name);
  await sql(`CREATE DATABASE ${name}`);
  await sql(ddl, [], name);
  return name;
}

function project(toml: string): TestProject {
  const source = `mobj_copy_${rand()}`;
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
  return { t, failure: r instanceof Error ? (r as unknown as Failure) : undefined };
}

const scan = async (db: string) =>
  project('').run((e) => e.scanSource({ conn: classifyInput(url(db), process.cwd()).conn!, progress: quiet }));

describe('masking beyond plain columns', () => {
  it('a text array of emails is masked element by element; an unruled array with an email beyond the sample is refused', async () => {
    const db = await origin(`CREATE TABLE people (id int PRIMARY KEY, emails text[], tags text[]);
      INSERT INTO people SELECT i, ARRAY['p' || i || '@corp.io', NULL, 'q' || i || '@mail.net'],
        CASE WHEN i = 3000 THEN ARRAY['vip', 'boss@corp.io'] ELSE ARRAY['vip'] END FROM generate_series(1, 3500) i;`);
    const r = await scan(db);
    expect(r.unruled.map((f) => [f.key, f.suggest])).toEqual([['public.people.emails', 'email']]);
    const refused = await importFrom(db, r.block + '\n');
    expect(refused.failure?.code).toBe('REFUSED');
    expect(refused.failure?.message).toMatch(/public\.people\.tags: 1 of 3,500 row\(s\) hold email addresses/);
    expect(await dbRow(refused.t.config.source!)).toBeUndefined();
    const ok = await importFrom(db, `${r.block}\n"public.people.tags" = "email"\n`);
    expect(ok.failure?.message).toBeUndefined();
    const [p] = await sql(
      `SELECT bool_and(emails[1] ~ '^u[0-9a-f]{16}@example\\.com$' AND emails[2] IS NULL AND array_length(emails, 1) = 3) AS ok,
              count(*) FILTER (WHERE tags = ARRAY['vip'])::int AS untouched FROM people`,
      [],
      ok.t.config.source!,
    );
    expect(p).toEqual({ ok: true, untouched: 0 });
  }, 120_000);

  it('large objects need a rule: "empty" empties each one and keeps its oid; "keep" keeps them', async () => {
    const db = await origin(`CREATE TABLE documents (id int PRIMARY KEY, file oid);
      INSERT INTO documents SELECT i, lo_from_bytea(0, convert_to('contract of person ' || i || ' <p' || i || '@corp.io>', 'UTF8'))
      FROM generate_series(1, 20) i;`);
    const r = await scan(db);
    expect(r.unruled.map((f) => [f.key, f.suggest])).toEqual([['large objects', 'empty']]);
    const refused = await importFrom(db, '');
    expect(refused.failure?.message).toMatch(/large objects \(large object\): 20 large object\(s\)/);
    const emptied = await importFrom(db, r.block + '\n');
    expect(emptied.failure?.message).toBeUndefined();
    expect(
      await sql(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE length(lo_get(file)) = 0)::int AS empty FROM documents`,
        [],
        emptied.t.config.source!,
      ),
    ).toEqual([{ n: 20, empty: 20 }]);
    const kept = await importFrom(db, '[mask]\n"large objects" = "keep"\n');
    expect(kept.failure?.message).toBeUndefined();
    const [k] = await sql(
      `SELECT convert_from(lo_get(file), 'UTF8') AS t FROM documents WHERE id = 1`,
      [],
      kept.t.config.source!,
    );
    expect(k.t).toContain('p1@corp.io');
  }, 120_000);

  it('a materialized view that cannot be refreshed from the masked tables is refused with the rule to paste', async () => {
    const db = await origin(`CREATE TABLE users (id int PRIMARY KEY, email text NOT NULL);
      INSERT INTO users SELECT i, chr(96 + i) || '@corp.io' FROM generate_series(1, 16) i;
      CREATE MATERIALIZED VIEW domains AS SELECT id, left(email, 1) AS initial FROM users;
      CREATE UNIQUE INDEX ON domains (initial);`);
    // Masked, every email is u…@example.com: every initial is "u", and the view's unique index refuses the refresh.
    const toml = '[mask]\n"public.users.email" = "email"\n';
    const refused = await importFrom(db, toml);
    expect(refused.failure?.code).toBe('REFUSED');
    expect(refused.failure?.message).toMatch(/materialized view public\.domains could not be refreshed/);
    expect(refused.failure?.hint).toContain('"materialized view public.domains" = "empty"');
    expect(await dbRow(refused.t.config.source!)).toBeUndefined();
    const ok = await importFrom(db, toml + '"materialized view public.domains" = "empty"\n');
    expect(ok.failure?.message).toBeUndefined();
    expect(
      await sql(`SELECT relispopulated FROM pg_class WHERE oid = 'public.domains'::regclass`, [], ok.t.config.source!),
    ).toEqual([{ relispopulated: false }]);
  }, 120_000);

  it('a comment ruled fixed:<text> is replaced; a comment rule that names nothing is an error', async () => {
    const db = await origin(`CREATE TABLE users (id int PRIMARY KEY, email text);
      COMMENT ON COLUMN users.email IS 'ask ann@corp.io before changing';`);
    const ok = await importFrom(
      db,
      '[mask]\n"public.users.email" = "email"\n"comment on column public.users.email" = "fixed:the login address"\n',
    );
    expect(ok.failure?.message).toBeUndefined();
    expect(await sql(`SELECT col_description('users'::regclass, 2) AS c`, [], ok.t.config.source!)).toEqual([
      { c: 'the login address' },
    ]);
    const bad = await importFrom(
      db,
      '[mask]\n"public.users.email" = "email"\n"comment on column public.users.mail" = "null"\n',
    );
    expect(bad.failure?.code).toBe('CONFIG_INVALID');
    expect(bad.failure?.message).toMatch(/"comment on column public\.users\.mail": names no comment/);
  }, 120_000);
});

describe('statistics', () => {
  it("an ANALYZE between the restore and the masking (autovacuum's) leaves no original value in pg_stats", async () => {
    const db = await origin('SELECT 1');
    await fillPersonalSource(db, 300);
    const emails = (await sql(`SELECT email FROM customers`, [], db)).map((r) => r.email as string);
    const t = project(RULES_TOML);
    // The copy is analyzed as autovacuum could, after the restore and before the masking's transaction.
    const faults = new Faults();
    const gate = faults.before.bind(faults);
    let copy = '';
    faults.before = async (text: string) => {
      copy ||= /CREATE DATABASE "(pgx_src_\w+)"/.exec(text)?.[1] ?? '';
      if (copy && /set_config\('pgx\.mask_salt'/.test(text)) await sql('ANALYZE', [], copy);
      return gate(text);
    };
    const e = await t.open(faults);
    try {
      await e.importSource({ input: classifyInput(url(db), process.cwd()), into: t.config.source!, progress: quiet });
    } finally {
      await e.close();
    }
    expect(copy).not.toBe('');
    const stats = await sql(
      `SELECT tablename, attname, concat_ws(' ', most_common_vals::text, histogram_bounds::text) AS v FROM pg_stats
       WHERE schemaname = 'public' AND tablename IN ('customers', 'orders')`,
      [],
      t.config.source!,
    );
    expect(stats.length).toBeGreaterThan(5);
    expect(
      stats.filter((r) => emails.some((m) => (r.v as string).includes(m))).map((r) => `${r.tablename}.${r.attname}`),
    ).toEqual([]);
  }, 120_000);
});

describe('the check after masking', () => {
  async function prove(db: string, toml: string, bound?: number) {
    const p = pgInfo();
    const c = await connect({ host: p.host, port: p.port, user: p.user, password: p.password, database: db });
    try {
      const rules = maskSection.parse(
        Object.fromEntries(
          toml
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split(' = ').map((x) => JSON.parse(x))),
        ),
      );
      return await proveMasked(c, {
        database: db,
        columns: await columnsOf(c),
        rules,
        file: '.pgx.toml',
        progress: quiet,
        bound,
      });
    } finally {
      await c.close();
    }
  }

  it('fails (exit 7, the copy dropped by its caller) when a masked column holds what its strategy never writes', async () => {
    const db = await origin(`CREATE TABLE users (id int PRIMARY KEY, email text, phone text, full_name text);
      INSERT INTO users VALUES (1, 'u0123456789abcdef@example.com', '+1 555 123 4567', 'Alana Ashford'),
                               (2, 'u0123456789abcdee@example.com', '+44 20 7946 0958', 'Mary Smith');`);
    const err = await prove(
      db,
      '"public.users.email" = "email"\n"public.users.phone" = "phone"\n"public.users.full_name" = "name"',
    ).catch((x: unknown) => x as Failure);
    expect((err as Failure).code).toBe('IMPORT_FAILED');
    expect((err as Failure).message).toMatch(/public\.users\.phone: 1 value\(s\) that "phone" never writes/);
    expect((err as Failure).message).toMatch(/public\.users\.full_name: 1 value\(s\) that "name" never writes/);
    expect((err as Failure).message).not.toMatch(/users\.email/);
    expect((err as Failure).message).not.toContain('Mary');
  });

  it('reads a relation bigger than its bound through a sample, and says so', async () => {
    const db = await origin(`CREATE TABLE notes (id int PRIMARY KEY, body text);
      INSERT INTO notes SELECT i, repeat('note ', 40) FROM generate_series(1, 20000) i; ANALYZE notes;`);
    const whole = await prove(db, '');
    expect(whole).toMatchObject({ relations: 1, rows: 20000, sampled: [] });
    const sampled = await prove(db, '', 256 * 1024);
    expect(sampled.sampled).toEqual(['public.notes']);
    expect(sampled.rows).toBeGreaterThan(0);
    expect(sampled.rows).toBeLessThan(10000);
  });
});
