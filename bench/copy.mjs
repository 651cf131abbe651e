// The copy of a database pgx can't clone by template (issue 39, decision 480): the Node copy (src/copy/: schema by
// @supabase/pg-delta, rows by COPY streams, no client program) against `pg_dump | psql` of the same database in the
// same run, each through pgx's own copy code (dist/copy.cjs: copyDatabase with PGX_COPY_METHOD=node, then =dump),
// alternating which goes first. Shapes: `pgbench -i -s BENCH_COPY_SCALE` (default 60, ~0.9 GB: one big table), the
// same at scale 1 and 10, and a schema of BENCH_COPY_TABLES small tables (default 1000): the figures behind the
// method rule (copy-method.ts). BENCH_COPY_SHAPES picks shapes ("s60,s10,s1,t1000"); BENCH_COPY_RUNS runs per shape
// (default 3). Needs a server: PGX_DATABASE_URL, else a throwaway `pgx local up`. Prints a markdown table and writes
// .tmp/bench-copy.json. Ratios only; never asserts.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const log = (m) => process.stderr.write(`bench copy: ${m}\n`);
const runs = Number(process.env.BENCH_COPY_RUNS ?? 3);
const scale = Number(process.env.BENCH_COPY_SCALE ?? 60);
const tablesN = Number(process.env.BENCH_COPY_TABLES ?? 1000);
const shapes = (process.env.BENCH_COPY_SHAPES ?? `s${scale},s10,s1,t${tablesN}`).split(',');
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MB = 1048576;

const home = mkdtempSync(join(tmpdir(), 'pgx-bench-copy-'));
const env = { ...process.env, PGX_HOME: home, TMPDIR: home, PGX_POOL: '0' };
let url = process.env.PGX_DATABASE_URL;
let local = false;
if (!url) {
  log('starting a throwaway local server');
  execFileSync(pgx, ['local', 'up'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const st = JSON.parse(readFileSync(join(home, 'local', 'state.json'), 'utf8'));
  url = `postgresql://${st.user}:${encodeURIComponent(st.password)}@127.0.0.1:${st.port}/postgres`;
  local = true;
}
const u = new URL(url);
const admin = {
  host: u.hostname,
  port: Number(u.port || 5432),
  user: decodeURIComponent(u.username),
  password: decodeURIComponent(u.password),
  database: 'postgres',
};
const dbUrl = (database) => url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);
async function sql(text, database = 'postgres') {
  const c = new pg.Client({ connectionString: dbUrl(database) });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

const { copyDatabase } = createRequire(import.meta.url)(join(repo, 'dist', 'copy.cjs'));
const id = randomBytes(3).toString('hex');
const rows = [];

/** One copy of `src` by `method` into a new database: its time, then the database dropped. */
async function timedCopy(src, method) {
  const into = `bench_copy_${id}_${method}`;
  await sql(`DROP DATABASE IF EXISTS ${into}`);
  await sql(`CREATE DATABASE ${into} TEMPLATE template0`);
  await sql('CHECKPOINT');
  process.env.PGX_COPY_METHOD = method;
  const t0 = performance.now();
  try {
    const r = await copyDatabase({ admin, config: { home } }, src, into);
    return { ms: performance.now() - t0, r };
  } finally {
    delete process.env.PGX_COPY_METHOD;
    await sql(`DROP DATABASE IF EXISTS ${into}`);
  }
}

async function makeShape(shape, src) {
  await sql(`CREATE DATABASE ${src}`);
  if (shape.startsWith('s')) {
    execFileSync(
      'pgbench',
      ['-i', '-q', '-s', shape.slice(1), '-h', admin.host, '-p', String(admin.port), '-U', admin.user, src],
      {
        env: { ...env, PGPASSWORD: admin.password },
        stdio: 'ignore',
      },
    );
    return `pgbench -i -s ${shape.slice(1)}`;
  }
  const n = Number(shape.slice(1));
  for (let i = 0; i < n; i += 100) {
    const ddl = [];
    for (let k = i; k < Math.min(n, i + 100); k++)
      ddl.push(
        `CREATE TABLE t${k} (id serial PRIMARY KEY, name text NOT NULL, ref int, at timestamptz DEFAULT now()); ` +
          `CREATE INDEX t${k}_name ON t${k} (name); INSERT INTO t${k} (name, ref) SELECT 'n' || g, g FROM generate_series(1, 50) g;`,
      );
    await sql(ddl.join('\n'), src);
  }
  return `${n} small tables (50 rows, a key and an index each)`;
}

try {
  for (const shape of shapes) {
    const src = `bench_copy_${id}_src`;
    log(`${shape}: making the source`);
    const what = await makeShape(shape, src);
    const size = Number((await sql(`SELECT pg_database_size('${src}')::bigint AS s`))[0].s);
    const times = { 'node-copy': [], 'dump-restore': [] };
    let detail;
    for (let i = 0; i < runs; i++) {
      for (const m of i % 2 ? ['dump', 'node'] : ['node', 'dump']) {
        const { ms, r } = await timedCopy(src, m);
        times[r.method].push(ms);
        if (r.method === 'node-copy') detail = r;
        log(`${shape} run ${i + 1}: ${r.method} ${Math.round(ms)} ms`);
      }
    }
    const ratios = times['node-copy'].map((t, i) => t / times['dump-restore'][i]);
    rows.push({
      shape: `${what}, ${Math.round(size / MB)} MB`,
      bytes: size,
      node_p50_ms: Math.round(p50(times['node-copy'])),
      dump_p50_ms: Math.round(p50(times['dump-restore'])),
      ratio_p50: p50(ratios),
      ratios,
      node_warnings: detail?.warnings ?? [],
    });
    await sql(`DROP DATABASE IF EXISTS ${src}`);
  }
} finally {
  if (local) spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
}

console.log(
  '\n| copy of | Node copy p50 ms | pg_dump \\| psql p50 ms | Node / pg_dump (p50 of the runs) | each run |\n|---|---:|---:|---:|---|',
);
for (const r of rows)
  console.log(
    `| ${r.shape} | ${r.node_p50_ms} | ${r.dump_p50_ms} | ${r.ratio_p50.toFixed(2)}× | ${r.ratios.map((x) => x.toFixed(2)).join(', ')} |`,
  );
mkdirSync(join(repo, '.tmp'), { recursive: true });
writeFileSync(join(repo, '.tmp', 'bench-copy.json'), JSON.stringify(rows, null, 2));
