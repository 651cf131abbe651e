// Load check (issue 11 #8): N concurrent SubagentStart hooks for distinct agents, then M for one agent id, against
// pgx's embedded server in a throwaway PGX_HOME (or PGX_DATABASE_URL). Counts hooks whose branch was not made and
// what they said. Prints one JSON line. Usage: node bench/concurrent-starts.mjs [repo] [N=50] [M=10]
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const repo = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));
const N = Number(process.argv[3] ?? 50);
const M = Number(process.argv[4] ?? 10);
const pgx = join(repo, 'bin', 'pgx.js');
const home = mkdtempSync(join(tmpdir(), 'pgx-conc-'));
const project = join(home, 'project');
spawnSync('mkdir', ['-p', project]);
writeFileSync(join(project, '.pgx.toml'), '[project]\nname = "conc"\n');
const env = {
  PATH: process.env.PATH,
  HOME: home,
  PGX_HOME: join(home, 'h'),
  PGX_HOST: 'conc',
  CLAUDE_PROJECT_DIR: project,
  SHELL: '/bin/bash',
  ...(process.env.PGX_DATABASE_URL ? { PGX_DATABASE_URL: process.env.PGX_DATABASE_URL } : {}),
};
const sessionId = randomUUID();

function hook(agentId) {
  const payload = JSON.stringify({
    session_id: sessionId,
    cwd: project,
    hook_event_name: 'SubagentStart',
    agent_id: agentId,
    agent_type: 'general-purpose',
  });
  return new Promise((res) => {
    const c = spawn(process.execPath, [pgx, 'agent', 'hook', 'subagent-start'], { cwd: project, env });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('close', (code) => res({ code, out }));
    c.stdin.end(payload);
  });
}

function classify(results) {
  const failed = results.filter((r) => !/own PostgreSQL database branch/.test(r.out));
  return {
    n: results.length,
    failed: failed.length,
    said_start_the_server: failed.filter((r) => /Start the server/.test(r.out)).length,
    said_timed_out: failed.filter((r) => /timed out|timeout/i.test(r.out)).length,
    samples: failed.slice(0, 3).map((r) => r.out.slice(0, 240)),
  };
}

// warm up: server started and template built, so the burst measures branch creation
spawnSync(process.execPath, [pgx, 'agent', 'exec', '--id', 'warm', '--cwd', project, '--', 'true'], {
  env,
  cwd: project,
});
const distinct = await Promise.all(Array.from({ length: N }, (_, i) => hook(`a${i.toString(16).padStart(16, '0')}`)));
const same = await Promise.all(Array.from({ length: M }, () => hook('asameagent0000001')));
console.log(JSON.stringify({ distinct: classify(distinct), same_id: classify(same) }));
if (!process.env.PGX_DATABASE_URL) {
  const s = JSON.parse(
    spawnSync(process.execPath, [pgx, 'local', 'status', '--json'], { env, encoding: 'utf8' }).stdout,
  );
  spawnSync(process.execPath, [pgx, 'local', 'down'], { env });
  if (s.data_dir?.startsWith('/var/lib/pgx/')) rmSync(dirname(dirname(s.data_dir)), { recursive: true, force: true });
}
rmSync(home, { recursive: true, force: true });
