// Every crash window of `pgx source import` and `pgx source sync`, reached in-process by the fault gate
// (tests/helpers/faults.ts) against the real server: the process "dies" before one statement, and then (1) the
// source's name holds pgx's old copy or its new one, never nothing or a stranger, and (2) the next sync recovers,
// leaving no copy behind, and the next branch carries the origin's migration.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyInput } from '../../src/project/source-input.js';
import { Faults } from '../helpers/faults.js';
import { crashDuring, dbRow, expectNoOrphans, testProject, type TestProject } from '../helpers/engine.js';
import { pgInfo, sql } from '../helpers/pgx.js';

const rand = () => randomBytes(4).toString('hex');
const made: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const d of made) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A test project whose directory is removed after the file. */
function project(source: string): TestProject {
  const t = testProject({ source });
  dirs.push(t.config.projectDir);
  return t;
}

const url = (db: string) =>
  `postgresql://${pgInfo().user}:${encodeURIComponent(pgInfo().password)}@${pgInfo().host}:${pgInfo().port}/${db}`;
const quiet = () => {};

/** An origin with a table, a project whose source is a copy of it (imported), and the origin then migrated. */
async function imported(): Promise<{
  t: TestProject;
  origin: string;
  copy: string;
  input: ReturnType<typeof classifyInput>;
}> {
  const origin = `origin_${rand()}`;
  const copy = `copy_${rand()}`;
  made.push(origin, copy);
  await sql(`CREATE DATABASE ${origin}`);
  await sql(`CREATE TABLE orders (id int); INSERT INTO orders VALUES (1), (2);`, [], origin);
  const t = project(copy);
  const input = classifyInput(url(origin), process.cwd());
  await t.run((e) => e.importSource({ input, into: copy, progress: quiet }));
  await sql(`ALTER TABLE orders ADD COLUMN price int DEFAULT 7`, [], origin);
  return { t, origin, copy, input };
}

/** The source's name holds a copy pgx can prove is its own (stamp nonce = record nonce); returns that nonce. */
async function sourceIsOurs(copy: string): Promise<string> {
  const row = await dbRow(copy);
  expect(row, `${copy} is gone`).toBeDefined();
  const [rec] = await sql(`SELECT nonce FROM pgx_source WHERE database = $1`, [copy], 'pgx_registry');
  expect(row!.comment).toMatch(new RegExp(`^pgx:source:\\{.*"nonce":"${rec.nonce}"`));
  return rec.nonce;
}

const hasPrice = async (db: string) =>
  (
    await sql(
      `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'price'`,
      [],
      db,
    )
  )[0].n === 1;

/** After recovery: no copy recorded or left under a pgx_src_ name of this project, and a new branch has the migration. */
async function expectRecovered(t: TestProject, copy: string): Promise<void> {
  expect(await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [copy], 'pgx_registry')).toEqual([]);
  const strays = await sql(
    `SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_src\\_%' AND shobj_description(oid, 'pg_database') LIKE $1`,
    [`%"project":"${t.name}"%`],
  );
  expect(strays).toEqual([]);
  await sourceIsOurs(copy);
  expect(await hasPrice(copy)).toBe(true);
  const b = await t.run((e) => e.ensure({ execId: `after${rand()}` }));
  expect(await hasPrice(b.branch)).toBe(true);
  await expectNoOrphans(t);
}

