// The real-Claude-Code fan-out rows: 20 subagents in one message, pgx with the hooks install writes (the launcher's sh
// part: no node, decision 441) and with PGX_SHELL_LAUNCHER=0 (node, the default before), against `cat > /dev/null`
// hooks and do-nothing node hooks, all in one run of tests/e2e/pgx-fanout.test.ts (ratios only;
// that test asserts isolation, never a time). The run is the test suite's: `npm test` records it in
// .tmp/pgx-e2e-figures.jsonl, and CI runs the bench right after the suite, so this prints that record. With
// BENCH_CLAUDE_FANOUT=1 the bench runs the file itself first (about 1.5 min on 2 cores). Without the pinned Claude
// Code binary (scripts/install-claude-code.sh) there is nothing to run or print, and a line says so.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '..');
const figuresFile = join(repo, '.tmp', 'pgx-e2e-figures.jsonl');
const claude =
  process.env.PGX_CLAUDE_BIN ?? join(repo, 'tests/e2e/.cc/node_modules/@anthropic-ai/claude-code-linux-x64/claude');

if (!existsSync(claude)) {
  console.log('\nreal Claude Code fan-out: skipped (no Claude Code binary: scripts/install-claude-code.sh)');
  process.exit(0);
}
if (process.env.BENCH_CLAUDE_FANOUT === '1') {
  const r = spawnSync('npx', ['vitest', 'run', 'tests/e2e/pgx-fanout.test.ts'], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) console.log(`\nreal Claude Code fan-out: the run failed (vitest exited ${r.status})`);
}
const last = existsSync(figuresFile)
  ? readFileSync(figuresFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((f) => f.scenario === '3-fanout-vs-trivial-hooks' && f.node_launcher_ratio !== undefined)
      .at(-1)
  : undefined;
if (!last) {
  console.log(
    '\nreal Claude Code fan-out: no record yet (npm test, or BENCH_CLAUDE_FANOUT=1, runs tests/e2e/pgx-fanout.test.ts)',
  );
  process.exit(0);
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const x = (v) => (typeof v === 'number' ? `${v.toFixed(2)}×` : '-');
const procs = (p) =>
  p
    ? Object.entries(p)
        .map(([e, n]) => `${e} ${n}`)
        .join(', ')
    : '-';
console.log(
  `\nreal Claude Code ${last.claude_code} fan-out, 20 subagents, one psql each (run of ${last.time}; sums of 2 rounds, ratio to \`cat > /dev/null\` hooks)\n`,
);
// The whole machine's CPU during the runs: on two cores, what pgx's work costs in CPU shows up in Claude Code's wall time.
const cpu = (k) => (last.cpu_ms?.[k] !== undefined ? String(last.cpu_ms[k]) : '-');
console.log(
  '| hooks | wall ms | ratio | machine CPU ms | hook processes started (by event) |\n|---|---:|---:|---:|---|',
);
console.log(`| \`cat > /dev/null\` | ${sum(last.wall_ms_trivial)} | 1.00× | ${cpu('trivial')} | - |`);
if (last.wall_ms_node_nothing)
  console.log(
    `| node, doing nothing | ${sum(last.wall_ms_node_nothing)} | ${x(last.node_nothing_ratio)} | ${cpu('node')} | - |`,
  );
console.log(
  `| pgx, as installed (sh → broker) | ${sum(last.wall_ms_pgx)} | ${x(last.pgx_ratio ?? last.ratio)} | ${cpu('pgx')} | ${procs(last.pgx_hook_processes)} |`,
);
console.log(
  `| pgx, node launcher (PGX_SHELL_LAUNCHER=0) | ${sum(last.wall_ms_node_launcher)} | ${x(last.node_launcher_ratio)} | ${cpu('node_launcher')} | ${procs(last.node_launcher_hook_processes)} |`,
);
console.log(
  `\nPreToolUse as Claude Code saw it (mean): pgx as installed ${last.pgx_cc_pre_tool_use_mean_ms ?? '-'} ms, node launcher ${last.node_launcher_cc_pre_tool_use_mean_ms ?? '-'} ms, do-nothing node ${last.node_nothing_cc_pre_tool_use_mean_ms ?? '-'} ms; as installed vs do-nothing node ${x(last.pgx_pre_tool_use_vs_node_nothing)} (goal ≤ 0.3×)`,
);
console.log(
  `node processes started by the hooks and routed commands in the run (a SessionStart's, when no broker ran yet): ${last.pgx_node_starts ?? '-'}`,
);
console.log(`20 subagents, pgx as installed vs \`cat > /dev/null\`: ${x(last.pgx_ratio ?? last.ratio)} (goal ≤ 1.3×)`);
