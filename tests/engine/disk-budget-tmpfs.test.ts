// The disk budget on a small file system of its own: a 384 MB tmpfs mounted as a tablespace of the test server, the
// project's source in it, so its template, branches and pool members land there too (a template copy goes where its
// template is). The pool fills until the next member would take the tmpfs below twice the reserve and stops; branches
// are then cloned until the next would cross the reserve, which is refused with the tablespace's figures. Each
// measurement follows a CHECKPOINT: a WAL_LOG clone's last pages reach the tmpfs only then (what the budget counts as
// owed: shared_buffers), and the reserve must hold after they have. Needs root (mount); skipped otherwise.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/api.js';
import { DiskBudgetError } from '../../src/engine/disk-budget.js';
import type { Config } from '../../src/project/config.js';
import { expectNoOrphans, registryRows, testProject } from '../helpers/engine.js';
import { sql } from '../helpers/pgx.js';

const MB = 1024 * 1024;
const why =
  process.getuid?.() !== 0
    ? 'not root: mounting a tmpfs needs it'
    : spawnSync('mount', ['--version']).status !== 0
      ? 'no mount(8)'
      : undefined;
if (why) console.warn(`SKIPPED disk budget on a tmpfs tablespace: ${why}`);

const free = (path: string) => {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
};

describe.skipIf(why !== undefined)('disk budget on a small file system (a tmpfs tablespace)', () => {
  const space = `ts_${Math.random().toString(36).slice(2, 10)}`;
  let dir: string;
  let mnt: string;
  let mounted = false;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pgx-tmpfs-'));
    chmodSync(dir, 0o755); // the cluster's OS user must reach the mount point
    mnt = join(dir, 'mnt');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=384m,mode=0700', 'tmpfs', mnt]);
    mounted = true;
    const dataDir = (await sql<{ data_directory: string }>('SHOW data_directory'))[0]!.data_directory;
    chownSync(mnt, statSync(dataDir).uid, statSync(dataDir).gid); // the server's OS user owns a tablespace's directory
    await sql(`CREATE TABLESPACE ${space} LOCATION '${mnt}'`);
  });

  afterAll(async () => {
    try {
      // Whatever the test left in the tablespace (all of it this file's), then the tablespace.
      for (const { datname, datistemplate } of await sql<{ datname: string; datistemplate: boolean }>(
        `SELECT datname, datistemplate FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace WHERE t.spcname = $1`,
        [space],
      )) {
        if (datistemplate) await sql(`ALTER DATABASE "${datname}" IS_TEMPLATE false`);
        await sql(`DROP DATABASE "${datname}" WITH (FORCE)`);
      }
      await sql(`DROP TABLESPACE IF EXISTS ${space}`);
    } finally {
      // The server may hold a file of a dropped database open for a moment (EBUSY): retried, then detached lazily.
      for (let i = 0; mounted && i < 20; i++) {
        mounted = spawnSync('umount', [mnt]).status !== 0;
        if (mounted) await new Promise((res) => setTimeout(res, 250));
      }
      if (mounted) execFileSync('umount', ['-l', mnt]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the pool stops before twice the reserve; clones go on until the next would cross it, which is refused with the tablespace's figures", async () => {
    const src = `src_${space}`;
    await sql(`CREATE DATABASE ${src} TABLESPACE ${space}`);
    await sql(`CREATE TABLE t AS SELECT g, repeat(md5(g::text), 9) AS pad FROM generate_series(1, 50000) g`, [], src);
    const reserve = 24 * MB;
    const t = testProject({ source: src, toml: '[agent]\npool = 16\n[disk]\nreserve = "24MB"\n' });
    const [{ b }] = await sql<{ b: string }>(`SELECT pg_size_bytes(current_setting('shared_buffers'))::text AS b`);
    const owed = Number(b);
    /** The tmpfs's free space once every page the server owes it is written. */
    const settled = async () => {
      await sql('CHECKPOINT');
      return free(mnt);
    };
    const e = await Engine.open(t.config, { quiet: true });
    const made: string[] = [];
    try {
      made.push((await e.ensure({ execId: 'first' })).branch); // builds the template (in the tablespace: a copy of the source)
      const size = Number((await sql<{ s: string }>(`SELECT pg_database_size($1)::text AS s`, [t.template]))[0]!.s);
      expect(size).toBeGreaterThan(12 * MB);

      // The pool: members until the next would leave less than twice the reserve on the tmpfs.
      let r = await e.fillPool();
      for (let i = 0; r.busy && i < 100; i++)
        r = await new Promise((res) => setTimeout(res, 100)).then(() => e.fillPool());
      const left = await settled();
      console.log(
        `[tmpfs] template ${Math.round(size / MB)} MB, shared_buffers ${Math.round(owed / MB)} MB: pool ${r.created.length}/${r.target}, ${Math.round(left / MB)} MB left of 384 MB`,
      );
      expect(r).toMatchObject({ busy: false, target: 16, bound: 'disk_reserve' });
      expect(r.created.length).toBeGreaterThan(0);
      expect(r.created.length).toBeLessThan(16);
      expect(left).toBeGreaterThanOrEqual(2 * reserve);
      expect(left - owed - size, 'the pool stopped only when the next member would not fit').toBeLessThan(
        2 * reserve + 2 * MB,
      );
      expect(r.disk_note).toContain(`on the file system of ${mnt},`);

      // Branches asked for: without the pool, each a clone, until the next would cross the reserve itself.
      await e.drainPool();
      const cfg: Config = { ...t.config, pool: { ...t.config.pool, size: 0 } };
      const e2 = await Engine.open(cfg, { quiet: true });
      let refused: DiskBudgetError | undefined;
      try {
        for (let i = 1; i <= 24 && !refused; i++) {
          try {
            made.push((await e2.ensure({ execId: `b${i}` })).branch);
          } catch (err) {
            if (!(err instanceof DiskBudgetError)) throw err;
            refused = err;
          }
        }
      } finally {
        await e2.close();
      }
      expect(refused, 'a clone was refused').toBeDefined();
      expect(made.length).toBeGreaterThan(2);
      const f = refused!.figures;
      expect(f).toMatchObject({ path: mnt, reserve, floor: reserve, in_flight: 0, owed });
      expect(f.needed).toBe(size);
      expect(f.free - f.owed - f.needed).toBeLessThan(reserve);
      expect(await settled()).toBeGreaterThanOrEqual(reserve);
      expect(refused!.message).toContain(`([disk] reserve = "24MB")`);
      // the refused branch left nothing
      expect(
        (await registryRows(t.name))
          .filter((x) => x.host === t.host)
          .map((x) => x.name)
          .sort(),
      ).toEqual([...made].sort());
      await expectNoOrphans(t);
    } finally {
      for (const name of made) await e.down({ branch: name }, { now: true }).catch(() => {});
      await e.dropTemplates().catch(() => {});
      await e.close();
    }
  }, 240_000);
});
