// Every test file (vitest setupFiles) gets a temporary directory of its own, and leaves nothing behind.
//
// Before the file loads, TMPDIR points at `<run root>/f-XXXXXX` (the run root: global-setup.ts), so whatever the
// file's tests make under tmpdir() — projects, PGX_HOMEs, homes, a broker's socket directory (`<tmp>/pgx-<uid>`), a
// child's own temp files (the helpers pass TMPDIR on) — is in it. When the file ends, after its own afterAll hooks:
// - brokers of its environments are stopped with their `stop` request (pgx starts them detached, to idle out after
//   10 minutes: that is pgx's design, so stopping them is the file's clean-up, not a leftover);
// - anything else of its still running (a pool filler, a local server, a claude, a child with an open pipe: what
//   keeps a worker from exiting, "[vitest-pool]: Timeout terminating forks worker") gets 15 s to end by itself; then
//   it is a leftover: named, and terminated;
// - a local server's data left under /var/lib/pgx (root) and a mount left inside are leftovers too, then cleared;
// - the directory is removed.
// A leftover fails the file (its name and what was left, in the report), so the test that leaks is found where it
// leaks. The run-wide check (anything outside these directories) is global-setup.ts's teardown.
import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, expect } from 'vitest';
import {
  describeProc,
  isBroker,
  localDataRootsOf,
  mountsUnder,
  processesOf,
  removeTree,
  stopBroker,
  terminate,
  untilGone,
  type Proc,
} from './leftovers.js';
import { REPO } from './pgx.js';

const runRoot = process.env.PGX_TEST_RUN_ROOT ?? tmpdir();
const fileDir = mkdtempSync(join(runRoot, 'f-'));
chmodSync(fileDir, 0o1777); // as /tmp is: the cluster user (tests as root) and the install test's ordinary user write here
process.env.TMPDIR = fileDir;

const under = (path: string, root: string) => path === root || path.startsWith(root + '/');

afterAll(async () => {
  const file = relative(REPO, expect.getState().testPath ?? '') || 'this file';
  const problems: string[] = [];
  const localRoots = localDataRootsOf(fileDir);
  const ours = (): Proc[] => processesOf([fileDir, ...localRoots], { parents: [process.pid] });

  const brokers = ours().filter(isBroker);
  for (const b of brokers) {
    if (!under(b.cwd, fileDir))
      problems.push(
        `a broker whose socket directory is outside the file's temp dir (its environment lacks TMPDIR): ${describeProc(b)}`,
      );
    await stopBroker(b);
  }
  // A broker that served a fan-out closes its kept registry connections before it exits: 2.8-11.8 s measured after
  // the fan-out file. Slower than 5 s is said; only one still there after 30 s is a leftover.
  const slow = await untilGone(brokers, 5000);
  if (slow.length)
    process.stderr.write(`${file}: ${slow.length} broker(s) took more than 5 s to exit on their stop request\n`);
  const deaf = await untilGone(slow, 30_000);
  for (const b of deaf) problems.push(`a broker that did not exit within 30 s of its stop request: ${describeProc(b)}`);

  const rest = ours().filter((p) => !isBroker(p));
  const stayed = await untilGone(rest, 15_000);
  for (const p of stayed) problems.push(`still running 15 s after the file's last test: ${describeProc(p)}`);
  await terminate([...deaf, ...stayed, ...ours()]);

  for (const d of localRoots.filter((d) => existsSync(d))) {
    problems.push(`a local server's data directory (pgx local up as root), not removed: ${d}`);
    const failed = removeTree(d);
    if (failed) problems.push(`could not remove ${failed}`);
  }
  for (const m of mountsUnder(fileDir)) problems.push(`a file system still mounted: ${m}`);
  const failed = removeTree(fileDir);
  if (failed) problems.push(`could not remove the file's temp dir: ${failed}`);
  process.env.TMPDIR = runRoot;

  if (problems.length) throw new Error(`${file} left this behind (cleared now):\n  - ${problems.join('\n  - ')}`);
}, 90_000);
