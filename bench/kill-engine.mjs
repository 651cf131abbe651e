// Adversarial check of the engine's crash windows (issue 11, defects 1 and 2): SIGKILL `agent exec --id` (an ensure),
// a first ensure (which builds the template) and `template refresh` at random moments of a typical run; after each
// kill of an ensure, a stranger creates a database with data under the branch name whenever it is free (the defect-2
// window). Then pgx runs again (the recovery), every record is expired and `agent gc` runs. Counted: kills, what the
// recovery said, databases and records left over (orphans), and strangers' databases touched (dropped, stamped,
// altered or missing their row). Prints one JSON line.
// Usage: node bench/kill-engine.mjs [runs=30] [repo=this checkout]. Runs on pgx's local server in a throwaway PGX_HOME.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const runs = Number(process.argv[2] ?? 30);
const repo = resolve(process.argv[3] ?? join(import.meta.dirname, '..'));
const pgx = join(repo, 'bin', 'pgx.js');
const pg = createRequire(join(repo, 'package.json'))('pg');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const root = mkdtempSync(join(tmpdir(), 'pgx-killeng-'));
const home = join(root, 'h');
const baseEnv = { PATH: process.env.PATH, HOME: root, PGX_HOME: home, PGX_HOST: 'kh' };
const run = (args, cwd, extra = {}) =>
  spawnSync(process.execPath, [pgx, ...args, '--cwd', cwd], {
    env: { ...baseEnv, ...extra },
    encoding: 'utf8',
    timeout: 300_000,
  });

function project(name, toml = '') {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.pgx.toml'), `[project]\nname = "${name}"\n${toml}`);
  return dir;
}

