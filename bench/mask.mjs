// Masking figures (issues 32, 41): on the two sample databases the masking tests use (tests/helpers/rental-store.ts,
// modelled on pagila, and music-store.ts, modelled on Chinook), grown to BENCH_MASK_MB each (default 300), `pgx
// source import` of each, BENCH_MASK_RUNS times (default 2) each way, in one run: with every personal-looking column
// "keep" (the plain import, scan included) and with the [mask] block `pgx source scan` prints, pasted as it is (so this
// also proves that the block imports as pasted at that size). The masked import's cost is read as a ratio to the plain one (issue 41's bound: ≤ 1.5×),
// with the masking step and the check of the masked copy after it (decision 466), and where the masking's time went
// (its steps and the check's relations, on stderr and in the JSON: decision 540). Needs a server: PGX_DATABASE_URL,
// else a throwaway `pgx local up` in a temp PGX_HOME. Prints a markdown table and writes .tmp/bench-mask.json. Never
// asserts.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const log = (m) => process.stderr.write(`bench: ${m}\n`);
const targetMb = Number(process.env.BENCH_MASK_MB ?? 300);
// Imports of each kind, run plain, masked, masked, plain, … (drift on a shared machine cancels out); each copy is
// dropped and a CHECKPOINT taken before the next, so one import's background work (autovacuum, writes) is not
// charged to the next.
const runs = Math.max(1, Number(process.env.BENCH_MASK_RUNS ?? 2));

