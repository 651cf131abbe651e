// Start-up cost of the hot path (hooks and exec run once per shell command), as ratios to `node -e 0` measured in
// the same run — absolute milliseconds on a noisy 2-core machine mean little. Uses hyperfine when installed,
// else its own interleaved loop (median of N). Needs a server: PGX_DATABASE_URL, else the embedded local server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '..');
const pgx = join(repo, 'bin', 'pgx.js');
const runs = Number(process.env.BENCH_RUNS ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'pgx-bench-'));
writeFileSync(join(dir, '.pgx.toml'), '[project]\nname = "bench"\n');
const outside = mkdtempSync(join(tmpdir(), 'pgx-bench-out-'));
// A PGX_HOME of its own: without PGX_DATABASE_URL the bench starts (and stops) a throwaway local server there.
const home = mkdtempSync(join(tmpdir(), 'pgx-bench-home-'));
// TMPDIR too: the broker's socket directory (<tmp>/pgx-<uid>) then goes with the home.
// XDG_RUNTIME_DIR too, when the caller's has one (it would win over TMPDIR).
const env = {
  ...process.env,
  CLAUDE_PROJECT_DIR: dir,
  PGX_HOME: home,
  TMPDIR: home,
  XDG_RUNTIME_DIR: home,
  AI_AGENT: 'claude-code_2-1-328_harness',
};
const session = '11111111-2222-3333-4444-555555555555';
const payload = (cwd, agent) =>
  JSON.stringify({
    session_id: session,
    cwd,
    hook_event_name: 'PreToolUse',
    agent_id: agent,
    tool_name: 'Bash',
    tool_input: { command: 'psql -c "select 1"', description: 'x' },
  });
writeFileSync(join(dir, 'in.json'), payload(dir, 'abenchagent000001'));
writeFileSync(join(outside, 'in.json'), payload(outside, 'abenchagent000001'));
writeFileSync(join(dir, 'parent.json'), payload(dir, undefined));

// Warm up: local server up, branch created, broker running (SessionStart starts it), so the measured calls are the
// steady state (attach).
execFileSync(pgx, ['agent', 'exec', '--id', 'bench', '--keep', '--cwd', dir, '--', 'true'], { env, stdio: 'inherit' });
spawnSync(pgx, ['agent', 'hook', 'pre-tool-use'], { env, input: payload(dir, 'abenchagent000001') });
spawnSync(pgx, ['agent', 'broker', 'start', '--cwd', dir], { env, stdio: 'ignore' });