describe.concurrent('source sync: crash windows', () => {
  const windows: [string, RegExp][] = [
    ['after the copy is recorded, before CREATE DATABASE', /^CREATE DATABASE "pgx_src_/],
    ['between CREATE DATABASE and the importing stamp', /^COMMENT ON DATABASE "pgx_src_\w+" IS 'pgx:source-importing:/],
    ['after the restore, before the finished stamp', /^COMMENT ON DATABASE "pgx_src_\w+" IS 'pgx:source:/],
    ['inside the swap, before the old copy is set aside', /^ALTER DATABASE "copy_\w+" RENAME TO "pgx_src_/],
    ['inside the swap, between the two renames', /^ALTER DATABASE "pgx_src_\w+" RENAME TO "copy_/],
    ['inside the swap, before COMMIT', /^COMMIT/],
    ['after the swap, before the old copy is dropped', /pg_terminate_backend/],
    ['after the old copy is dropped, before the template refresh', /^SELECT pg_advisory_lock/],
  ];
  for (const [name, before] of windows) {
    it(name, async () => {
      const { t, copy, input } = await imported();
      const oldNonce = await sourceIsOurs(copy);
      // After the swap the sync's steps are best effort (a failed old-copy drop or refresh is reported, not thrown),
      // so a crash there shows as a result that says so, or as the error.
      const faults = new Faults();
      let seen = 0;
      const gate = faults.before.bind(faults);
      // The refresh's lock is the fourth the sync takes (source lock, template lock for the swap, for the drop).
      const nth = before.source === '^SELECT pg_advisory_lock' ? 4 : 1;
      faults.before = async (text: string) => {
        if (before.test(text) && ++seen === nth) faults.crash(/./);
        return gate(text);
      };
      const e = await t.open(faults);
      const r = await e.syncSource({ input, progress: quiet }).catch((x: unknown) => x);
      expect(faults.crashed, `no statement matched ${before}`).toBe(true);
      const said = r instanceof Error ? r.message : `${(r as { template_error: string }).template_error}`;
      expect(said).toMatch(/injected crash|the process is gone/);
      await faults.settled();
      // Never nothing, never a stranger: the name holds the old copy or the new one, each provably pgx's.
      const nonce = await sourceIsOurs(copy);
      expect(await hasPrice(copy)).toBe(nonce !== oldNonce);
      const again = await t.run((e) => e.syncSource({ input, progress: quiet }));
      expect(again.template_error).toBeNull();
      await expectRecovered(t, copy);
    });
  }

  it('a stranger under a recorded copy name is left alone, and the record forgotten', async () => {
    const { t, copy, input } = await imported();
    await crashDuring(t, /^CREATE DATABASE "pgx_src_/, (e) => e.syncSource({ input, progress: quiet }));
    const [rec] = await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [copy], 'pgx_registry');
    made.push(rec.name);
    await sql(`CREATE DATABASE ${rec.name}`);
    await sql(`COMMENT ON DATABASE ${rec.name} IS 'someone else''s'`);
    await t.run((e) => e.syncSource({ input, progress: quiet }));
    expect((await dbRow(rec.name))?.comment).toBe("someone else's");
    await expectRecovered(t, copy);
  });

  it('a source pgx did not copy is refused, not replaced', async () => {
    const own = `own_${rand()}`;
    made.push(own);
    await sql(`CREATE DATABASE ${own}`);
    const before = await dbRow(own);
    const t = project(own);
    const origin = `origin_${rand()}`;
    made.push(origin);
    await sql(`CREATE DATABASE ${origin}`);
    await expect(
      t.run((e) => e.syncSource({ input: classifyInput(url(origin), process.cwd()), progress: quiet })),
    ).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE' });
    expect(await dbRow(own)).toEqual(before);
    // a copied stamp without the recorded nonce is no proof either
    await sql(
      `COMMENT ON DATABASE ${own} IS 'pgx:source:{"project":"${t.name}","nonce":"aaaaaaaaaaaaaaaa","imported_at":"x"}'`,
    );
    await expect(
      t.run((e) => e.syncSource({ input: classifyInput(url(origin), process.cwd()), progress: quiet })),
    ).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE' });
    expect((await dbRow(own))!.oid).toBe(before!.oid);
  });
});

describe.concurrent('source import: crash windows', () => {
  for (const [name, before] of [
    ['after the copy is recorded, before CREATE DATABASE', /^CREATE DATABASE "pgx_src_/],
    ['before the copy is renamed into place', /RENAME TO "copy_/],
  ] as const) {
    it(name, async () => {
      const origin = `origin_${rand()}`;
      const copy = `copy_${rand()}`;
      made.push(origin, copy);
      await sql(`CREATE DATABASE ${origin}`);
      await sql(`CREATE TABLE orders (id int, price int)`, [], origin);
      const t = project(copy);
      const input = classifyInput(url(origin), process.cwd());
      await crashDuring(t, before, (e) => e.importSource({ input, into: copy, progress: quiet }));
      expect(await dbRow(copy)).toBeUndefined(); // nothing under the name: the import never finished
      await t.run((e) => e.importSource({ input, into: copy, progress: quiet }));
      await expectRecovered(t, copy);
    });
  }
});

describe.concurrent('source sync: a session on the old copy at the switch', () => {
  /** A gate that opens a session on `db` just before the swap's first rename, and ends it after `holdMs` (or never). */
  function sessionAtSwap(db: string, holdMs: number | null): { gate: Faults; ended: () => Promise<void> } {
    const gate = new Faults();
    const before = gate.before.bind(gate);
    let holder: pg.Client | undefined;
    gate.before = async (text: string) => {
      if (!holder && /^ALTER DATABASE "copy_\w+" RENAME TO "pgx_src_/.test(text)) {
        const i = pgInfo();
        holder = new pg.Client({ host: i.host, port: i.port, user: i.user, password: i.password, database: db });
        await holder.connect();
        if (holdMs !== null) setTimeout(() => void holder!.end(), holdMs);
      }
      return before(text);
    };
    return { gate, ended: async () => void (await holder?.end().catch(() => {})) };
  }

  it('a session that leaves within the wait: the switch goes through once it is gone', async () => {
    const { t, copy, input } = await imported();
    const { gate, ended } = sessionAtSwap(copy, 400);
    const e = await t.open(gate);
    try {
      const r = await e.syncSource({ input, progress: quiet });
      expect(r.old_copy_dropped).toMatch(/^pgx_src_/);
      // (the rename itself waited for the session: PostgreSQL gives other sessions 5 s to leave a database it renames)
    } finally {
      await e.close();
      await ended();
    }
    await expectRecovered(t, copy);
  });

  it('a session that stays: refused, the old copy kept as it was, the new one dropped', async () => {
    const { t, copy, input } = await imported();
    const before = await dbRow(copy);
    const { gate, ended } = sessionAtSwap(copy, null);
    const e = await t.open(gate);
    try {
      await expect(e.syncSource({ input, progress: quiet })).rejects.toMatchObject({
        code: 'REFUSED',
        message: expect.stringContaining(`connected to "${copy}"`),
      });
    } finally {
      await e.close();
      await ended();
    }
    expect(await dbRow(copy)).toEqual(before);
    expect(await hasPrice(copy)).toBe(false);
    expect(await sql(`SELECT name FROM pgx_source_copy WHERE database = $1`, [copy], 'pgx_registry')).toEqual([]);
    expect(
      await sql(
        `SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_src\\_%' AND shobj_description(oid, 'pg_database') LIKE $1`,
        [`%"project":"${t.name}"%`],
      ),
    ).toEqual([]);
  }, 30_000);
});
