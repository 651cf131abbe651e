// Concurrent `agent exec --id X` (issue 11, defect 3): N execs of ONE id at once, each holding a connection to the
// branch for a random while and then using it again; a branch retired under a running exec shows as a failure
// ("terminating connection due to administrator command", "not currently accepting connections"). Counts failures;
// prints one JSON line. Usage: node bench/concurrent-execs.mjs [repo] [N=20] [rounds=3]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const repo = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));
const N = Number(process.argv[3] ?? 20);
const rounds = Number(process.argv[4] ?? 3);
const pgx = join(repo, 'bin', 'pgx.js');
const root = mkdtempSync(join(tmpdir(), 'pgx-cexec-'));
const project = join(root, 'project');
mkdirSync(project);
writeFileSync(join(project, '.pgx.toml'), '[project]\nname = "cexec"\n');
const env = { PATH: process.env.PATH, HOME: root, PGX_HOME: join(root, 'h'), PGX_HOST: 'cx' };
const cmd = 'psql -X -q -v ON_ERROR_STOP=1 -Atc "select pg_sleep(random() * 1.5)" -c "select current_database()"';

function exec(id) {
  return new Promise((res) => {
    const c = spawn(process.execPath, [pgx, 'agent', 'exec', '--id', id, '--cwd', project, '--', 'sh', '-c', cmd], {
      env,
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => res({ code, out, err }));
  });
}

spawnSync(process.execPath, [pgx, 'agent', 'exec', '--id', 'warm', '--cwd', project, '--', 'true'], { env }); // server + template
const result = { n: N, rounds, runs: 0, failed: 0, samples: [] };
for (let r = 0; r < rounds; r++) {
  const runs = await Promise.all(Array.from({ length: N }, () => exec(`same${r}`)));
  result.runs += runs.length;
  const failed = runs.filter((x) => x.code !== 0 || x.out.trim() !== `exec_cx_same${r}`);
  result.failed += failed.length;
  result.samples.push(...failed.slice(0, 2).map((x) => `${x.code}: ${x.err.trim().split('\n').pop()?.slice(0, 200)}`));
}
console.log(JSON.stringify(result));
const state = JSON.parse(readFileSync(join(env.PGX_HOME, 'local', 'state.json'), 'utf8'));
spawnSync(process.execPath, [pgx, 'local', 'down'], { env });
if (state.data_dir?.startsWith('/var/lib/pgx/'))
  rmSync(dirname(dirname(state.data_dir)), { recursive: true, force: true });
rmSync(root, { recursive: true, force: true });
