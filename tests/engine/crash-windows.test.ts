// Every crash window of ensure, retire, drop, the template build and refresh, reached in-process by the fault gate
// (tests/helpers/faults.ts) against the real server: the process "dies" between two steps, then the next call must
// recover, leaving nothing orphaned and adopting nothing that is not pgx's.
import { beforeAll, describe, expect, it } from 'vitest';
import { InjectedFault, Faults } from '../helpers/faults.js';
import { crashDuring, databasesLike, dbRow, expectNoOrphans, registryRows, testProject } from '../helpers/engine.js';
import { sql } from '../helpers/pgx.js';

const q = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Tests run concurrently: each has its own project, or its own host label in a shared project (fork()), so no test
// sees another's branches.
describe.concurrent('ensure: crash windows', () => {
  // One project (so one template, built once) for the branch's own windows; each test its own host label.
  const base = testProject();
  beforeAll(() => base.run((e) => e.ensure({ execId: 'warm' })));
  const windows: [string, RegExp][] = [
    ['after the record is claimed, before CREATE DATABASE', /^CREATE DATABASE/],
    ['between CREATE DATABASE and its stamp', /^COMMENT ON DATABASE/],
    ['between the stamp and the guards', /^ALTER DATABASE .* SET /],
    ['between the guards and the record going active', /^\s*UPDATE pgx_branch SET state = 'active'/],
  ];
  for (const [name, before] of windows) {
    it(name, async () => {
      const t = base.fork();
      const id = 'w';
      await crashDuring(t, before, (e) => e.ensure({ execId: id }));
      const r = await t.run((e) => e.ensure({ execId: id }));
      expect(r.branch).toBe(`exec_${t.host}_${id}`);
      expect(r.method).toBe('clone');
      expect((await dbRow(r.branch))!.comment).toBe(`pgx:branch:${r.record.identity_key}:${r.record.nonce}`);
      await expectNoOrphans(t);
    });
  }

  it('a database with a foreign comment under a creating record is refused, not adopted', async () => {
    const t = base.fork();
    await crashDuring(t, /^CREATE DATABASE "pgx_new_/, (e) => e.ensure({ execId: 'f' }));
    const name = `exec_${t.host}_f`;
    await sql(`CREATE DATABASE ${name}`);
    await sql(`COMMENT ON DATABASE ${name} IS 'someone else''s'`);
    const before = await dbRow(name);
    await expect(t.run((e) => e.ensure({ execId: 'f' }))).rejects.toMatchObject({ code: 'NOT_PGX_DATABASE' });
    expect(await dbRow(name)).toEqual(before);
    await sql(`DROP DATABASE ${name}`);
    await t.run((e) => e.ensure({ execId: 'f' })); // the name is free again: the creation completes
    await expectNoOrphans(t);
  });
});

describe.concurrent('retire and drop: crash windows', () => {
  const base = testProject();
  beforeAll(() => base.run((e) => e.ensure({ execId: 'warm' })));
  it('retire cut after the record, before refusing connections: the branch is retiring and revives', async () => {
    const t = base.fork();
    const up = await t.run((e) => e.ensure({ execId: 'r' }));
    await crashDuring(t, /ALLOW_CONNECTIONS false/, (e) => e.retire({ id: 'r' }));
    expect((await registryRows(t.name)).find((r) => r.name === up.branch)).toMatchObject({ state: 'retiring' });
    expect((await dbRow(up.branch))!.datallowconn).toBe(true);
    const again = await t.run((e) => e.ensure({ execId: 'r' }));
    expect(again).toMatchObject({ branch: up.branch, method: 'revive' });
    await expectNoOrphans(t, { allowRetiring: true });
  });

  it('retire cut before terminating backends: a second retire finishes it', async () => {
    const t = base.fork();
    const up = await t.run((e) => e.ensure({ execId: 'r2' }));
    await crashDuring(t, /pg_terminate_backend/, (e) => e.retire({ id: 'r2' }));
    expect((await dbRow(up.branch))!.datallowconn).toBe(false);
    const [r] = await t.run((e) => e.retire({ id: 'r2' }));
    expect(r).toMatchObject({ name: up.branch, action: 'already-retiring' });
    await expectNoOrphans(t, { allowRetiring: true });
  });

  it('drop cut before DROP DATABASE: the next down --now drops it', async () => {
    const t = base.fork();
    const up = await t.run((e) => e.ensure({ execId: 'd' }));
    await crashDuring(t, /^DROP DATABASE/, (e) => e.down({ id: 'd' }, { now: true }));
    expect(await dbRow(up.branch)).toBeDefined();
    const [r] = await t.run((e) => e.down({ id: 'd' }, { now: true }));
    expect(r).toMatchObject({ name: up.branch, action: 'dropped' });
    expect(await dbRow(up.branch)).toBeUndefined();
    await expectNoOrphans(t, { allowRetiring: true });
  });

  it('drop cut between DROP DATABASE and the record delete: the record is forgotten next time', async () => {
    const t = base.fork();
    const up = await t.run((e) => e.ensure({ execId: 'd2' }));
    await crashDuring(t, /^DELETE FROM pgx_branch/, (e) => e.down({ id: 'd2' }, { now: true }));
    expect(await dbRow(up.branch)).toBeUndefined();
    const [r] = await t.run((e) => e.down({ id: 'd2' }, { now: true }));
    expect(r).toMatchObject({ name: up.branch, action: 'forgotten' });
    expect((await registryRows(t.name)).map((r) => r.name)).not.toContain(up.branch);
    await expectNoOrphans(t, { allowRetiring: true });
  });
});

describe.concurrent('template build and refresh: crash windows', () => {
  it('build cut after it is recorded, before its CREATE DATABASE: the next build forgets the record', async () => {
    const t = testProject();
    await crashDuring(t, new RegExp(`^CREATE DATABASE "${q(t.template)}_b`), (e) => e.ensure({ execId: 'b' }));
    expect(await registryRows(t.name)).toMatchObject([{ state: 'creating' }]);
    await t.run((e) => e.ensure({ execId: 'b' }));
    await expectNoOrphans(t);
  });

  it('build cut between its CREATE DATABASE and the building stamp: the unstamped build is dropped (it is recorded)', async () => {
    const t = testProject();
    await crashDuring(t, /^COMMENT ON DATABASE .*_b[a-z0-9]{6}" IS 'pgx:template-building/, (e) =>
      e.ensure({ execId: 'b' }),
    );
    const [leftover] = await databasesLike(`${t.template}_b`);
    expect((await dbRow(leftover!))!.comment).toBeNull();
    // A stranger's unstamped database named like a build, and another project's build, are never touched.
    const stranger = `${t.template}_bzzzzzz`;
    const other = `${t.template}_bother1`;
    await sql(`CREATE DATABASE ${stranger}`);
    await sql(`CREATE DATABASE ${other}`);
    await sql(`COMMENT ON DATABASE ${other} IS 'pgx:template-building:{"project":"someone-else","started_at":"x"}'`);
    const before = [await dbRow(stranger), await dbRow(other)];
    await t.run((e) => e.ensure({ execId: 'b' }));
    expect(await dbRow(leftover!)).toBeUndefined();
    expect([await dbRow(stranger), await dbRow(other)]).toEqual(before);
    await sql(`DROP DATABASE ${stranger}`);
    await sql(`DROP DATABASE ${other}`);
    await expectNoOrphans(t);
  });

  it('build cut before it is renamed into place: the finished leftover is dropped, the name was never taken', async () => {
    const t = testProject();
    await crashDuring(t, new RegExp(`RENAME TO "${q(t.template)}"`), (e) => e.ensure({ execId: 'b' }));
    expect(await dbRow(t.template)).toBeUndefined();
    expect(await databasesLike(`${t.template}_b`)).toHaveLength(1);
    await t.run((e) => e.ensure({ execId: 'b' }));
    expect((await dbRow(t.template))!.comment).toMatch(/^pgx:template:/);
    await expectNoOrphans(t);
  });

  it('refresh cut between renaming the old template aside and the new one in: the next ensure rebuilds and clears both', async () => {
    const t = testProject();
    await t.run((e) => e.ensure({ execId: 'one' }));
    await crashDuring(t, new RegExp(`_b[a-z0-9]{6}" RENAME TO "${q(t.template)}"`), (e) => e.refreshTemplate());
    expect(await dbRow(t.template)).toBeUndefined();
    expect(
      (await databasesLike(`${t.template}_`)).map((n) => n.slice(t.template.length, t.template.length + 2)).sort(),
    ).toEqual(['_b', '_o']);
    await t.run((e) => e.ensure({ execId: 'two' }));
    expect((await dbRow(t.template))!.comment).toMatch(/^pgx:template:/);
    await expectNoOrphans(t);
  });

  it('refresh cut after the swap, before the old template is dropped: the next refresh drops the aside', async () => {
    const t = testProject();
    await t.run((e) => e.ensure({ execId: 'one' }));
    await crashDuring(t, /^DROP DATABASE .*_o[a-z0-9]{6}"/, (e) => e.refreshTemplate());
    expect(await databasesLike(`${t.template}_o`)).toHaveLength(1);
    await t.run((e) => e.refreshTemplate());
    await expectNoOrphans(t);
  });

  it('refresh rollback: when the new build cannot take the name, the old template is put back and the build dropped', async () => {
    const t = testProject();
    await t.run((e) => e.ensure({ execId: 'one' }));
    const before = await dbRow(t.template);
    const faults = new Faults().fail(new RegExp(`_b[a-z0-9]{6}" RENAME TO "${q(t.template)}"`));
    const e = await t.open(faults);
    try {
      await expect(e.refreshTemplate()).rejects.toBeInstanceOf(InjectedFault);
    } finally {
      await e.close();
    }
    expect(await dbRow(t.template)).toEqual(before); // the same database, back under its name
    await expectNoOrphans(t);
    expect((await t.run((x) => x.ensure({ execId: 'two' }))).method).toBe('clone');
  });
});
