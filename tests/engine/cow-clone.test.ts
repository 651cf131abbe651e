// Copy-on-write clones for real: PostgreSQL 18 (the embedded binaries) with its data directory on a loop-mounted
// XFS image made with reflink=1. The first clone on the server is pgx's probe; it finds reflinks and says so in
// $PGX_HOME/servers/, and from then on a branch of a 64 MB template costs almost no disk. The control (WAL_LOG on
// the same file system) shows what a copy costs, so the assertion can fail. Skipped, with the reason, where a loop
// mount or the binaries are not available.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/project/config.js';
import { Engine } from '../../src/engine/api.js';
import { startXfsCluster, xfsUnavailable, type XfsCluster } from '../helpers/xfs-cluster.js';

const why = xfsUnavailable();
if (why) console.warn(`SKIPPED copy-on-write clone test: ${why}`);
const MB = 1024 * 1024;

describe.skipIf(why !== undefined)('copy-on-write clones on PostgreSQL 18 + XFS reflink', () => {
  let x: XfsCluster;
  const q = async (text: string, database = 'postgres') => {
    const c = new pg.Client({ connectionString: x.url.replace(/\/postgres$/, `/${database}`) });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  beforeAll(async () => {
    x = await startXfsCluster(2);
  }, 120_000);
  afterAll(() => x?.stop());

  it('the probe finds reflinks; a branch of a 64 MB template then uses < 10 MB of disk (a WAL_LOG copy: the full size)', async () => {
    await q('CREATE DATABASE cow_src');
    await q(`CREATE TABLE t AS SELECT g, repeat(md5(g::text), 30) AS pad FROM generate_series(1, 64000) g`, 'cow_src');
    const dir = mkdtempSync(join(tmpdir(), 'pgx-cow-'));
    writeFileSync(join(dir, '.pgx.toml'), '[project]\nname = "cow"\nsource = "cow_src"\n');
    const config = loadConfig({
      cwd: dir,
      env: { PGX_DATABASE_URL: x.url, PGX_HOST: 'cow', PGX_HOME: join(dir, 'home'), HOME: dir },
    });
    const e = await Engine.open(config, { quiet: true });
    try {
      await e.ensure({ execId: 'first' }); // builds the template; the clone is the probe
      const verdicts = readdirSync(join(dir, 'home', 'servers')).map((f) =>
        JSON.parse(readFileSync(join(dir, 'home', 'servers', f), 'utf8')),
      );
      expect(verdicts).toHaveLength(1);
      expect(verdicts[0]).toMatchObject({ reflink: true, by: 'disk' });
      const size = Number((await q(`SELECT pg_database_size('cow_src')::bigint AS s`))[0].s);
      expect(size).toBeGreaterThan(60 * MB);

      await q('CHECKPOINT');
      const before = x.used();
      const r = await e.ensure({ execId: 'second' });
      expect(r.method).toBe('clone');
      const cow = x.used() - before;
      expect(cow, `a copy-on-write branch used ${Math.round(cow / MB)} MB`).toBeLessThan(10 * MB);

      const tpl = (await q(`SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_tpl\\_cow\\_%'`))[0]
        .datname as string;
      await q('CHECKPOINT');
      const before2 = x.used();
      await q(`CREATE DATABASE control_copy TEMPLATE "${tpl}" STRATEGY WAL_LOG`);
      await q('CHECKPOINT');
      expect(x.used() - before2, 'the control copy').toBeGreaterThan(size / 2);
      console.log(
        `[cow] template ${Math.round(size / MB)} MB: branch +${(cow / MB).toFixed(1)} MB, WAL_LOG copy +${Math.round((x.used() - before2) / MB)} MB`,
      );
    } finally {
      await e.close();
    }
  }, 300_000);

  it('without reflinks (XFS made with reflink=0) the probe says so, and branches are cloned by the size rule', async () => {
    const plain = await startXfsCluster(1, false);
    try {
      const c = new pg.Client({ connectionString: plain.url });
      await c.connect();
      await c.query('CREATE DATABASE plain_src');
      await c.end();
      const s = new pg.Client({ connectionString: plain.url.replace(/\/postgres$/, '/plain_src') });
      await s.connect();
      await s.query(`CREATE TABLE t AS SELECT g, repeat(md5(g::text), 30) AS pad FROM generate_series(1, 20000) g`);
      await s.end();
      const dir = mkdtempSync(join(tmpdir(), 'pgx-nocow-'));
      writeFileSync(join(dir, '.pgx.toml'), '[project]\nname = "nocow"\nsource = "plain_src"\n');
      const config = loadConfig({
        cwd: dir,
        env: { PGX_DATABASE_URL: plain.url, PGX_HOST: 'nocow', PGX_HOME: join(dir, 'home'), HOME: dir },
      });
      const e = await Engine.open(config, { quiet: true });
      try {
        await e.ensure({ execId: 'first' });
        const [verdict] = readdirSync(join(dir, 'home', 'servers')).map((f) =>
          JSON.parse(readFileSync(join(dir, 'home', 'servers', f), 'utf8')),
        );
        expect(verdict).toMatchObject({ reflink: false, by: 'disk' });
        expect((await e.ensure({ execId: 'second' })).method).toBe('clone');
      } finally {
        await e.close();
      }
    } finally {
      plain.stop();
    }
  }, 300_000);
});