const home = mkdtempSync(join(tmpdir(), 'pgx-bench-home-'));
const dirs = [home];
const env = { ...process.env, PGX_HOME: home, TMPDIR: home, PGX_HOST: 'benchmask', PGX_POOL: '0' };
let url = process.env.PGX_DATABASE_URL;
let local = false;
if (!url) {
  log('starting a throwaway local server');
  execFileSync(pgx, ['local', 'up'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const st = JSON.parse(readFileSync(join(home, 'local', 'state.json'), 'utf8'));
  url = `postgresql://${st.user}:${encodeURIComponent(st.password)}@127.0.0.1:${st.port}/postgres`;
  local = true;
}
env.PGX_DATABASE_URL = url;
const dbUrl = (database) => url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);

async function withClient(database, fn) {
  const c = new pg.Client({ connectionString: dbUrl(database) });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
const sql = (text, database = 'postgres') => withClient(database, async (c) => (await c.query(text)).rows);

// The sample databases' generators are the tests' own TypeScript: bundled here, once, inside the checkout (.tmp), so
// that their bare imports (faker) resolve from its node_modules.
mkdirSync(join(repo, '.tmp'), { recursive: true });
const helpers = mkdtempSync(join(repo, '.tmp', 'bench-helpers-'));
dirs.push(helpers);
await build({
  entryPoints: [join(repo, 'tests/helpers/rental-store.ts'), join(repo, 'tests/helpers/music-store.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  outdir: helpers,
  outExtension: { '.js': '.mjs' },
  logLevel: 'error',
});
const load = async (name) => import(pathToFileURL(join(helpers, `${name}.mjs`)).href);
const rental = await load('rental-store');
const music = await load('music-store');

const id = randomBytes(3).toString('hex');
const made = [];

function project(name, mask) {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-bench-proj-'));
  dirs.push(dir);
  const into = `bench_m${name}_${id}`;
  made.push(into);
  writeFileSync(join(dir, '.pgx.toml'), `[project]\nname = "benchmask${name}${id}"\nsource = "${into}"\n\n${mask}\n`);
  return { dir, into };
}

function runPgx(args, cwd, origin) {
  const t0 = performance.now();
  const r = spawnSync(pgx, args, {
    cwd,
    env: { ...env, BENCH_ORIGIN: dbUrl(origin) },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`pgx ${args.join(' ')} (${r.status}): ${r.stderr.slice(-3000)}`);
  return { ms, result: JSON.parse(r.stdout) };
}

// BENCH_MASK_SAMPLES=music (or rental) runs one of them.
const only = process.env.BENCH_MASK_SAMPLES?.split(',');
const SAMPLES = [
  { name: 'rental', label: 'rental store (pagila)', fill: rental.fillRentalStore, scale: rental.rentalStoreScaleFor },
  { name: 'music', label: 'music store (Chinook)', fill: music.fillMusicStore, scale: music.musicStoreScaleFor },
].filter((s) => !only || only.includes(s.name));

const out = { target_mb: targetMb, samples: [] };
try {
  for (const s of SAMPLES) {
    const origin = `bench_morigin_${s.name}_${id}`;
    made.push(origin);
    const scale = s.scale(targetMb);
    log(`${s.label}: generating ~${targetMb} MB (${scale.customers} customers)`);
    await sql(`CREATE DATABASE ${origin}`);
    await withClient(origin, (c) => s.fill(async (text, params) => (await c.query(text, params)).rows, scale));
    const [{ bytes }] = await sql(`SELECT pg_database_size(current_database())::bigint AS bytes`, origin);
    log(`${s.label}: ${(bytes / 1048576).toFixed(0)} MB; scanning`);
    const scan = runPgx(
      ['source', 'scan', '--from-env', 'BENCH_ORIGIN', '--json'],
      project(`${s.name}s`, '').dir,
      origin,
    );
    const keys = [...new Set(scan.result.personal.map((f) => f.ruleKey ?? f.key))];
    const keep = `[mask]\n${keys.map((k) => `${JSON.stringify(k)} = "keep"`).join('\n')}`;
    const importArgs = ['source', 'import', '--from-env', 'BENCH_ORIGIN', '--no-template', '--json'];
    const timed = { plain: [], masked: [] };
    let m;
    for (let i = 0; i < 2 * runs; i++) {
      const kind = i % 4 === 0 || i % 4 === 3 ? 'plain' : 'masked';
      log(`${s.label}: ${kind} import ${timed[kind].length + 1}/${runs}`);
      const p = project(`${s.name}${kind[0]}${i}`, kind === 'plain' ? keep : scan.result.block);
      const r = runPgx(importArgs, p.dir, origin);
      timed[kind].push(r.ms);
      if (kind === 'masked') m = r.result.mask;
      const mm = r.result.mask;
      log(
        `${s.label}: ${kind} ${Math.round(r.ms)} ms (scan and masking ${mm.elapsed_ms} ms${mm.proof ? `, check ${mm.proof.elapsed_ms} ms` : ''})`,
      );
      log(
        `${s.label}: ${kind} steps ${JSON.stringify(mm.steps)}${mm.proof ? ` check ${JSON.stringify(mm.proof.relation_ms)}` : ''}`,
      );
      await sql(`DROP DATABASE IF EXISTS ${p.into} WITH (FORCE)`);
      await sql('CHECKPOINT');
    }
    const total = (xs) => xs.reduce((a, b) => a + b, 0);
    const plain = { ms: total(timed.plain) / runs };
    const masked = { ms: total(timed.masked) / runs };
    out.samples.push({
      sample: s.label,
      origin_mb: Math.round(bytes / 1048576),
      customers: scale.customers,
      flagged: scan.result.personal.length,
      runs,
      plain_ms: Math.round(plain.ms),
      masked_ms: Math.round(masked.ms),
      plain_runs_ms: timed.plain.map(Math.round),
      masked_runs_ms: timed.masked.map(Math.round),
      masked_over_plain: +(masked.ms / plain.ms).toFixed(2),
      masking_step_ms: m.elapsed_ms,
      masking_steps_ms: m.steps,
      check_relation_ms: m.proof?.relation_ms ?? null,
      masked_columns: m.columns,
      matviews_refreshed: m.matviews,
      check_ms: m.proof?.elapsed_ms ?? null,
      check_rows: m.proof?.rows ?? null,
      check_relations: m.proof?.relations ?? null,
      check_sampled: m.proof?.sampled ?? [],
      check_bound_mb: m.proof?.bound_mb ?? null,
    });
    for (const d of made.splice(0)) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  }
  console.log(
    `| masked import, ~${targetMb} MB each | MB | plain ms | masked ms | × plain (bound ≤ 1.5) | masking step ms | check ms (rows; bound) |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of out.samples)
    console.log(
      `| ${r.sample}: ${r.masked_columns} columns, ${r.matviews_refreshed} matview(s) | ${r.origin_mb} | ${r.plain_ms} | ${r.masked_ms} | ` +
        `${r.masked_over_plain.toFixed(2)} | ${r.masking_step_ms} | ${r.check_ms} (${r.check_rows} rows; ${r.check_bound_mb} MB a relation${r.check_sampled.length ? `, sampled: ${r.check_sampled.join(', ')}` : ''}) |`,
    );
  mkdirSync(join(repo, '.tmp'), { recursive: true });
  writeFileSync(join(repo, '.tmp', 'bench-mask.json'), JSON.stringify(out, null, 2));
} finally {
  for (const d of made) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  await sql(`DELETE FROM pgx_source WHERE database LIKE 'bench\\_m%\\_${id}'`, 'pgx_registry').catch(() => {});
  await sql(`DELETE FROM pgx_mask_salt WHERE project LIKE 'benchmask%${id}'`, 'pgx_registry').catch(() => {});
  if (local) spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
