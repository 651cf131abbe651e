// Branch roles (least privilege) in-process against the real server: what a branch's credentials reach (the
// isolation matrix of issue #12, per-branch column, and the admin column for contrast), ownership inside the branch
// only, retire / revive / drop of the role, a role left owning something elsewhere, and the cost of the transfer.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ConnParams } from '../../src/server/conn-params.js';
import { crashDuring, expectNoOrphans, makeSource, testProject } from '../helpers/engine.js';
import { pgInfo, sql } from '../helpers/pgx.js';

function clientOf(c: ConnParams, database = c.database): pg.Client {
  const cl = new pg.Client({ host: c.host, port: c.port, user: c.user, password: c.password, database });
  cl.on('error', () => {});
  return cl;
}

/** Runs `text` as the branch's credentials on `database`; the SQLSTATE of the failure, or 'ok'. */
async function attempt(c: ConnParams, text: string, database = c.database): Promise<string> {
  const cl = clientOf(c, database);
  try {
    await cl.connect();
    await cl.query(text);
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? (e as Error).message;
  } finally {
    await cl.end().catch(() => {});
  }
}

async function roleRow(role: string) {
  return (
    await sql(
      `SELECT rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = $1`,
      [role],
    )
  )[0];
}

/** A source with one of each object kind a migration alters, in a schema of its own too. */
async function richSource(): Promise<string> {
  const source = await makeSource();
  await sql(
    `CREATE SCHEMA app;
     CREATE TYPE app.mood AS ENUM ('ok', 'sad');
     CREATE DOMAIN posint AS int CHECK (VALUE > 0);
     CREATE TABLE app.events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, m app.mood, n posint);
     CREATE SEQUENCE app.free_seq;
     CREATE VIEW app.v AS SELECT id FROM app.events;
     CREATE MATERIALIZED VIEW app.mv AS SELECT count(*) FROM users;
     CREATE FUNCTION app.f(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1';
     CREATE TABLE parted (k int) PARTITION BY RANGE (k);
     CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10);
     INSERT INTO users (email) VALUES ('secret@x');`,
    [],
    source,
  );
  return source;
}

