// A fix that is one SQL statement, as a command that reaches the server the project uses: `pgx local sql` for the
// embedded local server (a bare `psql` or `createdb` would go to the system's socket, and the local server's
// password lives only in pgx's state; `pgx local sql` needs no psql either: decision 487), else psql with [server] url
// (no password: libpq asks, or reads PGPASSWORD).
import type { Config } from '../project/config.js';
import { urlWithoutPassword, type ConnParams } from '../server/conn-params.js';
import { shellQuote } from '../lib/shell.js';

export function sqlFix(config: Config | undefined, admin: ConnParams | undefined, statement: string): string {
  if (!config?.serverUrl) return `pgx local sql -c ${shellQuote(statement)}`;
  const url = admin ? urlWithoutPassword(admin) : undefined;
  return `psql ${url ? shellQuote(url) : '-d postgres'} -c ${shellQuote(statement)}`;
}
