// The command line and environment of a copy of the user's MCP server for one branch: the user's own command and
// args, with every database site (database-sites.ts) pointing at the branch, and libpq's environment for it. The
// password reaches the copy as libpq and node-postgres read it, in PGPASSWORD (and DB_PASSWORD for dbhub's split
// form): never in its argv, which every user of the machine can read (/proc/<pid>/cmdline).
import type { ConnParams } from '../server/conn-params.js';
import { urlWithoutPassword } from '../server/conn-params.js';
import { libpqEnv } from '../server/libpq-env.js';
import { existsSync } from 'node:fs';
import { databaseSites, ownConfigFile, type Site } from './database-sites.js';

export interface CopyCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** What was pointed at the branch, for the log: `arg 2`, `env DSN`, `env PGHOST`. */
  replaced: string[];
}

/**
 * The copy for the branch `conn`, or why there can be none (no site at all: pgx could not tell where the server
 * connects, so it would not be confined to the branch).
 */
export function copyCommand(
  original: { command: string; args?: string[] },
  baseEnv: NodeJS.ProcessEnv,
  conn: ConnParams,
  cwd: string,
): CopyCommand | { refused: string } {
  const own = ownConfigFile(original, cwd, existsSync);
  if (own)
    return {
      refused: `it reads its databases from ${own} before its command line, so pgx cannot point it at your branch`,
    };
  const env = Object.fromEntries(Object.entries(baseEnv).filter((e): e is [string, string] => e[1] !== undefined));
  const sites: Site[] = databaseSites({ args: original.args, env });
  if (sites.length === 0)
    return {
      refused:
        'its command line and environment name no PostgreSQL database (no postgres:// URL, no PG* or DB_* variable), ' +
        'so pgx cannot point a copy of it at your branch',
    };
  const url = urlWithoutPassword(conn);
  const args = [...(original.args ?? [])];
  const replaced: string[] = [];
  const next = libpqEnv(env, conn);
  for (const site of sites) {
    if (site.where !== 'arg' && site.key.startsWith('PGX_')) continue; // pgx's own (libpqEnv removed the admin URL)
    if (site.where === 'arg') {
      args[site.index] = site.prefix + url;
      replaced.push(`arg ${site.index}`);
    } else if (site.where === 'env') {
      next[site.key] = url;
      replaced.push(`env ${site.key}`);
    } else if (site.where === 'split') {
      const part = { host: conn.host, port: String(conn.port), user: conn.user, database: conn.database };
      if (site.part === 'password') {
        if (conn.password) next[site.key] = conn.password;
        else delete next[site.key];
      } else next[site.key] = part[site.part];
      replaced.push(`env ${site.key}`);
    } else replaced.push(`env ${site.key}`); // libpqEnv set (or removed) it
  }
  return { command: original.command, args, env: next, replaced };
}