describe.concurrent('branch roles (in-process)', () => {
  it('per-branch: the branch role reaches its branch and nothing else (the isolation matrix)', async () => {
    const source = await richSource();
    const t = testProject({ source });
    const [a, b] = await t.run(async (e) => [await e.ensure({ execId: 'a' }), await e.ensure({ execId: 'b' })]);
    const c = a.conn;
    const admin = pgInfo();
    // The credentials are the role's, never the admin's.
    expect(a.record.role).toMatch(/^pgx_role_[a-z0-9]{14}$/);
    expect(c.user).toBe(a.record.role);
    expect(c.password).toBeTruthy();
    expect(c.password).not.toBe(admin.password);
    expect(b.record.role).not.toBe(a.record.role);
    expect(await roleRow(a.record.role!)).toEqual({
      rolcanlogin: true,
      rolsuper: false,
      rolcreatedb: false,
      rolcreaterole: false,
      rolreplication: false,
      rolbypassrls: false,
      comment: 'pgx:role',
    });

    // Its own branch: reads, writes, and a migration (ALTER TABLE, CREATE INDEX, DROP TABLE, altering every kind).
    expect(await attempt(c, `SELECT count(*) FROM users; INSERT INTO users (email) VALUES ('mine@x')`)).toBe('ok');
    expect(
      await attempt(
        c,
        `ALTER TABLE users ADD COLUMN admin bool; CREATE INDEX users_email ON users (email); ALTER TYPE app.mood ADD VALUE 'glad';
         ALTER DOMAIN posint SET NOT NULL; INSERT INTO app.events (m, n) VALUES ('ok', 1); ALTER SEQUENCE app.free_seq RESTART 5;
         CREATE OR REPLACE VIEW app.v AS SELECT id, m FROM app.events; REFRESH MATERIALIZED VIEW app.mv; DROP FUNCTION app.f(int);
         CREATE INDEX ON parted_1 (k); ALTER TABLE parted ADD COLUMN extra int; ALTER SCHEMA app RENAME TO app2; CREATE TABLE app2.newt (x int); DROP TABLE parted CASCADE;`,
      ),
    ).toBe('ok');
    expect(await attempt(c, 'DROP TABLE users CASCADE')).toBe('ok');

    // The source: it may connect (PUBLIC keeps CONNECT there: pgx never alters the source) but reads nothing.
    expect(await attempt(c, 'SELECT email FROM users', source)).toBe('42501');
    expect(await attempt(c, `INSERT INTO users (email) VALUES ('x')`, source)).toBe('42501');
    // Another agent's branch, the registry, the template: no CONNECT.
    expect(await attempt(c, 'SELECT 1', b.branch)).toBe('42501');
    expect(await attempt(c, 'SELECT 1', 'pgx_registry')).toBe('42501');
    expect(await attempt(c, 'SELECT 1', t.template)).not.toBe('ok');
    // Superuser power: none.
    expect(await attempt(c, `COPY (SELECT 1) TO PROGRAM 'id'`)).toBe('42501');
    expect(await attempt(c, `ALTER SYSTEM SET work_mem = '8MB'`)).toBe('42501');
    expect(await attempt(c, `DROP DATABASE ${b.branch}`)).toBe('42501');
    expect(await attempt(c, `DROP DATABASE ${source}`)).toBe('42501');
    expect(await attempt(c, `CREATE ROLE x`)).toBe('42501');
    expect(await attempt(c, `CREATE DATABASE x`)).toBe('42501');
    // Its own branch's stamp and settings: not its to change (it does not own the database).
    expect(await attempt(c, `COMMENT ON DATABASE ${a.branch} IS 'x'`)).toBe('42501');
    expect(await attempt(c, `DROP DATABASE ${a.branch}`)).not.toBe('ok');

    // The source is intact, and nothing shared changed owner (the REASSIGN OWNED trap).
    expect((await sql('SELECT count(*)::int AS n FROM users', [], source))[0].n).toBe(3);
    const owners = await sql(
      `SELECT datname, pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname IN ($1, $2, 'pgx_registry', $3, $4)`,
      [source, t.template, a.branch, b.branch],
    );
    for (const o of owners) expect(o.owner).toBe(admin.user);
    const sourceObjects = await sql(
      `SELECT count(*)::int AS n FROM pg_class WHERE oid >= 16384 AND relowner <> (SELECT oid FROM pg_roles WHERE rolname = $1)`,
      [admin.user],
      source,
    );
    expect(sourceObjects[0].n).toBe(0);
  });

  it("per-branch: every object of the branch is the role's; the branch's grants are the role's only", async () => {
    const source = await richSource();
    const t = testProject({ source });
    const a = await t.run((e) => e.ensure({ execId: 'own' }));
    const role = a.record.role!;
    const notOwned = await sql(
      `SELECT c.relname FROM pg_class c WHERE c.oid >= 16384 AND c.relkind IN ('r','p','v','m','S','i','I') AND pg_get_userbyid(c.relowner) <> $1
       UNION ALL SELECT n.nspname FROM pg_namespace n WHERE n.nspname IN ('public', 'app') AND pg_get_userbyid(n.nspowner) <> $1
       UNION ALL SELECT p.proname FROM pg_proc p WHERE p.oid >= 16384 AND pg_get_userbyid(p.proowner) <> $1
       UNION ALL SELECT t.typname FROM pg_type t WHERE t.oid >= 16384 AND t.typtype IN ('e','d') AND pg_get_userbyid(t.typowner) <> $1`,
      [role],
      a.branch,
    );
    expect(notOwned).toEqual([]);
    const acl = (await sql(`SELECT datacl::text AS acl FROM pg_database WHERE datname = $1`, [a.branch]))[0]
      .acl as string;
    expect(acl).toContain(`${role}=CTc/`);
    expect(acl).not.toMatch(/(^|[{,])=/); // no PUBLIC entry
    const reg = (await sql(`SELECT datacl::text AS acl FROM pg_database WHERE datname = 'pgx_registry'`))[0]
      .acl as string;
    expect(reg).not.toMatch(/(^|[{,])=/);
  });

  it('retire: the role cannot log in and its sessions end everywhere (the source too); revive and drop', async () => {
    const source = await makeSource();
    const t = testProject({ source });
    const a = await t.run((e) => e.ensure({ execId: 'bg' }));
    const role = a.record.role!;
    // A "background job": a session of the role on the source, left open.
    const bg = clientOf(a.conn, source);
    await bg.connect();
    const ended = new Promise<void>((res) => bg.on('end', () => res()));
    const [r] = await t.run((e) => e.retire({ id: 'bg' }));
    expect(r).toMatchObject({ action: 'retired', role, backends_remaining: 0 });
    expect(r!.backends_terminated).toBeGreaterThanOrEqual(1);
    await ended;
    expect((await roleRow(role)).rolcanlogin).toBe(false);
    expect(await attempt(a.conn, 'SELECT 1', source)).toBe('28000'); // role is not permitted to log in

    const revived = await t.run((e) => e.ensure({ execId: 'bg' }));
    expect(revived.method).toBe('revive');
    expect(revived.conn.user).toBe(role);
    expect(await attempt(revived.conn, 'SELECT count(*) FROM users')).toBe('ok');

    const [d] = await t.run((e) => e.down({ id: 'bg' }, { now: true }));
    expect(d).toMatchObject({ action: 'dropped', role, role_action: 'dropped' });
    expect(await roleRow(role)).toBeUndefined();
  });

  it('drop: a role still owning something in another database is left NOLOGIN and reported', async () => {
    const t = testProject();
    const a = await t.run((e) => e.ensure({ execId: 'leak' }));
    const role = a.record.role!;
    // A database whose public schema anyone may create in (PostgreSQL ≤ 14's default, or a user's grant).
    const other = `open_${Math.random().toString(36).slice(2, 8)}`;
    await sql(`CREATE DATABASE ${other}`);
    await sql('GRANT CREATE ON SCHEMA public TO PUBLIC', [], other);
    expect(await attempt(a.conn, 'CREATE TABLE planted (x int)', other)).toBe('ok');
    const [d] = await t.run((e) => e.down({ id: 'leak' }, { now: true }));
    expect(d).toMatchObject({ action: 'dropped', role, role_action: 'left' });
    expect(d!.role_note).toContain(other);
    expect(await roleRow(role)).toMatchObject({ rolcanlogin: false, comment: 'pgx:role' });
    // The leftover is what doctor reports: stamped, and no record names it.
    expect((await sql(`SELECT count(*)::int AS n FROM pgx_branch WHERE role = $1`, [role], 'pgx_registry'))[0].n).toBe(
      0,
    );
    await sql(`DROP DATABASE ${other}`);
    await sql(`DROP ROLE ${role}`);
  });

  it("admin mode: the admin credentials, no role (the matrix's admin column: the source is reachable)", async () => {
    const source = await makeSource();
    const t = testProject({ source, toml: '[agent]\nroles = "admin"\n' });
    const a = await t.run((e) => e.ensure({ execId: 'adm' }));
    expect(a.record.role).toBeNull();
    expect(a.conn.user).toBe(pgInfo().user);
    expect(await attempt(a.conn, 'SELECT email FROM users', source)).toBe('ok');
    const [d] = await t.run((e) => e.down({ id: 'adm' }, { now: true }));
    expect(d).toMatchObject({ action: 'dropped', role: null });
  });

  it('roles = "per-branch" gives a branch made under "admin" its role at the next ensure', async () => {
    const source = await makeSource();
    const t = testProject({ source, toml: '[agent]\nroles = "admin"\n' });
    const before = await t.run((e) => e.ensure({ execId: 'up' }));
    expect(before.record.role).toBeNull();
    const strict = { ...t, config: { ...t.config, roles: 'per-branch' as const } };
    const { Engine } = await import('../../src/engine/api.js');
    const e = await Engine.open(strict.config, { quiet: true });
    try {
      const after = await e.ensure({ execId: 'up' });
      expect(after.method).toBe('attach');
      expect(after.conn.user).toBe(after.record.role);
      expect(await attempt(after.conn, 'ALTER TABLE users ADD COLUMN y int')).toBe('ok');
      expect(
        await attempt(after.conn, 'SELECT 1', source).then(() =>
          attempt(after.conn, 'SELECT email FROM users', source),
        ),
      ).toBe('42501');
    } finally {
      await e.close();
    }
  });

  it('warm pool: the role is prepared NOLOGIN at fill (owning the objects) and logs in at claim; drain drops it', async () => {
    const source = await richSource();
    const t = testProject({ source, toml: '[agent]\npool = 2\n' });
    const filled = await t.run((e) => e.fillPool());
    expect(filled.created).toHaveLength(2);
    const ready = await sql(
      `SELECT name, role FROM pgx_pool WHERE template = $1 ORDER BY name`,
      [t.template],
      'pgx_registry',
    );
    for (const m of ready) {
      expect(m.role).toMatch(/^pgx_role_/);
      expect(await roleRow(m.role)).toMatchObject({ rolcanlogin: false, comment: 'pgx:role' });
      expect((await sql(`SELECT datallowconn FROM pg_database WHERE datname = $1`, [m.name]))[0].datallowconn).toBe(
        false,
      );
    }
    const a = await t.run((e) => e.ensure({ sessionId: 's', agentId: 'claimer' }));
    expect(a.method).toBe('claim');
    expect(ready.map((m) => m.role)).toContain(a.record.role);
    expect(a.conn.user).toBe(a.record.role);
    expect(await roleRow(a.record.role!)).toMatchObject({ rolcanlogin: true });
    expect(
      await attempt(a.conn, 'ALTER TABLE app.events ADD COLUMN z int; DROP VIEW app.v; CREATE INDEX ON users (email)'),
    ).toBe('ok');
    expect(await attempt(a.conn, 'SELECT email FROM users', source)).toBe('42501');
    const left = ready.find((m) => m.role !== a.record.role)!;
    expect(await attempt({ ...a.conn, user: left.role }, 'SELECT 1')).not.toBe('ok');
    const drained = await t.run((e) => e.drainPool());
    expect(drained.dropped).toEqual([left.name]);
    expect(await roleRow(left.role)).toBeUndefined();
  });

  // Crash windows: the role is recorded before it is made, so any cut leaves what the next ensure or gc finishes.
  for (const [where, before] of [
    ['before CREATE ROLE', /^CREATE ROLE/],
    ['after CREATE ROLE, before the CONNECT grant', /^REVOKE CONNECT, TEMPORARY ON DATABASE "pgx_new_/], // (made under its nonce name)
    ['before the ownership transfer', /^DO \$pgx\$/],
  ] as const) {
    it(`crash ${where}: the next ensure finishes the role`, async () => {
      const source = await makeSource();
      const t = testProject({ source });
      await crashDuring(t, before, (e) => e.ensure({ execId: 'c' }));
      const r = await t.run((e) => e.ensure({ execId: 'c' }));
      expect(r.method).toBe('clone');
      expect(await roleRow(r.record.role!)).toMatchObject({ rolcanlogin: true, comment: 'pgx:role' });
      expect(await attempt(r.conn, 'ALTER TABLE users ADD COLUMN y int')).toBe('ok');
      await expectNoOrphans(t);
    });
  }

  it('crash in retire before NOLOGIN: the branch is retiring, and revives with its role logging in', async () => {
    const t = testProject();
    const up = await t.run((e) => e.ensure({ execId: 'r' }));
    await crashDuring(t, /NOLOGIN$/, (e) => e.retire({ id: 'r' }));
    const again = await t.run((e) => e.ensure({ execId: 'r' }));
    expect(again).toMatchObject({ branch: up.branch, method: 'revive' });
    expect(await roleRow(up.record.role!)).toMatchObject({ rolcanlogin: true });
    expect(await attempt(again.conn, 'SELECT 1')).toBe('ok');
  });

  describe.each([
    ['`down --project --now`', 'drop'],
    ['SessionEnd, then gc', 'end'],
  ] as const)(
    "after a fan-out, %s: the session branch's role, left while its frozen copy held objects it owned, goes with the copy (decision 453)",
    (_, how) => {
      it('gc drops it once nothing owns anything of it; a role pgx did not make, or one owning something elsewhere, stays', async () => {
        const t = testProject({ source: await makeSource(), toml: '[agent]\ngrace = "0s"\n' });
        const s = await t.run((e) => e.ensure({ sessionId: 's1' }));
        // the parent connected and migrated: a fork makes a frozen copy of the session branch, owned by its role
        const parent = clientOf(s.conn);
        await parent.connect();
        try {
          await parent.query('CREATE TABLE parent_mig (x int)');
          const a1 = await t.run((e) => e.ensure({ sessionId: 's1', agentId: 'a1' }));
          expect(a1.fork?.method).toBe('frozen');
        } finally {
          await parent.end();
        }
        const role = s.record.role!;
        if (how === 'drop') {
          const done = await t.run(async (e) => [
            ...(await e.down({ branch: s.branch }, { now: true })),
            ...(await e.down({ agent: 'a1' }, { now: true })),
          ]);
          // the defect's start: the copy still held the role's objects
          expect(done.find((d) => d.name === s.branch)).toMatchObject({ action: 'dropped', role, role_action: 'left' });
        } else {
          await t.run((e) => e.endSession('s1'));
        }
        // neighbours gc must leave: a role pgx did not make, owning nothing; a stamped one owning a table elsewhere
        const stranger = `not_pgx_${Math.random().toString(36).slice(2, 8)}`;
        await sql(`CREATE ROLE ${stranger} NOLOGIN`);
        const leak = await t.run((e) => e.ensure({ execId: 'leak' }));
        const other = `open_${Math.random().toString(36).slice(2, 8)}`;
        await sql(`CREATE DATABASE ${other}`);
        await sql('GRANT CREATE ON SCHEMA public TO PUBLIC', [], other);
        expect(await attempt(leak.conn, 'CREATE TABLE planted (x int)', other)).toBe('ok');
        await t.run((e) => e.down({ id: 'leak' }, { now: true }));
        try {
          // gc is server-wide: a concurrent test's gc may drop ours first, so what is checked is what is left. One may
          // be dropping our frozen copy as ours runs (its record gone, its database not yet): the role then goes at
          // the next gc (seen on a loaded machine with PostgreSQL 18), so gc runs again, at most twice, while it stays.
          let gc = await t.run((e) => e.gc());
          for (let i = 0; i < 2 && (await roleRow(role)) !== undefined; i++) gc = await t.run((e) => e.gc());
          expect(gc.errors).toEqual([]);
          expect(await sql(`SELECT name FROM pgx_frozen WHERE parent = $1`, [s.branch], 'pgx_registry')).toEqual([]);
          expect(await roleRow(role)).toBeUndefined();
          expect(await roleRow(stranger)).toBeDefined();
          expect(await roleRow(leak.record.role!)).toMatchObject({ comment: 'pgx:role', rolcanlogin: false });
        } finally {
          await sql(`DROP DATABASE ${other}`);
          await sql(`DROP ROLE ${leak.record.role}`);
          await sql(`DROP ROLE ${stranger}`);
        }
      });
    },
  );

  it('gc of an abandoned creation drops its role too', async () => {
    const t = testProject();
    await crashDuring(t, /^DO \$pgx\$/, (e) => e.ensure({ execId: 'g' }));
    const [rec] = await sql(`SELECT name, role FROM pgx_branch WHERE project = $1`, [t.name], 'pgx_registry');
    expect(await roleRow(rec.role)).toBeDefined();
    await sql(
      `UPDATE pgx_branch SET deadline = now() - interval '1 second' WHERE name = $1`,
      [rec.name],
      'pgx_registry',
    );
    const gc = await t.run((e) => e.gc());
    // The creation never got its name (it is renamed into place last): its pgx_new_<nonce> goes, the record is forgotten.
    expect(gc.dropped.find((d) => d.name === rec.name)).toMatchObject({
      action: 'forgotten',
      role: rec.role,
      role_action: 'dropped',
    });
    expect(await roleRow(rec.role)).toBeUndefined();
  });

  it('a non-superuser admin with CREATEROLE (and CREATEDB) gets per-branch roles under "auto" too', async () => {
    const admin = `lim_${Math.random().toString(36).slice(2, 8)}`;
    const password = `pw${Math.random().toString(36).slice(2)}`;
    await sql(`CREATE ROLE ${admin} LOGIN CREATEDB CREATEROLE PASSWORD '${password}'`);
    const source = `src_${Math.random().toString(36).slice(2, 8)}`;
    await sql(`CREATE DATABASE ${source} OWNER ${admin}`);
    const i = pgInfo();
    const asAdmin = new pg.Client({ host: i.host, port: i.port, user: admin, password, database: source });
    await asAdmin.connect();
    await asAdmin.query(`CREATE TABLE items (id serial primary key, v text); INSERT INTO items (v) VALUES ('x')`);
    await asAdmin.end();
    const t = testProject({ source });
    // The registry is the first admin's (it refuses CONNECT to others): this one is granted it, as on a shared server.
    await testProject().run((x) => x.ensure({ execId: 'registry' }));
    await sql(`GRANT CONNECT ON DATABASE pgx_registry TO ${admin}`);
    await sql(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${admin}`, [], 'pgx_registry');
    const { Engine } = await import('../../src/engine/api.js');
    const e = await Engine.open(
      { ...t.config, serverUrl: `postgresql://${admin}:${password}@${i.host}:${i.port}/postgres` },
      { quiet: true },
    );
    try {
      const a = await e.ensure({ execId: 'lim' });
      expect(a.conn.user).toBe(a.record.role);
      expect(
        await attempt(
          a.conn,
          'ALTER TABLE items ADD COLUMN w int; CREATE INDEX ON items (v); INSERT INTO items (v) VALUES (1)',
        ),
      ).toBe('ok');
      expect(await attempt(a.conn, 'SELECT v FROM items', source)).toBe('42501');
      expect(await attempt(a.conn, 'SELECT 1', 'pgx_registry')).toBe('42501');
      const [r] = await e.retire({ id: 'lim' });
      expect(r).toMatchObject({ action: 'retired', role: a.record.role });
      expect(await attempt(a.conn, 'SELECT 1')).toBe('28000');
      const [d] = await e.down({ id: 'lim' }, { now: true });
      expect(d).toMatchObject({ action: 'dropped', role_action: 'dropped' });
      expect(await roleRow(a.record.role!)).toBeUndefined();
    } finally {
      await e.close();
    }
  });
});
