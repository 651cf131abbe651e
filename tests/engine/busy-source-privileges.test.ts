// Defect 7: a branch's contents must not depend on whether the source was busy. An idle source is copied as a
// template (owners and GRANTs kept); a busy one goes through pg_dump | psql, which now keeps them too where the admin
// role may take on the owners' roles, and otherwise (restored in one transaction, so nothing half-done stays) falls
// back to a copy without them, and says so.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/project/config.js';
import { copyByDump } from '../../src/engine/dump-restore.js';
import { testProject } from '../helpers/engine.js';
import pg from 'pg';
import { pgInfo, sql } from '../helpers/pgx.js';
import { needs, smallCopyMethod } from '../helpers/client-programs.js';

const rand = () => randomBytes(4).toString('hex');

function adminClient(database: string): pg.Client {
  const i = pgInfo();
  const c = new pg.Client({ host: i.host, port: i.port, user: i.user, password: i.password, database });
  c.on('error', () => {});
  return c;
}

/** A source whose schema and table are owned by `owner`, with SELECT (and USAGE) granted to a read-only role. */
async function sourceWithRoles(): Promise<{ source: string; owner: string; ro: string }> {
  const s = rand();
  const source = `src_priv_${s}`;
  const owner = `own_${s}`;
  const ro = `ro_${s}`;
  await sql(`CREATE ROLE ${owner}`);
  await sql(`CREATE ROLE ${ro}`);
  await sql(`CREATE DATABASE ${source}`);
  await sql(
    `CREATE SCHEMA app AUTHORIZATION ${owner};
     CREATE TABLE app.items (id int, name text); INSERT INTO app.items VALUES (1, 'one'), (2, 'two');
     ALTER TABLE app.items OWNER TO ${owner};
     GRANT USAGE ON SCHEMA app TO ${ro}; GRANT SELECT ON app.items TO ${ro};`,
    [],
    source,
  );
  return { source, owner, ro };
}

interface Privileges {
  schemaOwner: string;
  tableOwner: string;
  roSelects: boolean;
  roRows: number | string;
  acl: string | null;
}

/** What the roles can do in `db`: owners, the ACL, and the read-only role actually reading (SET ROLE). */
async function privilegesIn(db: string, ro: string): Promise<Privileges> {
  const c = adminClient(db);
  await c.connect();
  try {
    const [o] = (
      await c.query(
        `SELECT n.nspowner::regrole::text AS s, c.relowner::regrole::text AS t, c.relacl::text AS acl,
                                        has_table_privilege($1, 'app.items', 'SELECT') AS sel
                                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'app' AND c.relname = 'items'`,
        [ro],
      )
    ).rows;
    let rows: number | string;
    try {
      await c.query(`SET ROLE ${ro}`);
      rows = (await c.query('SELECT count(*)::int AS n FROM app.items')).rows[0].n;
    } catch (err) {
      rows = (err as Error).message;
    } finally {
      await c.query('RESET ROLE');
    }
    return { schemaOwner: o.s, tableOwner: o.t, roSelects: o.sel, roRows: rows, acl: o.acl };
  } finally {
    await c.end();
  }
}

describe('busy source: owners and privileges as an idle source gives them', () => {
  it('the same branch from an idle source (template copy) and a busy one (dump/restore): owner kept, the read-only role keeps SELECT', async () => {
    const { source, owner, ro } = await sourceWithRoles();
    // roles = "admin": a branch role would own the branch's objects (as it does on both paths alike).
    const idle = testProject({ source, toml: '[agent]\nroles = "admin"\n' });
    const a = await idle.run((e) => e.ensure({ execId: 'idle' }));
    expect(a.method).toBe('clone');

    const busy = testProject({ source, toml: '[agent]\nroles = "admin"\n' });
    const holder = adminClient(source);
    await holder.connect();
    try {
      const r = await busy.run((e) => e.refreshTemplate());
      // Owners and grants kept whichever way the machine copies (smallCopyMethod).
      const method = smallCopyMethod();
      expect(r).toMatchObject({ method, privileges: 'kept' });
    } finally {
      await holder.end();
    }
    const b = await busy.run((e) => e.ensure({ execId: 'busy' }));

    const fromIdle = await privilegesIn(a.branch, ro);
    const fromBusy = await privilegesIn(b.branch, ro);
    expect(fromIdle).toMatchObject({ schemaOwner: owner, tableOwner: owner, roSelects: true, roRows: 2 });
    expect(fromBusy).toEqual(fromIdle);
  });

  it('an admin role that may not take on the owner roles: the full restore rolls back whole, the copy is made without them ("dropped")', async (ctx) => {
    needs(ctx, ['pg_dump', 'psql'], "it is about the pg_dump | psql copy (the Node copy's case: node-copy-faithful)");
    const { source, owner, ro } = await sourceWithRoles();
    const lim = `lim_${rand()}`;
    const password = rand() + rand();
    await sql(`CREATE ROLE ${lim} LOGIN CREATEDB PASSWORD '${password}'`);
    await sql(`GRANT pg_read_all_data TO ${lim}`); // it can read the source (as pg_dump must), but is no owner's member
    const into = `into_${rand()}`;
    await sql(`CREATE DATABASE ${into} OWNER ${lim}`);
    const i = pgInfo();
    const e = {
      admin: { host: i.host, port: i.port, user: lim, password, database: 'postgres' },
      config: { home: '/nonexistent' } as Config,
    };
    expect(await copyByDump(e, source, into)).toBe('dropped');
    const p = await privilegesIn(into, ro);
    expect(p).toMatchObject({ schemaOwner: lim, tableOwner: lim, roSelects: false });
    expect(String(p.roRows)).toMatch(/permission denied/);
    expect((await sql(`SELECT count(*)::int AS n FROM app.items`, [], into))[0].n).toBe(2); // the data, once (the failed attempt left nothing)

    // The same role made a member of the owner role: owners and GRANTs are kept.
    await sql(`GRANT ${owner} TO ${lim}`);
    const into2 = `into_${rand()}`;
    await sql(`CREATE DATABASE ${into2} OWNER ${lim}`);
    expect(await copyByDump(e, source, into2)).toBe('kept');
    expect(await privilegesIn(into2, ro)).toMatchObject({
      schemaOwner: owner,
      tableOwner: owner,
      roSelects: true,
      roRows: 2,
    });
  });
});