/** Runs `args` and SIGKILLs it after a random moment of `typicalMs`; true when the kill landed before it exited. */
async function killed(args, cwd, typicalMs) {
  const child = spawn(process.execPath, [pgx, ...args, '--cwd', cwd], { env: baseEnv, stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  await sleep(Math.floor(Math.random() * typicalMs));
  const landed = child.exitCode === null && child.signalCode === null && child.kill('SIGKILL');
  await exited;
  return landed;
}

function timed(args, cwd) {
  const t0 = Date.now();
  const r = run(args, cwd);
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  return Date.now() - t0;
}

spawnSync(process.execPath, [pgx, 'local', 'up'], { env: baseEnv, stdio: 'ignore' });
const state = JSON.parse(readFileSync(join(home, 'local', 'state.json'), 'utf8'));
const admin = new pg.Client({
  host: '127.0.0.1',
  port: state.port,
  user: state.user,
  password: state.password,
  database: 'postgres',
});
await admin.connect();
const q = async (text, params = [], db) => {
  if (!db) return (await admin.query(text, params)).rows;
  const c = new pg.Client({
    host: '127.0.0.1',
    port: state.port,
    user: state.user,
    password: state.password,
    database: db,
  });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
};
const exists = async (name) => (await q('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1;

const planted = new Map(); // name → oid
let plantedTotal = 0;
async function plant(name) {
  try {
    await q(`CREATE DATABASE "${name}"`);
  } catch (err) {
    // The killed pgx's server session may still be running its CREATE DATABASE under that very name (a backend
    // finishes its statement after the client dies): then the name was not free, and nobody's data goes there.
    if (err.code === '23505' || err.code === '42P04') return;
    throw err;
  }
  plantedTotal++;
  await q(`CREATE TABLE theirs (v text); INSERT INTO theirs VALUES ('keep me')`, [], name);
  planted.set(name, (await q('SELECT oid::text FROM pg_database WHERE datname = $1', [name]))[0].oid);
}

const recoveries = {};
const tally = (phase, r) => {
  const k = r.status === 0 ? 'ok' : `exit ${r.status}`;
  recoveries[phase] ??= {};
  recoveries[phase][k] = (recoveries[phase][k] ?? 0) + 1;
};
const kills = { ensure: 0, template_build: 0, refresh: 0 };
const landed = { ensure: 0, template_build: 0, refresh: 0 };

// 1. ensure: one project, template built; kill `agent exec --id eN` (a fresh branch each time).
const pe = project('killens');
timed(['agent', 'exec', '--id', 'warm', '--keep', '--', 'true'], pe);
const ensureMs = timed(['agent', 'exec', '--id', 'probe', '--keep', '--', 'true'], pe);
for (let i = 0; i < runs; i++) {
  kills.ensure++;
  if (await killed(['agent', 'exec', '--id', `e${i}`, '--keep', '--', 'true'], pe, ensureMs)) landed.ensure++;
  if (!(await exists(`exec_kh_e${i}`))) await plant(`exec_kh_e${i}`);
  tally('ensure', run(['agent', 'exec', '--id', `e${i}`, '--keep', '--', 'true'], pe));
}

// 2. template build: a new project each time, so the killed first ensure builds its template.
const srcRows = 200_000;
await q('CREATE DATABASE killsrc');
await q(`CREATE TABLE items AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, ${srcRows}) g`, [], 'killsrc');
const buildMs = timed(['agent', 'exec', '--id', 'b', '--', 'true'], project('killbuildprobe', 'source = "killsrc"\n'));
for (let i = 0; i < runs; i++) {
  kills.template_build++;
  const dir = project(`killbuild${i}`, 'source = "killsrc"\n');
  if (await killed(['agent', 'exec', '--id', 'b', '--keep', '--', 'true'], dir, buildMs)) landed.template_build++;
  if (!(await exists('exec_kh_b'))) await plant('exec_kh_b');
  tally('template_build', run(['agent', 'exec', '--id', 'b', '--keep', '--', 'true'], dir));
  // the next project's branch name is the same: free it the way a user would (forget the record, drop the stranger)
  run(['agent', 'down', '--id', 'b', '--now'], dir);
  run(['agent', 'forget', '--id', 'b'], dir);
  if (planted.has('exec_kh_b')) {
    const row = (
      await q(
        "SELECT oid::text AS oid, shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = $1",
        ['exec_kh_b'],
      )
    )[0];
    const rows = row ? await q('SELECT count(*)::int AS n FROM theirs', [], 'exec_kh_b').catch(() => [{ n: -1 }]) : [];
    if (!row || row.oid !== planted.get('exec_kh_b') || row.c !== null || rows[0]?.n !== 1)
      (recoveries.template_build_touched ??= []).push(i);
    await q('DROP DATABASE IF EXISTS exec_kh_b WITH (FORCE)');
    planted.delete('exec_kh_b');
  }
}

// 3. refresh: one project with a template; kill `template refresh`.
const pr = project('killref', 'source = "killsrc"\n');
timed(['agent', 'exec', '--id', 'r', '--keep', '--', 'true'], pr);
const refreshMs = timed(['template', 'refresh'], pr);
for (let i = 0; i < runs; i++) {
  kills.refresh++;
  if (await killed(['template', 'refresh'], pr, refreshMs)) landed.refresh++;
  tally('refresh', run(['agent', 'exec', '--id', `r${i}`, '--', 'true'], pr)); // the next ensure must find a template
}
tally('refresh_after', run(['template', 'refresh'], pr));

// Everything expired, then gc: what is left is what recovery could not clean.
await q(`UPDATE pgx_branch SET deadline = now() - interval '1 second'`, [], 'pgx_registry');
const gcRuns = [pe, pr].map((d) => JSON.parse(run(['agent', 'gc', '--json'], d).stdout || '{}'));
const leftovers = {
  creation_databases: (await q(`SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_new\\_%'`)).map(
    (r) => r.datname,
  ),
  unstamped_branch_named: (
    await q(
      `SELECT datname FROM pg_database WHERE datname ~ '^(exec|agent)_' AND shobj_description(oid, 'pg_database') IS NULL`,
    )
  )
    .map((r) => r.datname)
    .filter((n) => !planted.has(n)),
  stamped_without_record: [], // filled below (needs the registry)
  template_leftovers: (await q(`SELECT datname FROM pg_database WHERE datname ~ '^pgx_tpl_.*_[bo][a-z0-9]{6}$'`)).map(
    (r) => r.datname,
  ),
  recorded_builds: (await q('SELECT name FROM pgx_template_build', [], 'pgx_registry')).map((r) => r.name),
  records_stuck_creating: (await q(`SELECT name FROM pgx_branch WHERE state = 'creating'`, [], 'pgx_registry')).map(
    (r) => r.name,
  ),
  stamped_records_left: (
    await q(
      `SELECT b.name FROM pgx_branch b JOIN pg_database d ON d.datname = b.name WHERE shobj_description(d.oid, 'pg_database') LIKE 'pgx:branch:%'`,
      [],
      'pgx_registry',
    )
  ).map((r) => r.name),
};
leftovers.stamped_without_record = (
  await q(`SELECT d.datname FROM pg_database d WHERE shobj_description(d.oid, 'pg_database') LIKE 'pgx:branch:%'`)
)
  .map((r) => r.datname)
  .filter((n) => !leftovers.stamped_records_left.includes(n));
const foreignRecordsLeft =
  (await q('SELECT count(*)::int AS n FROM pgx_branch', [], 'pgx_registry'))[0].n -
  leftovers.stamped_records_left.length -
  leftovers.records_stuck_creating.length;
// After gc every record is gone but the foreign ones (reported with their `forget` fix): any stamped branch is an orphan.
const strangers = [];
for (const [name, oid] of planted) {
  const row = (
    await q(
      "SELECT oid::text AS oid, shobj_description(oid, 'pg_database') AS c, datallowconn FROM pg_database WHERE datname = $1",
      [name],
    )
  )[0];
  const rows = row ? await q('SELECT count(*)::int AS n FROM theirs', [], name).catch(() => [{ n: -1 }]) : [];
  strangers.push({
    name,
    dropped: !row,
    replaced: !!row && row.oid !== oid,
    stamped: !!row?.c,
    refused_connections: row ? !row.datallowconn : null,
    rows: rows[0]?.n ?? null,
  });
}
const touched = strangers.filter((s) => s.dropped || s.replaced || s.stamped || s.refused_connections || s.rows !== 1);
console.log(
  JSON.stringify({
    runs,
    typical_ms: { ensure: ensureMs, template_build: buildMs, refresh: refreshMs },
    kills,
    landed_before_exit: landed,
    recoveries,
    strangers_planted: plantedTotal,
    strangers_touched: touched.length + (recoveries.template_build_touched?.length ?? 0),
    touched_samples: touched.slice(0, 3),
    foreign_records_left_for_forget: foreignRecordsLeft,
    gc_foreign_reported: gcRuns.reduce((n, g) => n + (g.foreign?.length ?? 0), 0),
    gc_errors: gcRuns.reduce((n, g) => n + (g.errors?.length ?? 0), 0),
    orphans: Object.fromEntries(Object.entries(leftovers).map(([k, v]) => [k, v.length])),
    orphan_samples: Object.fromEntries(
      Object.entries(leftovers)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, v.slice(0, 4)]),
    ),
  }),
);
await admin.end();
spawnSync(process.execPath, [pgx, 'local', 'down'], { env: baseEnv, stdio: 'ignore' });
if (state.data_dir?.startsWith('/var/lib/pgx/'))
  rmSync(dirname(dirname(state.data_dir)), { recursive: true, force: true });
rmSync(root, { recursive: true, force: true });
