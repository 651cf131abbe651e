// Merge figures (issue 42), as ratios measured in the same run: a subagent that changed 10 tables of a ~1 GB session
// branch (pgbench -s 60 plus ten 20,000-row tables; the parent migrated its branch and holds a connection, so the
// subagent forked through a frozen copy), then, one after the other, each as the CLI runs it:
//   `pgx agent diff` (two-way, the unit), `pgx agent diff --sql --out` (the migration since the fork point),
//   `pgx agent merge --dry-run` (the migration and the check), `pgx agent merge` (the check and the apply).
// BENCH_MERGE_SCALE sets the pgbench scale (default 60, ~900 MB; 10 under CI=true: ~150 MB); BENCH_MERGE_ROWS the
// ten tables' rows (default 20,000). Needs a server: PGX_DATABASE_URL, else a throwaway `pgx local up` in a temp
// PGX_HOME. Prints a markdown table and writes .tmp/bench-merge.json. Never asserts: the figures are read, not judged.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const scale = Number(process.env.BENCH_MERGE_SCALE ?? (process.env.CI ? 10 : 60));
const tableRows = Number(process.env.BENCH_MERGE_ROWS ?? 20_000);
const log = (m) => process.stderr.write(`bench: ${m}\n`);

const home = mkdtempSync(join(tmpdir(), 'pgx-bench-home-'));
const env = { ...process.env, PGX_HOME: home, TMPDIR: home, PGX_HOST: 'benchmerge', PGX_POOL: '0' };
let url = process.env.PGX_DATABASE_URL;
let localUp = false;
if (!url) {
  log('starting a throwaway local server');
  execFileSync(pgx, ['local', 'up'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  localUp = true;
  const st = JSON.parse(readFileSync(join(home, 'local', 'state.json'), 'utf8'));
  url = `postgresql://${st.user}:${encodeURIComponent(st.password)}@127.0.0.1:${st.port}/postgres`;
}
env.PGX_DATABASE_URL = url;
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

const id = randomBytes(3).toString('hex');
const src = `bench_msrc_${id}`;
const project = mkdtempSync(join(tmpdir(), 'pgx-bench-merge-'));
const run = (args) => execFileSync(pgx, [...args, '--cwd', project], { env, stdio: ['ignore', 'pipe', 'pipe'] });
const timed = (args) => {
  const t0 = performance.now();
  let status = 0;
  try {
    run(args);
  } catch (err) {
    status = err.status ?? -1;
  }
  return { ms: performance.now() - t0, status };
};

const rows = [];
let held;
try {
  await sql(`CREATE DATABASE ${src}`);
  const u = new URL(url);
  log(`pgbench -i -s ${scale} …`);
  execFileSync(
    'pgbench',
    [
      '-i',
      '-q',
      '-s',
      String(scale),
      '-h',
      u.hostname,
      '-p',
      u.port || '5432',
      '-U',
      decodeURIComponent(u.username),
      src,
    ],
    { env: { ...env, PGPASSWORD: decodeURIComponent(u.password) }, stdio: 'ignore' },
  );
  for (let i = 1; i <= 10; i++)
    await sql(
      `CREATE TABLE t${i} (id int PRIMARY KEY, name text, qty int, at timestamptz DEFAULT now());
       INSERT INTO t${i} SELECT g, md5(g::text), g % 100, now() FROM generate_series(1, ${tableRows}) g; ANALYZE t${i};`,
      src,
    );
  writeFileSync(join(project, '.pgx.toml'), `[project]\nname = "benchmerge${id}"\nsource = "${src}"\n`);
  log('template refresh …');
  run(['template', 'refresh']);
  const s = JSON.parse(run(['agent', 'up', '--session', 'bs', '--json'])).branch;
  const bytes = Number((await sql(`SELECT pg_database_size('${s}') AS b`))[0].b);
  await sql(`ALTER TABLE pgbench_branches ADD COLUMN region text; UPDATE pgbench_branches SET region = 'eu'`, s);
  held = new pg.Client({ connectionString: dbUrl(s) });
  await held.connect();
  log('subagent fork (a frozen copy of the connected session branch) …');
  const fork = timed(['agent', 'up', '--session', 'bs', '--agent', 'ba']);
  const a = JSON.parse(run(['agent', 'up', '--session', 'bs', '--agent', 'ba', '--json'])).branch;
  for (let i = 1; i <= 10; i++)
    await sql(
      `UPDATE t${i} SET qty = qty + 1 WHERE id % 100 = 0; DELETE FROM t${i} WHERE id % 400 = 1;
       INSERT INTO t${i} (id, name, qty) SELECT ${tableRows} + g, 'new', 1 FROM generate_series(1, 100) g;
       ${i === 1 ? 'ALTER TABLE t1 ADD COLUMN note text; CREATE INDEX t1_qty ON t1 (qty);' : ''}`,
      a,
    );
  log('agent diff / diff --sql / merge --dry-run / merge …');
  const unit = timed(['agent', 'diff', '--agent', 'ba', '--json']);
  const out = join(project, 'ba.sql');
  const steps = [
    ['`pgx agent diff` (two-way; big tables counted)', unit],
    ['`pgx agent diff --sql --out`', timed(['agent', 'diff', '--agent', 'ba', '--sql', '--out', out])],
    ['`pgx agent merge --dry-run`', timed(['agent', 'merge', '--agent', 'ba', '--dry-run'])],
    ['`pgx agent merge` (check + apply, one transaction)', timed(['agent', 'merge', '--agent', 'ba'])],
  ];
  const statements = readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => /^(INSERT|UPDATE|DELETE|ALTER|CREATE)/.test(l)).length;
  for (const [name, r] of steps) rows.push({ name, ms: Math.round(r.ms), ratio: r.ms / unit.ms, status: r.status });
  rows.push({
    name: 'the fork itself (SubagentStart-equivalent `agent up`)',
    ms: Math.round(fork.ms),
    ratio: null,
    status: fork.status,
  });
  const summary = { scale, bytes, table_rows: tableRows, tables_changed: 10, statements, rows };
  mkdirSync(join(repo, '.tmp'), { recursive: true });
  writeFileSync(join(repo, '.tmp', 'bench-merge.json'), JSON.stringify(summary, null, 2));
  console.log(
    `\nmerge figures: a subagent that changed 10 tables of a ${(bytes / 1024 ** 3).toFixed(2)} GB session branch ` +
      `(pgbench -s ${scale} + 10 × ${tableRows} rows; ${statements} statements), ratios to \`pgx agent diff\` in the same run\n`,
  );
  console.log('| what | ms | × agent diff | exit |\n|---|---:|---:|---:|');
  for (const r of rows)
    console.log(`| ${r.name} | ${r.ms} | ${r.ratio === null ? '' : r.ratio.toFixed(2)} | ${r.status} |`);
} finally {
  await held?.end().catch(() => {});
  try {
    run(['agent', 'down', '--project', '--now', '--yes']);
    run(['template', 'drop']);
  } catch {
    // best effort: the throwaway server goes below anyway
  }
  await sql(`DROP DATABASE IF EXISTS ${src} WITH (FORCE)`).catch(() => {});
  if (localUp) execFileSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
  rmSync(project, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
