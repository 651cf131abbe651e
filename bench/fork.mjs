// Fork figures (issue 19), as ratios measured in the same run (a noisy 2-core machine makes absolute times meaningless):
//  - SubagentStart forking an UNCHANGED session branch (the template's path: a clone here, the pool off);
//  - SubagentStart forking a CHANGED 22 MB session branch (`pgbench -i -s 1` + a migration), alone and 20 at once
//    (a TEMPLATE copy of the session's branch), against `node -e 0` alone and 20 concurrent `node -e 0`;
//  - the same with the parent holding an open connection to its branch (pg_dump | psql), and whether that
//    connection is still the same backend afterwards;
//  - then (bench/fork-size.mjs) the same at a real project's size: ~1 GB, 1–20 at once, ext4 and XFS-reflink.
// Needs a server: PGX_DATABASE_URL, else a throwaway `pgx local up` in a temp PGX_HOME. Prints a markdown table and
// writes .tmp/bench-fork.json. Never asserts: the figures are read, not judged.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const rows = [];
const row = (name, ms, base, note = '') =>
  rows.push({ name, ms: Math.round(ms), ratio: base ? ms / base : null, note });
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const log = (m) => process.stderr.write(`bench: ${m}\n`);

const home = mkdtempSync(join(tmpdir(), 'pgx-bench-home-'));
const env = { ...process.env, PGX_HOME: home, TMPDIR: home, PGX_HOST: 'benchfork', PGX_POOL: '0' }; // TMPDIR: the broker's socket directory goes with the home
let url = process.env.PGX_DATABASE_URL;
if (!url) {
  log('starting a throwaway local server');
  execFileSync(pgx, ['local', 'up'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
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

/** Wall time of each of `n` processes started at once. */
function concurrent(n, argv, input = () => '') {
  return Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise((res) => {
          const t0 = performance.now();
          const c = spawn(argv[0], argv.slice(1), { env, stdio: ['pipe', 'ignore', 'ignore'] });
          c.stdin.end(input(i));
          c.on('close', () => res(performance.now() - t0));
        }),
    ),
  );
}

const id = randomBytes(3).toString('hex');
const src = `bench_fsrc_${id}`;
const project = mkdtempSync(join(tmpdir(), 'pgx-bench-proj-'));
const sessions = [];
try {
  await sql(`CREATE DATABASE ${src}`);
  const u = new URL(url);
  execFileSync(
    'pgbench',
    ['-i', '-q', '-s', '1', '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username), src],
    { env: { ...env, PGPASSWORD: decodeURIComponent(u.password) }, stdio: 'ignore' },
  );
  writeFileSync(
    join(project, '.pgx.toml'),
    `[project]\nname = "benchfork${id}"\nsource = "${src}"\n[agent]\nfork = "session"\n`,
  );
  execFileSync(pgx, ['template', 'refresh', '--cwd', project], { env, stdio: 'ignore' });
  Object.assign(env, { CLAUDE_PROJECT_DIR: project });
  spawnSync(pgx, ['agent', 'broker', 'start', '--cwd', project], { env, stdio: 'ignore' });
  const hookArgv = [process.execPath, pgx, 'agent', 'hook', 'subagent-start'];
  const nodeArgv = [process.execPath, '-e', '0'];
  const payload = (session, agent) =>
    JSON.stringify({
      session_id: session,
      cwd: project,
      hook_event_name: 'SubagentStart',
      agent_id: agent,
      agent_type: 'general-purpose',
    });
  let n = 0;
  const agentId = () => `a${id}${String(n++).padStart(10, '0')}`.slice(0, 17);
  /** A session with its own branch (made by `agent up`, as SessionStart makes it); `change`: the parent migrates it. */
  const newSession = async (change) => {
    const session = `${String(sessions.length).padStart(8, '0')}-${id}-4000-8000-000000000000`;
    sessions.push(session);
    const up = JSON.parse(
      execFileSync(pgx, ['agent', 'up', '--session', session, '--cwd', project, '--json'], { env, encoding: 'utf8' }),
    );
    if (change)
      await sql(
        `CREATE TABLE parent_mig (x int); INSERT INTO parent_mig SELECT g FROM generate_series(1, 1000) g; UPDATE pgbench_accounts SET abalance = 1 WHERE aid <= 100`,
        up.branch,
      );
    return { session, branch: up.branch };
  };
  const size = Number((await sql(`SELECT pg_database_size('${src}')::bigint AS s`))[0].s);
  const mb = Math.round(size / 1048576);

  // ---- alone: interleaved with node, median of 5; each SubagentStart is a new subagent of the session
  const unchanged = await newSession(false);
  const changed = await newSession(true);
  const alone = { node: [], unchanged: [], changed: [] };
  for (let r = 0; r < 5; r++) {
    alone.node.push((await concurrent(1, nodeArgv))[0]);
    alone.unchanged.push((await concurrent(1, hookArgv, () => payload(unchanged.session, agentId())))[0]);
    alone.changed.push((await concurrent(1, hookArgv, () => payload(changed.session, agentId())))[0]);
  }
  const nodeAlone = p50(alone.node);
  row('`node -e 0`', nodeAlone, nodeAlone);
  row(`SubagentStart, session branch unchanged (${mb} MB; template path, pool off)`, p50(alone.unchanged), nodeAlone);
  row(`SubagentStart, session branch changed (${mb} MB; TEMPLATE copy)`, p50(alone.changed), nodeAlone);

  // ---- 20 at once
  const nodeFan = p50(await concurrent(20, nodeArgv));
  const fanChanged = await newSession(true);
  const fan = await concurrent(20, hookArgv, () => payload(fanChanged.session, agentId()));
  row('20 concurrent `node -e 0` (p50)', nodeFan, nodeFan);
  row(
    `20 concurrent SubagentStart, session branch changed (p50)`,
    p50(fan),
    nodeFan,
    `max ${Math.round(Math.max(...fan))} ms`,
  );

  // ---- the parent holds an open connection to its branch (a dev server, an open psql)
  const held = await newSession(true);
  const parent = new pg.Client({ connectionString: dbUrl(held.branch) });
  await parent.connect();
  const pid = (await parent.query('SELECT pg_backend_pid() AS p')).rows[0].p;
  const heldAlone = [];
  for (let r = 0; r < 3; r++)
    heldAlone.push((await concurrent(1, hookArgv, () => payload(held.session, agentId())))[0]);
  row('SubagentStart, changed, parent connected (pg_dump into psql)', p50(heldAlone), nodeAlone);
  const heldFan = await concurrent(20, hookArgv, () => payload(held.session, agentId()));
  row(
    '20 concurrent SubagentStart, changed, parent connected (p50)',
    p50(heldFan),
    nodeFan,
    `max ${Math.round(Math.max(...heldFan))} ms`,
  );
  const after = (await parent.query('SELECT pg_backend_pid() AS p, count(*)::int AS n FROM parent_mig')).rows[0];
  rows.push({
    name: "parent's connection after the forks",
    ms: null,
    ratio: null,
    note: after.p === pid && after.n === 1000 ? 'the same backend, undisturbed' : `DISTURBED: ${JSON.stringify(after)}`,
  });
  await parent.end();

  // What each SubagentStart did (the hook log's outcome and the branch's lineage)
  const ls = JSON.parse(
    execFileSync(pgx, ['agent', 'ls', '--cwd', project, '--json'], { env, encoding: 'utf8' }),
  ).branches;
  const forks = ls.filter((b) => b.kind === 'subagent');
  log(`${forks.length} subagent branches, ${forks.filter((b) => b.parent).length} with a parent recorded`);
} finally {
  for (const s of sessions)
    spawnSync(pgx, ['agent', 'down', '--session', s, '--now', '--cwd', project], { env, stdio: 'ignore' });
  await sql(`DROP DATABASE IF EXISTS ${src}`).catch(() => {});
  for (const { datname } of await sql(
    `SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_tpl\\_benchfork${id}%'`,
  ).catch(() => [])) {
    await sql(`ALTER DATABASE "${datname}" IS_TEMPLATE false`).catch(() => {});
    await sql(`DROP DATABASE "${datname}"`).catch(() => {});
  }
  spawnSync(pgx, ['agent', 'broker', 'stop'], { env, stdio: 'ignore' });
  // The throwaway local server and all of its data (under /var/lib/pgx as root): pgx's own purge.
  if (!process.env.PGX_DATABASE_URL) spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
}

console.log('\n| fork case | ms | ratio | note |\n|---|---:|---:|---|');
for (const r of rows)
  console.log(`| ${r.name} | ${r.ms ?? '-'} | ${r.ratio ? `${r.ratio.toFixed(1)}×` : '-'} | ${r.note} |`);
mkdirSync(join(repo, '.tmp'), { recursive: true });
writeFileSync(join(repo, '.tmp', 'bench-fork.json'), JSON.stringify(rows, null, 1) + '\n');

// At a real project's size (issue 29): a ~1 GB session branch, 1–20 subagents at once, on ext4 and XFS-reflink.
await (await import('./fork-size.mjs')).forkAtSize();
