// Masked sources (decision 460), in-process against the real server, on a faker-generated source full of personal
// data: refused without rules (each personal column named, a [mask] block that works as pasted); with rules, no
// template or branch holds any original value of a masked column, joins on masked keys match as in the source, unique
// columns stay unique, a sync masks the same input the same way, the source never changes; a crash at each step of
// the masking leaves no unmasked template, branch or finished copy.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyInput } from '../../src/project/source-input.js';
import { loadConfig } from '../../src/project/config.js';
import { Engine } from '../../src/engine/api.js';
import { Faults } from '../helpers/faults.js';
import { dbRow, expectNoOrphans, testProject, type TestProject } from '../helpers/engine.js';
import { makeProject, pgInfo, sql } from '../helpers/pgx.js';
import { checksum, fillPersonalSource, RULES, RULES_TOML } from '../helpers/personal-source.js';

const rand = () => randomBytes(4).toString('hex');
const made: string[] = [];
const dirs: string[] = [];
const ORIGIN = `mask_origin_${rand()}`;
let sum: string;

beforeAll(async () => {
  made.push(ORIGIN);
  await sql(`CREATE DATABASE ${ORIGIN}`);
  await fillPersonalSource(ORIGIN, 600);
  sum = await checksum(ORIGIN);
}, 60_000);
afterAll(async () => {
  for (const d of made) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function project(source: string, toml = RULES_TOML): TestProject {
  const t = testProject({ source, toml });
  dirs.push(t.config.projectDir);
  made.push(source);
  return t;
}
const url = (db: string) =>
  `postgresql://${pgInfo().user}:${encodeURIComponent(pgInfo().password)}@${pgInfo().host}:${pgInfo().port}/${db}`;
const input = () => classifyInput(url(ORIGIN), process.cwd());
const quiet = () => {};

/** Masked columns (text form) whose values are compared with the origin's. */
const MASKED: [string, string][] = [
  ['customers', 'email'],
  ['customers', 'full_name'],
  ['customers', 'phone'],
  ['customers', 'api_token'],
  ['customers', 'birth_date'],
  ['customers', 'last_ip'],
  ['customers', "profile #>> '{contact,email}'"],
  ['customers', "profile #>> '{contact,phone}'"],
  ['customers', "profile #>> '{address,street}'"],
  ['orders', 'customer_email'],
  ['orders', 'card_number'],
];

/** How many values of each masked column of `db` are one of the origin's values of that column (must be 0). */
async function originalsIn(db: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  // A shifted date may land on another customer's birthday: compared row by row (never its own).
  const shifted = await sql(`SELECT id, birth_date::text AS d FROM customers ORDER BY id`, [], db);
  const was = new Map(
    (await sql(`SELECT id, birth_date::text AS d FROM customers`, [], ORIGIN)).map((r) => [r.id, r.d]),
  );
  out['customers.birth_date'] = shifted.filter((r) => r.d !== null && r.d === was.get(r.id)).length;
  for (const [table, col] of MASKED) {
    if (col === 'birth_date') continue;
    const origin = (
      await sql(`SELECT DISTINCT (${col})::text AS v FROM ${table} WHERE (${col}) IS NOT NULL`, [], ORIGIN)
    ).map((r) => r.v);
    expect(origin.length, `${table}.${col} has values in the origin`).toBeGreaterThan(0);
    const [r] = await sql(`SELECT count(*)::int AS n FROM ${table} WHERE (${col})::text = ANY ($1)`, [origin], db);
    out[`${table}.${col}`] = r.n;
  }
  return out;
}

const zeros = Object.fromEntries(MASKED.map(([t, c]) => [`${t}.${c}`, 0]));

async function joined(db: string): Promise<number> {
  return (
    await sql(`SELECT count(*)::int AS n FROM orders o JOIN customers c ON c.email = o.customer_email`, [], db)
  )[0].n;
}

describe('masked sources', () => {
  it('without rules the import is refused, naming each personal column; the [mask] block it prints works as pasted', async () => {
    const t = project(`mask_copy_${rand()}`, '');
    const err = await t
      .run((e) => e.importSource({ input: input(), into: t.config.source!, progress: quiet }))
      .catch((x: unknown) => x as { code: string; message: string; hint: string });
    expect((err as { code: string }).code).toBe('REFUSED');
    const { message, hint } = err as { message: string; hint: string };
    for (const col of [...Object.keys(RULES), 'public.customers.profile']) expect(message).toContain(col);
    expect(message).not.toContain('products');
    expect(message).not.toContain('customers.plan');
    expect(message).toMatch(/public\.orders\.card_number \(text\): .*card numbers \(they pass the Luhn check\)/);
    expect(message).toMatch(/public\.customers\.api_token \(text\): .*API keys/);
    expect(await dbRow(t.config.source!)).toBeUndefined();
    expect(
      await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [t.config.source], 'pgx_registry'),
    ).toEqual([]);
    // The suggested block, pasted as it is, is a valid [mask] that lets the import go ahead.
    const block = hint.slice(hint.indexOf('[mask]'), hint.indexOf('\n\nThen'));
    const pasted = project(`mask_copy_${rand()}`, block + '\n');
    const r = await pasted.run((e) => e.importSource({ input: input(), into: pasted.config.source!, progress: quiet }));
    expect(r.mask.columns).toBe(9);
    expect(await originalsIn(pasted.config.source!)).toMatchObject({
      'customers.email': 0,
      'orders.customer_email': 0,
      'customers.full_name': 0,
    });
    expect(await checksum(ORIGIN)).toBe(sum);
  }, 60_000);

  it('with rules: the template and a branch hold no original value; joins, uniqueness and shapes hold; a sync masks alike', async () => {
    const t = project(`mask_copy_${rand()}`);
    const r = await t.run((e) => e.importSource({ input: input(), into: t.config.source!, progress: quiet }));
    expect(r.mask).toMatchObject({ tables: 2, columns: 9, foreign_keys_checked: 1 });
    await t.run((e) => e.refreshTemplate());
    const b = await t.run((e) => e.ensure({ execId: `m${rand()}` }));
    for (const db of [t.config.source!, b.branch]) {
      expect(await originalsIn(db)).toEqual(zeros);
      expect(await joined(db)).toBe(await joined(ORIGIN));
      const [u] = await sql(
        `SELECT count(*)::int AS n, count(DISTINCT email)::int AS d, bool_and(email ~ '^u[0-9a-f]{16}@example\\.com$') AS emails, bool_and(phone ~ '^\\+1 555 \\d{3} \\d{4}$') AS phones, count(api_token)::int AS tokens, bool_and(last_ip << '198.51.100.0/24') AS ips FROM customers`,
        [],
        db,
      );
      expect(u).toEqual({ n: 600, d: 600, emails: true, phones: true, tokens: 0, ips: true });
      const [c] = await sql(`SELECT DISTINCT card_number FROM orders WHERE card_number IS NOT NULL`, [], db);
      expect(c.card_number).toMatch(/^\*+\d{4}$/);
      // the view over masked columns survived, and shows them masked; the rest is as it was
      expect(
        await sql(
          `SELECT count(*)::int AS n, bool_and(email LIKE '%@example.com') AS masked FROM customer_contacts`,
          [],
          db,
        ),
      ).toEqual([{ n: 600, masked: true }]);
      expect((await sql(`SELECT string_agg(plan, ',' ORDER BY id) AS p FROM customers`, [], db))[0].p).toBe(
        (await sql(`SELECT string_agg(plan, ',' ORDER BY id) AS p FROM customers`, [], ORIGIN))[0].p,
      );
    }
    const before = await sql(`SELECT id, email, full_name, phone FROM customers ORDER BY id`, [], t.config.source!);
    const s = await t.run((e) => e.syncSource({ input: input(), progress: quiet }));
    expect(s.template_error).toBeNull();
    expect(await sql(`SELECT id, email, full_name, phone FROM customers ORDER BY id`, [], t.config.source!)).toEqual(
      before,
    );
    // the same email masks the same way in both tables (so the join above matched)
    expect(
      await sql(
        `SELECT count(*)::int AS n FROM orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.email = o.customer_email)`,
        [],
        t.config.source!,
      ),
    ).toEqual([{ n: 0 }]);
    expect(await checksum(ORIGIN)).toBe(sum);
    // the scan of the masked copy: every personal-looking column has its rule
    const scan = await t.run((e) => e.scanSource({ progress: quiet }));
    expect(scan.unruled).toEqual([]);
    await t.run((e) => e.down({ branch: b.branch }, { now: true }));
  }, 120_000);

  it("the user's own database as the source: the template is a masked copy; the source is untouched", async () => {
    const own = `mask_own_${rand()}`;
    made.push(own);
    await sql(`CREATE DATABASE ${own} TEMPLATE ${ORIGIN}`);
    const t = project(own);
    made.pop(); // the project's source is `own`: dropped once, above
    await t.run((e) => e.refreshTemplate());
    expect((await dbRow(t.template))!.comment!).toMatch(/"mask":"[0-9a-f]{16}"/);
    const b = await t.run((e) => e.ensure({ execId: `m${rand()}` }));
    expect(await originalsIn(b.branch)).toEqual(zeros);
    expect(await checksum(own)).toBe(sum);
    await t.run((e) => e.down({ branch: b.branch }, { now: true }));
    // rules with no column, or a strategy that cannot apply, are refused by name
    const bad = project(own, RULES_TOML + '"public.customers.nope" = "hash"\n"public.customers.plan" = "null"\n');
    made.pop();
    const err = await bad.run((e) => e.refreshTemplate()).catch((x: unknown) => x as Error);
    expect((err as Error).message).toMatch(/"public\.customers\.nope": names no column/);
    expect((err as Error).message).toMatch(/"public\.customers\.plan": "null" cannot mask text NOT NULL/);
    await t.run((e) => e.dropTemplates()).catch(() => {});
  }, 60_000);

  it('rules added to a project with an unmasked template: no pool member of it is claimed, the template is rebuilt masked', async () => {
    const own = `mask_own_${rand()}`;
    await sql(`CREATE DATABASE ${own} TEMPLATE ${ORIGIN}`);
    const t = project(own, '[agent]\npool = 1\n');
    const plain = await t.run((e) => e.ensure({ execId: `p${rand()}` }));
    expect((await originalsIn(plain.branch))['customers.email']).toBe(600);
    await t.run((e) => e.fillPool());
    expect((await t.run((e) => e.poolStatus())).ready).toBe(1);
    // The same project, now with rules.
    const masked = { ...t.config, mask: loadConfig({ cwd: project(own, RULES_TOML).config.projectDir }).mask };
    made.pop();
    const e = await Engine.open(masked, { quiet: true });
    try {
      const b = await e.ensure({ execId: `m${rand()}` });
      expect(b.method).not.toBe('claim');
      expect(await originalsIn(b.branch)).toEqual(zeros);
      expect((await dbRow(t.template))!.comment).toMatch(/"mask":"[0-9a-f]{16}"/);
      await e.drainPool();
      for (const x of [b.branch, plain.branch]) await e.down({ branch: x }, { now: true });
    } finally {
      await e.close();
    }
    await t.run((e) => e.dropTemplates()).catch(() => {});
  }, 120_000);

  it('rules without a source: the empty template is built once and cloned (nothing to mask)', async () => {
    const t = testProject({ toml: RULES_TOML });
    dirs.push(t.config.projectDir);
    const a = await t.run((e) => e.ensure({ execId: `a${rand()}` }));
    const oid = (await sql(`SELECT oid FROM pg_database WHERE datname = $1`, [t.template]))[0].oid;
    const b = await t.run((e) => e.ensure({ execId: `b${rand()}` }));
    expect((await sql(`SELECT oid FROM pg_database WHERE datname = $1`, [t.template]))[0].oid).toBe(oid);
    for (const x of [a.branch, b.branch]) await t.run((e) => e.down({ branch: x }, { now: true }));
    await t.run((e) => e.dropTemplates()).catch(() => {});
  }, 60_000);

  it('an unknown strategy, a malformed key and a one-sided foreign key are errors that name them', async () => {
    const p = makeProject({ toml: '[mask]\n"public.customers.email" = "scramble"\n"customers.email" = "email"\n' });
    dirs.push(p.dir);
    expect(() => loadConfig({ cwd: p.cwd })).toThrow(
      /mask\.public\.customers\.email: unknown strategy "scramble"[\s\S]*mask\.customers\.email: a key must name one column/,
    );
    const one = project(
      `mask_copy_${rand()}`,
      RULES_TOML.replace('"public.orders.customer_email" = "email"', '"public.orders.customer_email" = "hash"'),
    );
    const err = await one
      .run((e) => e.importSource({ input: input(), into: one.config.source!, progress: quiet }))
      .catch((x: unknown) => x as Error);
    expect((err as Error).message).toMatch(
      /"public\.orders\.customer_email": references public\.customers\.email \(foreign key orders_customer_email_fkey\): give both the same strategy/,
    );
  }, 60_000);
});

describe.concurrent('masking: crash windows', () => {
  // Each: the process "dies" before the statement; then no database of the project is a finished source copy,
  // template or branch with an original value, and the next run recovers to a masked copy.
  const importWindows: [string, RegExp][] = [
    ['import: before the UPDATE of the table a view uses', /^UPDATE "public"\."customers" SET/],
    ['import: before the rewrite', /^ALTER TABLE "public"\."orders" ALTER COLUMN/],
    ['import: before the foreign key is re-checked', /ADD CONSTRAINT "orders_customer_email_fkey"/],
    ['import: before the masking COMMIT', /^COMMIT/],
    ['import: after COMMIT, before VACUUM FULL drops the old row versions', /^VACUUM FULL/],
    // The check reads over two connections, the first one once it has analyzed the masked tables (decision 540).
    ['import: while the check reads, before the masked tables are analyzed again', /^ANALYZE/],
    ['import: before the check reads a relation (either connection)', /^SELECT count\(\*\)::float8 AS rows/],
    ['import: after masking, before the finished stamp', /^COMMENT ON DATABASE "pgx_src_\w+" IS 'pgx:source:/],
  ];
  for (const [name, before] of importWindows) {
    it(
      name,
      async () => {
        const t = project(`mask_copy_${rand()}`);
        const faults = new Faults();
        const gate = faults.before.bind(faults);
        let armed = true;
        faults.before = async (text: string) => {
          if (
            armed &&
            before.test(text) &&
            (before.source !== '^COMMIT' || faults.statements.some((s) => /ALTER COLUMN/.test(s)))
          ) {
            armed = false;
            faults.crash(/./);
          }
          return gate(text);
        };
        const e = await t.open(faults);
        const r = await e
          .importSource({ input: input(), into: t.config.source!, progress: quiet })
          .catch((x: unknown) => x);
        expect(faults.crashed, `no statement matched ${before}`).toBe(true);
        expect((r as Error).message).toMatch(/injected crash|the process is gone/);
        await faults.settled();
        // Nothing usable: the source name is free, no template, and no copy stamped finished.
        expect(await dbRow(t.config.source!)).toBeUndefined();
        expect(await dbRow(t.template)).toBeUndefined();
        const finished = await sql(
          `SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE 'pgx:source:%' AND shobj_description(oid, 'pg_database') LIKE $1`,
          [`%"project":"${t.name}"%`],
        );
        expect(finished).toEqual([]);
        // The next import drops the leftover and masks.
        await t.run((e) => e.importSource({ input: input(), into: t.config.source!, progress: quiet }));
        expect(
          await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [t.config.source], 'pgx_registry'),
        ).toEqual([]);
        const b = await t.run((e) => e.ensure({ execId: `m${rand()}` }));
        expect(await originalsIn(b.branch)).toEqual(zeros);
        await t.run((e) => e.down({ branch: b.branch }, { now: true }));
        await expectNoOrphans(t);
        await t.run((e) => e.dropTemplates()).catch(() => {});
      },
      120_000,
    );
  }

  it('import: a table whose rewrite fails (the server answers) fails the import over both connections; nothing is kept', async () => {
    // Decision 540: the tables are rewritten over two connections, each in its own transaction. One fails while the
    // other may be rewriting (or UPDATEing customers): the import fails with that error, the copy is dropped, the next
    // import masks.
    const t = project(`mask_copy_${rand()}`);
    const faults = new Faults().fail(/^ALTER TABLE "public"\."orders" ALTER COLUMN/);
    const e = await t.open(faults);
    const r = await e
      .importSource({ input: input(), into: t.config.source!, progress: quiet })
      .catch((x: unknown) => x)
      .finally(() => e.close());
    expect((r as Error).message).toMatch(/injected failure of: ALTER TABLE "public"\."orders"/);
    expect(await dbRow(t.config.source!)).toBeUndefined();
    expect(
      await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [t.config.source], 'pgx_registry'),
    ).toEqual([]);
    expect(
      await sql(`SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') LIKE $1`, [
        `%"project":"${t.name}"%`,
      ]),
    ).toEqual([]);
    await t.run((e) => e.importSource({ input: input(), into: t.config.source!, progress: quiet }));
    const b = await t.run((e) => e.ensure({ execId: `m${rand()}` }));
    expect(await originalsIn(b.branch)).toEqual(zeros);
    await t.run((e) => e.down({ branch: b.branch }, { now: true }));
    await expectNoOrphans(t);
    await t.run((e) => e.dropTemplates()).catch(() => {});
  }, 120_000);

  it('sync: a crash while the new copy is masked leaves the old masked copy and template in place', async () => {
    const t = project(`mask_copy_${rand()}`);
    await t.run((e) => e.importSource({ input: input(), into: t.config.source!, progress: quiet }));
    await t.run((e) => e.refreshTemplate());
    const before = (await dbRow(t.config.source!))!.comment;
    const faults = new Faults();
    const gate = faults.before.bind(faults);
    let armed = true;
    faults.before = async (text: string) => {
      if (armed && /^ALTER TABLE "public"\."orders" ALTER COLUMN/.test(text)) {
        armed = false;
        faults.crash(/./);
      }
      return gate(text);
    };
    const e = await t.open(faults);
    await e.syncSource({ input: input(), progress: quiet }).catch(() => undefined);
    expect(faults.crashed).toBe(true);
    await faults.settled();
    expect((await dbRow(t.config.source!))!.comment).toBe(before);
    const b = await t.run((e) => e.ensure({ execId: `m${rand()}` }));
    expect(await originalsIn(b.branch)).toEqual(zeros);
    await t.run((e) => e.syncSource({ input: input(), progress: quiet }));
    expect(
      await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [t.config.source], 'pgx_registry'),
    ).toEqual([]);
    await t.run((e) => e.down({ branch: b.branch }, { now: true }));
    await expectNoOrphans(t);
    await t.run((e) => e.dropTemplates()).catch(() => {});
  }, 120_000);

  it("template build from the user's own database: a crash while masking leaves no template", async () => {
    const own = `mask_own_${rand()}`;
    await sql(`CREATE DATABASE ${own} TEMPLATE ${ORIGIN}`);
    const t = project(own);
    const faults = new Faults();
    const gate = faults.before.bind(faults);
    let armed = true;
    faults.before = async (text: string) => {
      if (armed && /^ALTER TABLE "public"\."orders" ALTER COLUMN/.test(text)) {
        armed = false;
        faults.crash(/./);
      }
      return gate(text);
    };
    const e = await t.open(faults);
    const id = `m${rand()}`;
    await e.ensure({ execId: id }).catch(() => undefined);
    expect(faults.crashed).toBe(true);
    await faults.settled();
    expect(await dbRow(t.template)).toBeUndefined();
    const branches = await sql(
      `SELECT name FROM pgx_branch WHERE project = $1 AND state = 'active'`,
      [t.name],
      'pgx_registry',
    );
    expect(branches).toEqual([]);
    // The same exec again: its half-made record is taken over, the template built (masked) and the branch cloned.
    const b = await t.run((e) => e.ensure({ execId: id }));
    expect(await originalsIn(b.branch)).toEqual(zeros);
    expect(await checksum(own)).toBe(sum);
    await t.run((e) => e.down({ branch: b.branch }, { now: true }));
    await expectNoOrphans(t);
    await t.run((e) => e.dropTemplates()).catch(() => {});
  }, 120_000);
});
