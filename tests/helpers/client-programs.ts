// The PostgreSQL client programs on this machine, for tests that truly need one (issue 39: `npm test` passes on a
// machine with none). Such a test calls needs(ctx, …) first: where a program is missing it is skipped, and the
// reason (which program, and why the test needs it) is the skip's note and a warning on stderr, never a silent skip.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'vitest';

export type ClientProgram = 'psql' | 'pg_dump' | 'pg_restore';

/** On PATH, as a test's `spawn('psql', …)` or a routed command's shell finds it. */
export function onPath(program: string, path = process.env.PATH ?? ''): boolean {
  return path.split(':').some((d) => d !== '' && existsSync(join(d, program)));
}

/** The programs of `programs` this machine lacks (on `path`: a test that hides them from pgx passes the PATH it saved). */
export function lacking(programs: ClientProgram[], path = process.env.PATH ?? ''): ClientProgram[] {
  return programs.filter((p) => !onPath(p, path));
}

/** Why a test that needs `programs` can't run here, or undefined when it can. */
export function skipReason(programs: ClientProgram[], why: string, path?: string): string | undefined {
  const l = lacking(programs, path);
  return l.length ? `needs ${l.join(' and ')} (${why}), not installed on this machine` : undefined;
}

/** Skips the running test, saying why, unless every one of `programs` is on this machine. */
export function needs(ctx: TestContext, programs: ClientProgram[], why: string, path?: string): void {
  const reason = skipReason(programs, why, path);
  if (!reason) return;
  process.stderr.write(`SKIPPED "${ctx.task.name}": ${reason}\n`);
  ctx.skip(reason);
}

/**
 * How pgx copies a small database it can't clone by template on this machine: `pg_dump | psql` where both are here
 * (copy-method.ts picks it under 64 MB), else the Node copy (a machine with no client program, issue 39).
 */
export const smallCopyMethod = (): 'dump-restore' | 'node-copy' =>
  onPath('pg_dump') && onPath('psql') ? 'dump-restore' : 'node-copy';

/** Set by scripts/ci-bare.sh (.ci/run's bare-machine step): this run is meant to have no PostgreSQL program at all. */
export const TOLD_BARE = process.env.PGX_TEST_BARE === '1';

/** What `which psql pg_dump pg_restore` prints here (paths found; '' on a bare machine) and its exit status. */
export function whichClientPrograms(): { found: string; status: number | null } {
  const r = spawnSync('which', ['psql', 'pg_dump', 'pg_restore'], { encoding: 'utf8' });
  return { found: r.stdout.trim(), status: r.status };
}

/**
 * For a test about the bare machine: told it runs bare (PGX_TEST_BARE=1), it proves `which` finds none of the
 * programs (a failure otherwise: the step hid nothing); not told, it is skipped, saying why, where any is installed.
 */
export function bareMachine(ctx: TestContext): void {
  const w = whichClientPrograms();
  if (TOLD_BARE) {
    if (w.found !== '' || w.status === 0)
      throw new Error(`PGX_TEST_BARE=1 but \`which psql pg_dump pg_restore\` found: ${w.found}`);
    return;
  }
  if (w.found === '') return;
  const found = w.found.split('\n').join(', ');
  const reason =
    `a bare-machine test: PostgreSQL programs are installed here (${found}); ` +
    `.ci/run's bare step (scripts/ci-bare.sh) runs it with them hidden`;
  process.stderr.write(`SKIPPED "${ctx.task.name}": ${reason}\n`);
  ctx.skip(reason);
}
