// Masking figures (issue 32): `pgx source import` of the same ~1 GB origin twice in one run, once with every
// personal column kept ("keep" rules: the plain import, scan included) and once masked (email, name, phone, hash,
// null, date_shift, ip), so the masking's extra cost is read as a ratio to the plain import (the bound: at
// most 1×). The origin is generated in the server (set-based: customers with emails, names, phones, tokens, birth
// dates, IPs and a free-text column that is not masked; orders joined to them by email). BENCH_MASK_MB sets its size
// (default 1024). Needs a server: PGX_DATABASE_URL, else a throwaway `pgx local up` in a temp PGX_HOME. Prints a
// markdown table and writes .tmp/bench-mask.json. Never asserts.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const log = (m) => process.stderr.write(`bench: ${m}\n`);
const targetMb = Number(process.env.BENCH_MASK_MB ?? 1024);

const home = mkdtempSync(join(tmpdir(), 'pgx-bench-home-'));
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
const origin = `bench_morigin_${id}`;
const copies = [];
const dirs = [home];
const RULES = {
  'public.customers.email': 'email',
  'public.customers.full_name': 'name',
  'public.customers.phone': 'phone',
  'public.customers.api_token': 'null',
  'public.customers.tax_id': 'hash',
  'public.customers.birth_date': 'date_shift:90',
  'public.customers.last_ip': 'ip',
  'public.orders.customer_email': 'email',
};

function project(masked) {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-bench-proj-'));
  dirs.push(dir);
  const into = `bench_m${masked ? 'masked' : 'plain'}_${id}`;
  copies.push(into);
  const rules = Object.entries(RULES).map(([k, v]) => `"${k}" = "${masked ? v : 'keep'}"`);
  writeFileSync(
    join(dir, '.pgx.toml'),
    `[project]\nname = "benchmask${masked ? 'm' : 'p'}${id}"\nsource = "${into}"\n\n[mask]\n${rules.join('\n')}\n`,
  );
  return { dir, into };
}

function importInto(p) {
  const t0 = performance.now();
  const r = spawnSync(pgx, ['source', 'import', '--from-env', 'BENCH_ORIGIN', '--no-template', '--json'], {
    cwd: p.dir,
    env: { ...env, BENCH_ORIGIN: dbUrl(origin) },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`import failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return { ms, result: JSON.parse(r.stdout) };
}

try {
  // ~330 bytes a customer (row + its share of the indexes) and ~110 an order: rows for the target size.
  const customers = Math.round((targetMb * 1048576) / (330 + 110));
  log(`generating the origin: ${customers} customers, ${customers} orders (~${targetMb} MB)`);
  await sql(`CREATE DATABASE ${origin}`);
  await sql(
    `CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL UNIQUE, full_name text NOT NULL, phone text, api_token text, tax_id text,
       plan text NOT NULL, birth_date date, last_ip inet, notes text);
     CREATE TABLE orders (id bigint PRIMARY KEY, customer_email text NOT NULL REFERENCES customers (email), amount int NOT NULL, created_at timestamptz NOT NULL);`,
    origin,
  );
  await sql(
    `INSERT INTO customers
     SELECT i, 'person' || i || '.' || substr(md5(i::text), 1, 6) || '@mail' || (i % 997) || '.com',
            (ARRAY['Ana','Ben','Chloe','Dev','Eva','Finn','Gus','Hana'])[1 + i % 8] || ' ' || (ARRAY['Ortiz','Khan','Novak','Silva','Ito','Berg'])[1 + i % 6],
            '+44 20 ' || lpad((i % 10000)::text, 4, '0') || ' ' || lpad(((i * 7) % 10000)::text, 4, '0'),
            'sk_live_' || md5(i::text || 'k'), 'TX' || lpad(i::text, 10, '0'),
            (ARRAY['free','pro','team'])[1 + i % 3], date '1950-01-01' + (i % 20000),
            ('81.' || (i % 250) || '.' || ((i / 250) % 250) || '.' || (i % 200 + 1))::inet,
            'customer since ' || (2000 + i % 25) || ', prefers ' || (ARRAY['tea','coffee','juice'])[1 + i % 3] || ', tier ' || (i % 9)
     FROM generate_series(1, ${customers}) i`,
    origin,
  );
  await sql(
    `INSERT INTO orders SELECT i, c.email, (i * 13) % 1000, now() - (i % 1000) * interval '1 hour' FROM generate_series(1, ${customers}) i JOIN customers c ON c.id = i`,
    origin,
  );
  await sql(`VACUUM ANALYZE`, origin);
  const [{ bytes }] = await sql(`SELECT pg_database_size(current_database())::bigint AS bytes`, origin);
  log(`origin: ${(bytes / 1048576).toFixed(0)} MB`);

  log('plain import (every personal column "keep")');
  const plain = importInto(project(false));
  log(`plain: ${Math.round(plain.ms)} ms; masked import`);
  const masked = importInto(project(true));
  log(`masked: ${Math.round(masked.ms)} ms (masking ${masked.result.mask.elapsed_ms} ms)`);
  const extra = masked.ms - plain.ms;
  const out = {
    origin_mb: Math.round(bytes / 1048576),
    rows: customers * 2,
    plain_ms: Math.round(plain.ms),
    masked_ms: Math.round(masked.ms),
    extra_ms: Math.round(extra),
    extra_over_plain: +(extra / plain.ms).toFixed(2),
    masking_step_ms: masked.result.mask.elapsed_ms,
    masked_columns: masked.result.mask.columns,
  };
  console.log(`| masked import of ${out.origin_mb} MB (${out.rows} rows) | ms | × plain import |`);
  console.log('|---|---:|---:|');
  console.log(`| plain import (rules: keep) | ${out.plain_ms} | 1.00 |`);
  console.log(
    `| masked import (${out.masked_columns} columns) | ${out.masked_ms} | ${(masked.ms / plain.ms).toFixed(2)} |`,
  );
  console.log(`| extra cost of masking (bound: ≤ 1× plain) | ${out.extra_ms} | ${out.extra_over_plain.toFixed(2)} |`);
  console.log(
    `| the masking step itself (scan + rewrite + FK check) | ${out.masking_step_ms} | ${(out.masking_step_ms / plain.ms).toFixed(2)} |`,
  );
  mkdirSync(join(repo, '.tmp'), { recursive: true });
  writeFileSync(join(repo, '.tmp', 'bench-mask.json'), JSON.stringify(out, null, 2));
} finally {
  for (const d of [origin, ...copies]) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  await sql(`DELETE FROM pgx_source WHERE database = ANY('{${copies.join(',')}}')`, 'pgx_registry').catch(() => {});
  await sql(`DELETE FROM pgx_mask_salt WHERE project LIKE 'benchmask%${id}'`, 'pgx_registry').catch(() => {});
  if (local) spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
