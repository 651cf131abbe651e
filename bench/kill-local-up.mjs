// Adversarial check of `pgx local up` (issue 11): SIGKILL it at a random moment, then run `local up` again and see
// whether it recovers. Counts kills, recoveries, failures and stray initdb processes; prints one JSON line.
// Usage: node bench/kill-local-up.mjs [runs=30] [repo=this checkout]. Each run uses a fresh PGX_HOME (and data dir).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const runs = Number(process.argv[2] ?? 30);
const repo = resolve(process.argv[3] ?? join(import.meta.dirname, '..'));
const pgx = join(repo, 'bin', 'pgx.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Processes on dataDir without any pgx tag: initdb names it in argv; its postgres children run with it as cwd. */
function processesOn(dataDir) {
  const out = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'latin1').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${e}/cwd`);
      } catch {}
      if ((cmd.includes('initdb') && cmd.includes(dataDir)) || cwd === dataDir || cwd.startsWith(`${dataDir}/`))
        out.push({ pid: Number(e), cmd });
    } catch {}
  }
  return out;
}

const run = (args, env) => spawnSync(process.execPath, [pgx, ...args], { env, encoding: 'utf8', timeout: 180_000 });

// One uninterrupted `local up` to learn how long it takes here: kills are spread over [0, that].
const probeHome = mkdtempSync(join(tmpdir(), 'pgx-kill-probe-'));
const penv = { PATH: process.env.PATH, HOME: probeHome, PGX_HOME: join(probeHome, 'h') };
let t0 = Date.now();
run(['local', 'up'], penv);
const fullMs = Date.now() - t0;
cleanup(penv);
rmSync(probeHome, { recursive: true, force: true });

const tally = {
  runs,
  full_up_ms: fullMs,
  killed_before_exit: 0,
  recovered: 0,
  failed: 0,
  stray_initdb_after_kill: 0,
  stray_initdb_after_recovery: 0,
  errors: [],
};
for (let i = 0; i < runs; i++) {
  const home = mkdtempSync(join(tmpdir(), 'pgx-kill-'));
  const env = { PATH: process.env.PATH, HOME: home, PGX_HOME: join(home, 'h') };
  const delay = Math.floor(Math.random() * fullMs); // a moment of a typical run
  const child = spawn(process.execPath, [pgx, 'local', 'up'], { env, stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r(sig ?? code)));
  await sleep(delay);
  const killed = child.exitCode === null && child.kill('SIGKILL');
  await exited;
  if (killed) tally.killed_before_exit++;
  let dataDir;
  try {
    dataDir = JSON.parse(readFileSync(join(env.PGX_HOME, 'local', 'state.json'), 'utf8')).data_dir;
  } catch {}
  if (dataDir && processesOn(dataDir).some((p) => p.cmd.includes('initdb'))) tally.stray_initdb_after_kill++;
  const up = run(['local', 'up', '--json'], env);
  const q = run(['agent', 'exec', '--id', 'k', '--cwd', home, '--', 'psql', '-X', '-Atc', 'select 1'], env);
  if (up.status === 0 && q.status === 0 && q.stdout.trim() === '1') tally.recovered++;
  else {
    tally.failed++;
    tally.errors.push(
      `delay ${delay} ms: up ${up.status} ${(up.stdout + up.stderr).replace(/\s+/g, ' ').slice(0, 200)}; exec ${q.status}`,
    );
  }
  if (dataDir && processesOn(dataDir).some((p) => p.cmd.includes('initdb') || /--(boot|single)/.test(p.cmd)))
    tally.stray_initdb_after_recovery++;
  cleanup(env);
  rmSync(home, { recursive: true, force: true });
}
console.log(JSON.stringify(tally));

function cleanup(env) {
  const s = run(['local', 'status', '--json'], env);
  run(['local', 'down'], env);
  try {
    const dataDir = JSON.parse(s.stdout).data_dir;
    if (dataDir) {
      for (const p of processesOn(dataDir))
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {}
      rmSync(dataDir.startsWith('/var/lib/pgx/') ? dirname(dirname(dataDir)) : dirname(dataDir), {
        recursive: true,
        force: true,
      });
    }
  } catch {}
}
