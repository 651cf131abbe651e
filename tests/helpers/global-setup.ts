// Once per run: the test server, and the run's own temporary directory, checked empty at the end.
//
// The run root `<tmp>/pgx-tests-XXXXXX` becomes TMPDIR for the test workers (they fork after setup), so the
// cluster and every file's directory (file-hygiene.ts) live in it. After the suite, with the cluster stopped:
// - no process may still belong to the run (running in the run root, or naming it in its argv or environment);
// - the run root must be empty (each file removed its own; a file whose tests were all skipped leaves its empty one);
// - outside it: no new `pgx-*` entry in the system temp directory, no new entry in /var/lib/pgx, no ~/.pgx, and no
//   process started during the run from this checkout's launcher or dist/. Another process on a shared machine can
//   make those, so they fail the run in CI (CI=true) or with PGX_TEST_LEFTOVERS=strict, and are printed as a warning
//   otherwise (PGX_TEST_LEFTOVERS=warn: a warning in CI too).
// A leftover makes `npm test` exit 1, is printed, and is added to the JSON report (.tmp/vitest-report.json) as a
// failed entry "leftovers after the suite", which .ci/run counts as a failure. Then it is cleared.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startTestCluster, type TestCluster } from './cluster.js';
import {
  describeProc,
  processes,
  processesOf,
  removeTree,
  terminate,
  ticksNow,
  untilGone,
  type Proc,
} from './leftovers.js';

const REPO = resolve(import.meta.dirname, '../..');

let cluster: TestCluster | undefined;
let runRoot = '';
let systemTmp = '';
let startedAt = 0;
let reportFile: string | undefined;
let before: Outside;

interface Outside {
  tmp: string[];
  varLib: string[];
  pgxHome: boolean;
}

const list = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

function outside(): Outside {
  return {
    tmp: list(systemTmp).filter((n) => n.startsWith('pgx-') && !n.startsWith('pgx-tests-')),
    varLib: list('/var/lib/pgx'),
    pgxHome: existsSync(join(homedir(), '.pgx')),
  };
}

export async function setup(project: TestProject) {
  systemTmp = tmpdir();
  before = outside();
  startedAt = ticksNow();
  runRoot = mkdtempSync(join(systemTmp, 'pgx-tests-'));
  chmodSync(runRoot, 0o755); // the cluster user (postgres, when we are root) must traverse it
  process.env.PGX_TEST_RUN_ROOT = runRoot;
  process.env.TMPDIR = runRoot;
  const json = (project.config.outputFile as Record<string, string> | undefined)?.json;
  reportFile = json ? resolve(project.config.root, json) : undefined;
  cluster = await startTestCluster();
  project.provide('pg', {
    url: cluster.url,
    host: cluster.host,
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    kind: cluster.kind,
  });
  process.stderr.write(
    `pgx tests: PostgreSQL (${cluster.kind}) on ${cluster.host}:${cluster.port}; temp dir ${runRoot}\n`,
  );
}

export async function teardown() {
  await cluster?.stop();
  const failures: string[] = [];
  const warnings: string[] = [];

  // The test runner's own processes (the workers have TMPDIR = the run root in their environment) are not leftovers.
  const runner = (p: Proc) => p.cmd.includes('/node_modules/vitest/') || p.cmd.includes('/node_modules/.bin/vitest');
  const fromCheckout = (p: Proc) =>
    p.started >= startedAt && [join(REPO, 'bin', 'pgx.js'), join(REPO, 'dist') + '/'].some((s) => p.cmd.includes(s));
  const stayed = await untilGone(processesOf([runRoot], { ignore: runner }), 10_000);
  for (const p of stayed) failures.push(`still running after the suite: ${describeProc(p)}`);
  await terminate(stayed);

  for (const n of list(runRoot)) {
    // A file whose tests were all skipped runs no hooks, so its (empty) directory is still here: not a leftover.
    if (n.startsWith('f-') && !list(join(runRoot, n)).length) continue;
    failures.push(
      `left in the run's temp dir: ${join(runRoot, n)} (${list(join(runRoot, n)).slice(0, 5).join(', ') || 'empty'})`,
    );
  }
  const failed = removeTree(runRoot);
  if (failed) failures.push(`could not remove ${failed}`);

  // Outside the run root, what is new may be another process's on a shared machine: failed (and, if it is a
  // directory, removed) only in strict mode; a process is never killed on that guess.
  const now = outside();
  const strict =
    process.env.PGX_TEST_LEFTOVERS === 'strict' ||
    (process.env.CI === 'true' && process.env.PGX_TEST_LEFTOVERS !== 'warn');
  const elsewhere = [
    ...now.tmp.filter((n) => !before.tmp.includes(n)).map((n) => join(systemTmp, n)),
    ...now.varLib.filter((n) => !before.varLib.includes(n)).map((n) => join('/var/lib/pgx', n)),
    ...(now.pgxHome && !before.pgxHome ? [join(homedir(), '.pgx')] : []),
  ];
  for (const e of elsewhere)
    (strict ? failures : warnings).push(`new since the suite started (outside the run's temp dir): ${e}`);
  if (strict) for (const e of elsewhere) removeTree(e);
  // Started during the run from this checkout's launcher or dist/, not the runner: a pgx the tests started with an
  // environment that names nothing of the run (else it was found above).
  for (const p of processes().filter((p) => !runner(p) && fromCheckout(p)))
    (strict ? failures : warnings).push(`running from this checkout, started during the suite: ${describeProc(p)}`);

  if (warnings.length) {
    const shown = warnings.slice(0, 10).concat(warnings.length > 10 ? [`… and ${warnings.length - 10} more`] : []);
    process.stderr.write(
      `\npgx tests: warning (another process on this machine may have made these; CI fails on them):\n  - ${shown.join('\n  - ')}\n`,
    );
  }
  if (!failures.length) return;
  const message = `the suite left this behind (cleared now):\n  - ${failures.join('\n  - ')}`;
  process.stderr.write(`\npgx tests: FAILED: ${message}\n`);
  process.exitCode = 1;
  addToReport(message);
}

/** The JSON report is written before teardown: the leftovers go in as one failed entry, with no test of its own. */
function addToReport(message: string): void {
  if (!reportFile || !existsSync(reportFile)) return;
  const r = JSON.parse(readFileSync(reportFile, 'utf8'));
  const now = Date.now();
  r.testResults.push({
    name: 'leftovers after the suite (tests/helpers/global-setup.ts)',
    status: 'failed',
    message,
    assertionResults: [],
    startTime: now,
    endTime: now,
  });
  r.numTotalTestSuites += 1;
  r.numFailedTestSuites += 1;
  r.success = false;
  writeFileSync(reportFile, JSON.stringify(r));
}

declare module 'vitest' {
  export interface ProvidedContext {
    pg: { url: string; host: string; port: number; user: string; password: string; kind: string };
  }
}
