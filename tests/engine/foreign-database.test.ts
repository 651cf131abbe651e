// Defect 2 and the "replaced" half of defect 11: pgx never adopts, stamps, hands out or drops a database it did not
// create. A branch is created as `pgx_new_<nonce>` (the nonce recorded first), stamped with identity and nonce, and
// renamed into place with its record going active; so a process killed at any point, followed by someone creating a
// database under the branch name (with data), leaves that database exactly as its owner made it, whatever ensure,
// retire, down, gc or forget then do.
import { beforeAll, describe, expect, it } from 'vitest';
import { Faults } from '../helpers/faults.js';
import {
  crashDuring,
  dbRow,
  expectNoOrphans,
  registryRows,
  testProject,
  untilIdentityUnlocked,
} from '../helpers/engine.js';
import { sql } from '../helpers/pgx.js';

/** Someone else's database under `name`, with a row of data and (optionally) a stamp copied from elsewhere. */
async function plantForeign(name: string, comment: string | null): Promise<() => Promise<void>> {
  await sql(`CREATE DATABASE ${name}`);
  await sql(`CREATE TABLE theirs (v text); INSERT INTO theirs VALUES ('keep me')`, [], name);
  if (comment !== null) await sql(`COMMENT ON DATABASE ${name} IS '${comment}'`);
  const before = await dbRow(name);
  return async () => {
    expect(await dbRow(name)).toEqual(before); // same oid, same comment, same connection setting
    expect(await sql(`SELECT v FROM theirs`, [], name)).toEqual([{ v: 'keep me' }]);
  };
}

const expire = (name: string) =>
  sql(`UPDATE pgx_branch SET deadline = now() - interval '1 second' WHERE name = $1`, [name], 'pgx_registry');
const creations = async (nonce: string | null) =>
  nonce ? (await sql(`SELECT datname FROM pg_database WHERE datname = $1`, [`pgx_new_${nonce}`])).length : 0;

