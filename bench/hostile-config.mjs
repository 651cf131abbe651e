// Adversarial check of .pgx.toml validation (issue 11): for each hostile value, is it refused up front (exit 3), or
// accepted — and then does a branch still work? Runs `pgx agent exec --id … -- psql -c 'select 1'` against pgx's own
// embedded server (a throwaway PGX_HOME). Prints one JSON line: counts, and the values accepted then failing.
// Usage: node bench/hostile-config.mjs [repo=this checkout]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const repo = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));
const pgx = join(repo, 'bin', 'pgx.js');
const home = mkdtempSync(join(tmpdir(), 'pgx-hostile-'));
const env = { PATH: process.env.PATH, HOME: home, PGX_HOME: join(home, 'h'), PGX_HOST: 'hostile' };
const run = (args, cwd, extra = {}) =>
  spawnSync(process.execPath, [pgx, ...args], { cwd, env: { ...env, ...extra }, encoding: 'utf8', timeout: 120_000 });

// Controls: valid values at the edges, which must work (so a harness that fails everything shows up).
const CONTROLS = [
  ['guards', 'statement_timeout', '"24d"'],
  ['guards', 'idle_in_transaction_session_timeout', '"2147483647ms"'],
  ['agent', 'idle_ttl', '"36500d"'],
  ['server', 'url', '"LOCAL/postgres"'],
];

const VALUES = [
  // [section, key, TOML value]
  ['guards', 'idle_in_transaction_session_timeout', '"30d"'],
  ['guards', 'idle_in_transaction_session_timeout', '"25d"'],
  ['guards', 'statement_timeout', '"597h"'],
  ['guards', 'statement_timeout', '2147484'],
  ['guards', 'statement_timeout', '1e300'],
  ['guards', 'statement_timeout', 'nan'],
  ['guards', 'statement_timeout', 'inf'],
  ['guards', 'statement_timeout', '-1'],
  ['guards', 'statement_timeout', '"-5s"'],
  ['guards', 'statement_timeout', 'true'],
  ['guards', 'client_connection_check_interval', '"99999999999d"'],
  ['guards', 'client_connection_check_interval', '"1e3s"'],
  ['guards', 'client_connection_check_interval', '"5S"'],
  ['guards', 'client_connection_check_interval', '"0x10s"'],
  ['agent', 'idle_ttl', '1e300'],
  ['agent', 'idle_ttl', '"99999999999d"'],
  ['agent', 'idle_ttl', '"36501d"'],
  ['agent', 'idle_ttl', '"9999999999999h"'],
  ['agent', 'idle_ttl', '"0s"'],
  ['agent', 'idle_ttl', '0'],
  ['agent', 'idle_ttl', 'nan'],
  ['agent', 'idle_ttl', 'inf'],
  ['agent', 'idle_ttl', '-1'],
  ['agent', 'grace', '1e300'],
  ['agent', 'grace', '"9999999999h"'],
  ['agent', 'grace', 'inf'],
  ['agent', 'grace', '-inf'],
  ['agent', 'session_branch', '"yes"'],
  ['project', 'source', '"pgx_registry"'],
  ['project', 'source', '"template0"'],
  ['project', 'source', '"template1"'],
  ['project', 'source', '"postgres"'],
  ['project', 'source', '""'],
  ['project', 'source', `"${'s'.repeat(64)}"`],
  ['project', 'name', '"../etc"'],
  ['project', 'name', '""'],
  ['project', 'name', `"${'n'.repeat(64)}"`],
  ['server', 'url', '"postgres://u:ab%zz@127.0.0.1:1/postgres"'],
  ['server', 'url', '"postgres://u:1234#x@127.0.0.1:1/postgres"'],
  ['server', 'url', '"postgres://u:p/w@127.0.0.1:1/postgres"'],
  ['server', 'url', '"LOCAL/template1"'],
  ['server', 'url', '"LOCAL/template0"'],
  ['server', 'url', '"LOCAL/postgres?sslmode=bogus"'],
  ['server', 'url', '"LOCAL/postgres?options=-c%20statement_timeout%3D0"'],
  ['server', 'url', '"mysql://u@127.0.0.1/x"'],
];

// pgx's own server, as the URL target of the LOCAL/… cases
const up = run(['local', 'up', '--json'], home);
if (up.status !== 0) throw new Error(`local up failed: ${up.stdout}${up.stderr}`);
const state = JSON.parse(readFileSync(join(env.PGX_HOME, 'local', 'state.json'), 'utf8'));
const local = `postgresql://${state.user}:${state.password}@127.0.0.1:${state.port}`;

const tally = {
  controls_worked: 0,
  controls_failed: [],
  tried: VALUES.length,
  refused_exit3: 0,
  accepted_worked: 0,
  accepted_then_failed: 0,
  accepted_worked_values: [],
  accepted_then_failed_values: [],
};
function attempt(section, key, raw) {
  const dir = mkdtempSync(join(home, 'p-'));
  const value = raw.replace('LOCAL', local);
  writeFileSync(join(dir, '.pgx.toml'), `[${section}]\n${key} = ${value}\n`);
  const r = run(['agent', 'exec', '--id', 'h', '--cwd', dir, '--', 'psql', '-X', '-Atc', 'select 1'], dir);
  const err = (r.stderr || '').replace(state.password, '***').replace(/\s+/g, ' ').slice(0, 160);
  return { r, err, label: `${section}.${key} = ${raw}` };
}
for (const [section, key, raw] of CONTROLS) {
  const { r, err, label } = attempt(section, key, raw);
  if (r.status === 0 && r.stdout.trim() === '1') tally.controls_worked++;
  else tally.controls_failed.push(`${label}: exit ${r.status}: ${err}`);
}
for (const [section, key, raw] of VALUES) {
  const { r, err, label } = attempt(section, key, raw);
  if (r.status === 3) tally.refused_exit3++;
  else if (r.status === 0 && r.stdout.trim() === '1') {
    tally.accepted_worked++;
    tally.accepted_worked_values.push(label);
  } else {
    tally.accepted_then_failed++;
    tally.accepted_then_failed_values.push(`${label}: exit ${r.status}: ${err}`);
  }
}
// databases left behind by failed creates (stuck `creating` on old code)
const left = run(['agent', 'ls', '--json'], home).stdout;
try {
  tally.registry_rows_left = JSON.parse(left).branches?.length ?? null;
} catch {
  tally.registry_rows_left = null;
}
console.log(JSON.stringify(tally, null, 1));
const status = JSON.parse(run(['local', 'status', '--json'], home).stdout);
run(['local', 'down'], home);
if (status.data_dir?.startsWith('/var/lib/pgx/'))
  rmSync(dirname(dirname(status.data_dir)), { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