// The routed branch's libpq variables for the unrouted psql below (the password in a 0600 passfile, never an argv).
const branchEnv = Object.fromEntries(
  execFileSync(pgx, ['agent', 'exec', '--agent', 'abenchagent000001', '--cwd', dir, '--', 'env', '-0'], {
    env: { ...env, CLAUDE_CODE_SESSION_ID: session },
  })
    .toString()
    .split('\0')
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
writeFileSync(join(dir, 'pgpass'), `*:*:*:*:${branchEnv.PGPASSWORD ?? ''}\n`, { mode: 0o600 });
const unroutedEnv =
  ['PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE'].map((k) => `${k}=${branchEnv[k]}`).join(' ') +
  ` PGPASSFILE=${join(dir, 'pgpass')}`;
const cases = [
  ['node -e 0', `${process.execPath} -e 0`],
  ['pgx --version', `${pgx} --version`],
  ['hook pre-tool-use, parent (no agent_id)', `${pgx} agent hook pre-tool-use < ${join(dir, 'parent.json')}`],
  [
    'hook pre-tool-use, out of scope (no db)',
    `env -u CLAUDE_PROJECT_DIR ${pgx} agent hook pre-tool-use < ${join(outside, 'in.json')}`,
  ],
  ['hook pre-tool-use, subagent (attach + rewrite)', `${pgx} agent hook pre-tool-use < ${join(dir, 'in.json')}`],
  // the routed form the PreToolUse rewrite writes (Claude Code sets CLAUDE_CODE_SESSION_ID for its Bash commands)
  [
    'agent exec --agent (routed, attach) -- true',
    `env CLAUDE_CODE_SESSION_ID=${session} ${pgx} agent exec --agent abenchagent000001 --cwd ${dir} -- true`,
  ],
  ['agent exec --id (attach) -- true', `${pgx} agent exec --id bench --keep --cwd ${dir} -- true`],
  // the same two without the broker (PGX_BROKER=0): each process does the work itself, as before the broker
  [
    'hook pre-tool-use, subagent, no broker',
    `env PGX_BROKER=0 ${pgx} agent hook pre-tool-use < ${join(dir, 'in.json')}`,
  ],
  [
    'agent exec --agent, no broker',
    `env PGX_BROKER=0 CLAUDE_CODE_SESSION_ID=${session} ${pgx} agent exec --agent abenchagent000001 --cwd ${dir} -- true`,
  ],
  // issue #21 item 3 (decision 230): one psql, unrouted vs routed as the rewrite runs it, by the sh launcher and by node
  ["psql -c 'select 1', unrouted (same branch)", `env ${unroutedEnv} psql -X -q -c 'select 1'`],
  [
    "psql -c 'select 1', routed, sh launcher",
    `env CLAUDE_CODE_SESSION_ID=${session} ${pgx} agent exec --agent abenchagent000001 --cwd ${dir} -- /bin/bash -c "psql -X -q -c 'select 1'"`,
  ],
  // the same, with the session's libpq variables in the command's environment (SessionStart's CLAUDE_ENV_FILE exports
  // them): one broker serves it all the same (decision 442), where the socket key once took every PG* variable
  [
    "psql -c 'select 1', routed, sh launcher, session PG* set",
    `env CLAUDE_CODE_SESSION_ID=${session} ${unroutedEnv} PGSSLMODE=disable ${pgx} agent exec --agent abenchagent000001 --cwd ${dir} -- /bin/bash -c "psql -X -q -c 'select 1'"`,
  ],
  [
    "psql -c 'select 1', routed, node launcher",
    `env PGX_SHELL_LAUNCHER=0 CLAUDE_CODE_SESSION_ID=${session} ${pgx} agent exec --agent abenchagent000001 --cwd ${dir} -- /bin/bash -c "psql -X -q -c 'select 1'"`,
  ],
];

const hasHyperfine = spawnSync('hyperfine', ['--version']).status === 0;
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
if (hasHyperfine) {
  const out = join(dir, 'hf.json');
  execFileSync(
    'hyperfine',
    ['--warmup', '3', '--runs', String(runs), '--export-json', out, ...cases.map(([, c]) => c)],
    { env, cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const hf = JSON.parse(readFileSync(out, 'utf8'));
  hf.results.forEach((r, i) => results.push([cases[i][0], r.median * 1000, r.user * 1000]));
} else {
  const times = cases.map(() => []);
  for (let i = 0; i < runs; i++) {
    cases.forEach(([, cmd], j) => {
      const t0 = performance.now();
      spawnSync('bash', ['-c', cmd], { env, cwd: repo });
      times[j].push(performance.now() - t0);
    });
  }
  cases.forEach(([name], j) => results.push([name, median(times[j]), NaN]));
}
const base = results[0][1];
console.log(
  `\n${hasHyperfine ? 'hyperfine' : 'interleaved loop'}, ${runs} runs each, medians; ratio to \`node -e 0\`\n`,
);
const baseUser = results[0][2];
console.log('| case | median wall ms | ratio | mean user CPU ms | ratio |\n|---|---:|---:|---:|---:|');
for (const [name, ms, user] of results) {
  const u = Number.isNaN(user) ? '-' : `${user.toFixed(1)} | ${(user / baseUser).toFixed(2)}×`;
  console.log(`| ${name} | ${ms.toFixed(1)} | ${(ms / base).toFixed(2)}× | ${Number.isNaN(user) ? '- | -' : u} |`);
}
{
  const r = (name) => results.find(([n]) => n === name)?.[1];
  const unrouted = r("psql -c 'select 1', unrouted (same branch)");
  for (const how of ['sh launcher', 'sh launcher, session PG* set', 'node launcher']) {
    const routed = r(`psql -c 'select 1', routed, ${how}`);
    if (routed && unrouted)
      console.log(`routed psql (${how}) vs unrouted: ${(routed / unrouted).toFixed(2)}× (goal ≤ 1.3×)`);
  }
}

await hookRows();

execFileSync(pgx, ['agent', 'down', '--id', 'bench', '--now', '--cwd', dir], { env, stdio: 'ignore' });
spawnSync(pgx, ['agent', 'broker', 'stop'], { env, stdio: 'ignore' }); // the bench's own broker (its PGX_HOME goes next)
// The throwaway local server and all of its data (under /var/lib/pgx as root): pgx's own purge, which removes only its files.
if (!process.env.PGX_DATABASE_URL) spawnSync(pgx, ['local', 'down', '--purge', '--yes'], { env, stdio: 'ignore' });
for (const d of [home, dir, outside]) rmSync(d, { recursive: true, force: true });

// ---- One hook event as Claude Code sees it: a `/bin/sh -c <command>` child of a long-lived process, the payload on
// stdin, timed to its exit. The installed entry (`'<launcher>' agent hook pre-tool-use`) runs the launcher's sh part,
// which hands stdin to the broker with perl, else curl (decisions 441, 445); with PGX_SHELL_LAUNCHER=0 the same entry runs node, the
// light entry and the broker (the default before). Interleaved, median of BENCH_HOOK_RUNS (default 30). Ratios to the
// node command hook that does nothing (`node -e 0`), the goal being ≤ 0.3× for one event.
async function hookRows() {
  const body = payload(dir, 'abenchagent000001');
  const parentBody = payload(dir, undefined);
  const commandHook =
    (cmd, input = body, extra = {}) =>
    () =>
      new Promise((res) => {
        const c = spawn('/bin/sh', ['-c', cmd], {
          env: { ...env, ...extra },
          cwd: dir,
          stdio: ['pipe', 'pipe', 'ignore'],
        });
        let out = '';
        c.stdout.on('data', (d) => (out += d));
        c.stdin.on('error', () => {});
        c.stdin.end(input);
        c.on('close', () => res(out));
      });
  const entry = `'${pgx}' agent hook pre-tool-use`;
  const hookCases = [
    ['command hook `node -e 0` (does nothing)', commandHook(`${process.execPath} -e 0`)],
    ['command hook `cat > /dev/null`', commandHook('cat > /dev/null')],
    ['installed entry, subagent PreToolUse (sh → broker)', commandHook(entry)],
    [
      'installed entry, subagent PreToolUse (node → broker: PGX_SHELL_LAUNCHER=0)',
      commandHook(entry, body, { PGX_SHELL_LAUNCHER: '0' }),
    ],
    ['installed entry, parent PreToolUse (sh → broker)', commandHook(entry, parentBody)],
    [
      'installed entry, parent PreToolUse (node: PGX_SHELL_LAUNCHER=0)',
      commandHook(entry, parentBody, { PGX_SHELL_LAUNCHER: '0' }),
    ],
  ];
  const first = await hookCases[2][1]();
  const rewritten = /"updatedInput"/.test(first) && /--agent abenchagent000001/.test(first);
  const sameAsNode = first === (await hookCases[3][1]());
  const hookRuns = Number(process.env.BENCH_HOOK_RUNS ?? 30);
  const times = hookCases.map(() => []);
  for (let i = 0; i < hookRuns; i++) {
    for (const [j, [, fn]] of hookCases.entries()) {
      const t0 = performance.now();
      await fn();
      times[j].push(performance.now() - t0);
    }
  }
  const med = times.map((t) => median(t));
  console.log(
    `\nOne PreToolUse as Claude Code sees it (a sh -c child of a long-lived process), interleaved, median of ${hookRuns}; ratio to the do-nothing node hook`,
  );
  if (!rewritten) console.log(`(warning: the sh path's answer was not the subagent's rewrite: ${first.slice(0, 200)})`);
  console.log(`(the sh path's answer is ${sameAsNode ? 'byte-identical to' : 'NOT the same as'} the node path's)`);
  console.log('\n| case | median ms | ratio |\n|---|---:|---:|');
  hookCases.forEach(([name], j) =>
    console.log(`| ${name} | ${med[j].toFixed(1)} | ${(med[j] / med[0]).toFixed(2)}× |`),
  );
  console.log(
    `\none subagent PreToolUse through the installed entry vs a node do-nothing command hook: ${(med[2] / med[0]).toFixed(2)}× (goal ≤ 0.3×; node path ${(med[3] / med[0]).toFixed(2)}×)`,
  );
  console.log(
    `node processes started per subagent Bash command (the installed PreToolUse entries, run as Claude Code runs them): ${nodeProcessesPerBash()}`,
  );
}

/**
 * Node processes one subagent Bash call starts through the PreToolUse entries `pgx agent install claude` writes: each
 * entry matching Bash is run as Claude Code runs it (`/bin/sh -c`, the payload on stdin), with a `node` first on PATH
 * that counts its starts before it execs the real one.
 */
function nodeProcessesPerBash() {
  const root = mkdtempSync(join(tmpdir(), 'pgx-bench-install-'));
  try {
    const proj = join(root, 'p');
    mkdirSync(proj);
    writeFileSync(join(proj, '.pgx.toml'), '[project]\nname = "bench"\n');
    const shim = join(root, 'shim');
    mkdirSync(shim);
    const count = join(root, 'count');
    writeFileSync(join(shim, 'node'), `#!/bin/sh\necho x >> '${count}'\nexec '${process.execPath}' "$@"\n`, {
      mode: 0o755,
    });
    symlinkSync(pgx, join(shim, 'pgx')); // the project-scope entry runs the first pgx on PATH, as an npm install puts it there
    if (
      spawnSync(pgx, ['agent', 'install', 'claude', '--json'], {
        cwd: proj,
        env: { ...env, HOME: root, PATH: `${shim}:${env.PATH}` },
        stdio: 'ignore',
      }).status !== 0
    )
      return 'n/a (install failed)';
    rmSync(count, { force: true }); // the install's own node start is not a hook's
    let entries = 0;
    for (const f of ['settings.json', 'settings.local.json']) {
      const file = join(proj, '.claude', f);
      if (!existsSync(file)) continue;
      for (const group of JSON.parse(readFileSync(file, 'utf8')).hooks?.PreToolUse ?? []) {
        const m = group.matcher;
        if (m !== undefined && m !== '' && m !== '*' && !new RegExp(`^(?:${m})$`).test('Bash')) continue;
        for (const h of (group.hooks ?? []).filter((x) => x.type === 'command')) {
          entries++;
          spawnSync('/bin/sh', ['-c', h.command], {
            cwd: dir,
            env: { ...env, PATH: `${shim}:${env.PATH}` },
            input: payload(dir, 'abenchagent000001'),
          });
        }
      }
    }
    const n = existsSync(count) ? readFileSync(count, 'utf8').split('\n').filter(Boolean).length : 0;
    return `${n} node (${entries} PreToolUse entr${entries === 1 ? 'y' : 'ies'})`;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