describe.concurrent('a foreign database appears under the branch name after a crash: never adopted or dropped', () => {
  const base = testProject();
  beforeAll(() => base.run((e) => e.ensure({ execId: 'warm' })));
  const windows: [string, RegExp][] = [
    ['after the record and its nonce, before CREATE DATABASE', /^CREATE DATABASE "pgx_new_/],
    ['between CREATE DATABASE and the stamp', /^COMMENT ON DATABASE "pgx_new_/],
    ['between the stamp and the guards', /^ALTER DATABASE "pgx_new_.* SET /],
    ['between the guards and the rename', /^BEGIN/],
    ['after the rename, before its transaction commits', /^COMMIT/],
  ];
  for (const [i, [label, before]] of windows.entries()) {
    it(label, async () => {
      const t = base.fork();
      const f = `f${i}`; // selectors by --id span the project's hosts: each test its own id
      await crashDuring(t, before, (e) => e.ensure({ execId: f }));
      const name = `exec_${t.host}_${f}`;
      const [rec] = await registryRows(t.name).then((rs) => rs.filter((r) => r.host === t.host));
      expect(rec).toMatchObject({ name, state: 'creating' });
      const nonce = (
        await sql<{ nonce: string }>(`SELECT nonce FROM pgx_branch WHERE name = $1`, [name], 'pgx_registry')
      )[0]!.nonce;
      // Half the strangers carry a stamp copied from pgx's own kind (the identity is public in every stamp).
      const key = (
        await sql<{ identity_key: string }>(
          `SELECT identity_key FROM pgx_branch WHERE name = $1`,
          [name],
          'pgx_registry',
        )
      )[0]!.identity_key;
      const unchanged = await plantForeign(name, i % 2 ? `pgx:branch:${key}` : null);

      await expect(t.run((e) => e.ensure({ execId: f }))).rejects.toMatchObject({
        code: 'NOT_PGX_DATABASE',
        hint: expect.stringContaining(`pgx agent forget --id ${f}`),
      });
      await unchanged();
      expect(await t.run((e) => e.retire({ id: f }))).toEqual([expect.objectContaining({ action: 'skipped' })]); // a creation: gc's
      await expire(name);
      // gc is server-wide: a concurrent test's gc may be the one that forgets this record (this gc then passes it
      // by, while the other is still at it): what follows is read once that one has let the record go.
      const g = await t.run((e) => e.gc());
      await untilIdentityUnlocked(key);
      expect(g.errors.filter((x) => x.name === name)).toEqual([]);
      expect(g.dropped.filter((d) => d.name === name && d.action !== 'forgotten')).toEqual([]);
      expect((await registryRows(t.name)).filter((r) => r.name === name)).toEqual([]); // the record only
      await unchanged();
      expect(await creations(nonce)).toBe(0); // the creation's own database is gone with it
      // The name is taken: the next ensure makes the branch under the hash name.
      const r = await t.run((e) => e.ensure({ execId: f }));
      expect(r.branch).not.toBe(name);
      expect(r.method).toBe('clone');
      await t.run((e) => e.down({ id: f }, { now: true }));
      await unchanged();
      await sql(`DROP DATABASE ${name}`);
      await expectNoOrphans(t);
    });
  }

  it('a template build killed inside the first ensure, then a stranger under the name: refused, kept', async () => {
    const t = testProject();
    await crashDuring(t, /^CREATE DATABASE "pgx_tpl_/, (e) => e.ensure({ execId: 'b' }));
    const name = `exec_${t.host}_b`;
    const unchanged = await plantForeign(name, null);
    await expect(t.run((e) => e.ensure({ execId: 'b' }))).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE' });
    expect(await t.run((e) => e.down({ id: 'b' }, { now: true }))).toEqual([
      expect.objectContaining({ action: 'forgotten' }),
    ]);
    await unchanged();
    await sql(`DROP DATABASE ${name}`);
    await expectNoOrphans(t, { template: false });
  });

  it('a stranger that takes the name while the clone runs: the rename fails, the creation is dropped, nothing adopted', async () => {
    const t = base.fork();
    const name = `exec_${t.host}_race`;
    let unchanged: (() => Promise<void>) | undefined;
    const faults = new Faults();
    const gate = {
      opened: faults.opened.bind(faults),
      before: async (text: string) => {
        if (/^COMMENT ON DATABASE "pgx_new_/.test(text) && !unchanged) unchanged = await plantForeign(name, null);
      },
    };
    const e = await t.open(gate);
    try {
      await expect(e.ensure({ execId: 'race' })).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE' });
    } finally {
      await e.close();
    }
    await unchanged!();
    const nonce = (
      await sql<{ nonce: string }>(`SELECT nonce FROM pgx_branch WHERE name = $1`, [name], 'pgx_registry')
    )[0]!.nonce;
    expect(await creations(nonce)).toBe(0);
    await sql(`DROP DATABASE ${name}`);
    expect((await t.run((x) => x.ensure({ execId: 'race' }))).branch).toBe(name);
    await expectNoOrphans(t);
  });
});

describe.concurrent("a branch whose database was replaced by someone else's", () => {
  const base = testProject();
  beforeAll(() => base.run((e) => e.ensure({ execId: 'warm' })));
  for (const [i, how] of (
    ['no comment', 'the identity copied without the nonce', 'a wrong nonce'] as const
  ).entries()) {
    it(`(${how}): refused by ensure, reported by retire/down/gc, forgotten by forget only`, async () => {
      const t = base.fork();
      const x = `x${i}`;
      const up = await t.run((e) => e.ensure({ execId: x }));
      const key = up.record.identity_key;
      await sql(`DROP DATABASE ${up.branch}`);
      const unchanged = await plantForeign(
        up.branch,
        how === 'no comment'
          ? null
          : how === 'a wrong nonce'
            ? `pgx:branch:${key}:aaaaaaaaaaaaaaaa`
            : `pgx:branch:${key}`,
      );
      await expect(t.run((e) => e.ensure({ execId: x }))).rejects.toMatchObject({
        code: 'NOT_PGX_DATABASE',
        hint: expect.stringContaining('pgx agent forget'),
      });
      expect(await t.run((e) => e.retire({ id: x }))).toEqual([
        expect.objectContaining({ action: 'foreign', fix: `pgx agent forget --branch ${up.branch}` }),
      ]);
      expect(await t.run((e) => e.down({ id: x }, { now: true }))).toEqual([
        expect.objectContaining({ action: 'foreign' }),
      ]);
      await expire(up.branch);
      // gc is server-wide: a concurrent test's gc may hold this record's lock for a moment (then it is skipped).
      let reported = false;
      for (let i = 0; i < 10 && !reported; i++) {
        await untilIdentityUnlocked(key); // each try starts with the record free
        const g = await t.run((e) => e.gc());
        expect(g.errors.filter((x) => x.name === up.branch)).toEqual([]);
        expect(g.dropped.filter((d) => d.name === up.branch)).toEqual([]);
        reported = g.foreign.some((d) => d.name === up.branch);
      }
      expect(reported).toBe(true);
      await unchanged();
      expect(await t.run((e) => e.forget({ id: x }))).toEqual([expect.objectContaining({ action: 'forgotten' })]);
      await unchanged();
      const again = await t.run((e) => e.ensure({ execId: x }));
      expect(again.branch).not.toBe(up.branch);
      await sql(`DROP DATABASE ${up.branch}`);
      await expectNoOrphans(t);
    });
  }

  it("forget refuses a record whose database is pgx's own (that is down's)", async () => {
    const t = base.fork();
    const up = await t.run((e) => e.ensure({ execId: 'own' }));
    await expect(t.run((e) => e.forget({ id: 'own' }))).rejects.toMatchObject({ code: 'REFUSED' });
    expect(await dbRow(up.branch)).toBeDefined();
    await expectNoOrphans(t);
  });
});
