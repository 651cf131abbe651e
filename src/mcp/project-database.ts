// What "this project's PostgreSQL" is, for telling which MCP servers reach it (install, `pgx mcp ls`, the doctor): pgx's
// server with the source, the template and the branches, and the dev database the source was imported from (its
// origin, recorded without a password). A server whose URL names none of these is another database: pgx leaves it
// out of the routing (its subagent calls are still refused by the hook, which can't tell without this: decision 492).
import { withEngine } from '../engine/api.js';
import { BRANCH_NAME_RE } from '../engine/identity.js';
import { parseUrl } from '../server/conn-params.js';
import { readState, runningPid } from '../server/local.js';
import type { Config } from '../project/config.js';
import { readProjectDotenv } from '../project/dotenv.js';
import { databaseSites, loopback, urlAddress, type Site } from './database-sites.js';
import type { StdioFields } from './servers.js';

export interface Address {
  host: string;
  port: number;
  database: string;
}

export interface ProjectDatabases {
  /** pgx's server (host, port), when known. */
  server?: { host: string; port: number };
  /** Database names on pgx's server that are this project's (source, template); branch names match BRANCH_NAME_RE. */
  names: string[];
  /** Where the source was imported from (the dev database), when recorded as a URL. */
  origins: Address[];
}

/** Does `a` name this project's database? */
export function isProjectAddress(a: Address, p: ProjectDatabases): boolean {
  const onServer = p.server && loopback(a.host) === loopback(p.server.host) && a.port === p.server.port;
  if (onServer && (p.names.includes(a.database) || BRANCH_NAME_RE.test(a.database))) return true;
  return p.origins.some((o) => loopback(o.host) === loopback(a.host) && o.port === a.port && o.database === a.database);
}

/**
 * `${VAR}` and `${VAR:-default}` expanded as Claude Code expands an MCP entry's command, args and env; a variable it
 * would not find stays as written (so it matches nothing).
 */
export function expandVariables(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, name: string, dflt?: string) => {
    const v = env[name];
    return v !== undefined && v !== '' ? v : dflt !== undefined ? dflt : whole;
  });
}

/** The server's fields with its `${VAR}`s expanded in `env` (the installer's environment and the project's .env). */
export function expanded(s: StdioFields, env: Record<string, string | undefined>): StdioFields {
  const x = (t: string) => expandVariables(t, env);
  return {
    command: x(s.command),
    ...(s.args ? { args: s.args.map(x) } : {}),
    ...(s.env ? { env: Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, x(v)])) } : {}),
  };
}

/** The project's .env files as a variable map (empty when absent or unreadable), for expanding `${VAR}`s. */
export function projectDotenv(projectDir: string): Record<string, string> {
  try {
    return Object.fromEntries([...readProjectDotenv(projectDir)].map(([k, e]) => [k, e.value]));
  } catch {
    return {};
  }
}

/** The addresses a server's sites name (a libpq or split site: the address its PG* or DB_* variables make up). */
export function siteAddresses(s: StdioFields, sites: Site[] = databaseSites(s)): Address[] {
  const out: Address[] = [];
  for (const site of sites) {
    if (site.where === 'arg' || site.where === 'env') {
      const a = urlAddress(site.url);
      if (a) out.push(a);
    }
  }
  const env = s.env ?? {};
  if (sites.some((x) => x.where === 'libpq' && x.key !== 'PGPASSWORD' && x.key !== 'PGPASSFILE'))
    out.push({
      host: loopback(env.PGHOST ?? env.PGHOSTADDR ?? 'localhost'),
      port: Number(env.PGPORT ?? 5432),
      database: env.PGDATABASE ?? env.PGUSER ?? 'postgres',
    });
  if (sites.some((x) => x.where === 'split'))
    out.push({
      host: loopback(env.DB_HOST ?? 'localhost'),
      port: Number(env.DB_PORT ?? 5432),
      database: env.DB_NAME ?? '',
    });
  return out;
}

/** Which of a server's addresses are this project's; none: it reaches another database (or none pgx can read). */
export function projectAddresses(s: StdioFields, p: ProjectDatabases): Address[] {
  return siteAddresses(s).filter((a) => isProjectAddress(a, p));
}

/** The names on pgx's server that are this project's, from the config (the branches are known by their shape). */
export function projectNames(config: Pick<Config, 'source'>, template?: string): string[] {
  return [config.source, template].filter((n): n is string => !!n);
}

/**
 * This project's databases as pgx knows them: its server (the URL's, or the embedded server's port), the source, and
 * the origin the source was imported from. The origin is read from the registry only where that starts nothing (a
 * server URL, or the embedded server already running) and within a few seconds; without it, a server pointing at the
 * dev database is not recognised as this project's (`originRead` says whether it was read).
 */
export async function projectDatabases(config: Config): Promise<ProjectDatabases & { originRead: boolean }> {
  let server: ProjectDatabases['server'];
  let reachable = false;
  try {
    if (config.serverUrl) {
      const p = parseUrl(config.serverUrl, config.serverUrlFrom, { ...process.env, ...config.serverEnv });
      server = { host: p.host, port: p.port };
      reachable = true;
    } else {
      const state = readState(config.home);
      if (state) {
        server = { host: '127.0.0.1', port: state.port };
        reachable = runningPid(state.data_dir) !== null;
      }
    }
  } catch {
    // a server URL pgx can't read: the doctor says so; no server known here
  }
  const names = projectNames(config);
  if (!reachable || !config.source) return { server, names, origins: [], originRead: false };
  try {
    const origin = await withEngine(config, (e) => e.sourceOrigin(), {
      quiet: true,
      connectDeadlineAt: Date.now() + 3000,
      statementTimeoutMs: 3000,
    });
    const a = origin && origin.kind !== 'file' ? urlAddress(origin.origin) : undefined;
    return { server, names, origins: a ? [a] : [], originRead: true };
  } catch {
    return { server, names, origins: [], originRead: false };
  }
}
