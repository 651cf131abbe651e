// Where an MCP server's command line and environment name a PostgreSQL database ("sites"), and the known database
// servers by package name. The hook uses it to tell a database server from any other (a subagent's call to one pgx
// does not route is refused), install to decide what to route, the front to point each copy at its branch: every
// site is replaced, in argv by a URL WITHOUT the password (the password goes in PGPASSWORD), in env by the branch's.
import type { StdioFields } from './servers.js';

/**
 * Database MCP servers by package (npm, PyPI, a container image), matched anywhere in the command or an argument
 * (`npx -y <pkg>`, `node …/node_modules/<pkg>/dist/index.js`, `uvx <pkg>`, `docker run … <image>`). Each reads
 * PostgreSQL (dbhub and its forks: several databases, PostgreSQL among them).
 */
export const KNOWN_DATABASE_PACKAGES = [
  '@modelcontextprotocol/server-postgres',
  '@bytebase/dbhub',
  '@blocklet/dbhub',
  'capybara-db-mcp',
  '@henkey/postgres-mcp-server',
  'mcp-postgres-server',
  'enhanced-postgres-mcp-server',
  'mcp-postgres-full-access',
  'postgres-mcp',
  'crystaldba/postgres-mcp',
  'mcp/postgres',
  'pg-mcp',
  'mcp-server-postgres',
] as const;

const URL_RE = /postgres(?:ql)?:\/\/[^\s'"]*/i;
const WHOLE_URL_RE = /^postgres(?:ql)?:\/\//i;

/** libpq's variables (and the platforms' URL names) that choose a server or database. */
const LIBPQ_ENV = /^(PG(HOST|HOSTADDR|PORT|USER|DATABASE|PASSWORD|PASSFILE|SERVICE|SERVICEFILE|OPTIONS)|DATABASE_URL)$/;
/** dbhub's split variables (DB_TYPE=postgres): each replaced by the branch's part. */
const SPLIT_ENV: Record<string, SplitPart> = {
  DB_HOST: 'host',
  DB_PORT: 'port',
  DB_USER: 'user',
  DB_PASSWORD: 'password',
  DB_NAME: 'database',
};
type SplitPart = 'host' | 'port' | 'user' | 'password' | 'database';

export type Site =
  /** An argument that is, or ends in, a URL (`postgresql://…`, `--dsn=postgresql://…`). */
  | { where: 'arg'; index: number; prefix: string; url: string }
  /** An environment variable whose value is a URL (DATABASE_URL, DSN, POSTGRES_URL, …). */
  | { where: 'env'; key: string; url: string }
  /** A libpq variable (PGHOST, PGDATABASE, …), replaced by the branch's libpq environment. */
  | { where: 'libpq'; key: string }
  /** A split variable (DB_HOST, …: dbhub's), replaced by the branch's part. */
  | { where: 'split'; key: string; part: SplitPart };

/** Every site of a stdio server's command line and env (its `${VAR}`s as written, or as Claude Code expanded them). */
export function databaseSites(s: Pick<StdioFields, 'args' | 'env'>): Site[] {
  const sites: Site[] = [];
  (s.args ?? []).forEach((arg, index) => {
    const m = URL_RE.exec(arg);
    if (m && m.index + m[0].length === arg.length)
      sites.push({ where: 'arg', index, prefix: arg.slice(0, m.index), url: m[0] });
  });
  const env = s.env ?? {};
  const splitPostgres = !env.DB_TYPE || /^postgres(ql)?$/i.test(env.DB_TYPE);
  for (const [key, value] of Object.entries(env)) {
    if (LIBPQ_ENV.test(key) && !WHOLE_URL_RE.test(value)) sites.push({ where: 'libpq', key });
    else if (WHOLE_URL_RE.test(value)) sites.push({ where: 'env', key, url: value });
    else if (key in SPLIT_ENV && splitPostgres && env.DB_TYPE !== undefined)
      sites.push({ where: 'split', key, part: SPLIT_ENV[key]! });
  }
  return sites;
}

/** The known database package the server runs, if any. */
export function knownPackage(s: Pick<StdioFields, 'command' | 'args'>): string | undefined {
  const words = [s.command, ...(s.args ?? [])];
  return KNOWN_DATABASE_PACKAGES.find((pkg) =>
    words.some(
      (w) =>
        w === pkg ||
        w.startsWith(`${pkg}@`) ||
        w.includes(`/${pkg}/`) ||
        w.endsWith(`/${pkg}`) ||
        w.includes(`node_modules/${pkg}`),
    ),
  );
}

/** Does this server reach a PostgreSQL database, as far as its entry shows (a site, or a known package)? */
export function isDatabaseServer(s: StdioFields): boolean {
  return databaseSites(s).length > 0 || knownPackage(s) !== undefined;
}

/** A URL's address: host (lower case; a loopback name as 127.0.0.1), port, database. Undefined: unreadable. */
export function urlAddress(url: string): { host: string; port: number; database: string } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const hostParam = u.searchParams.get('host');
  const host = loopback(decodeURIComponent(hostParam ?? u.hostname.replace(/^\[(.*)\]$/, '$1')) || 'localhost');
  const port = Number(u.searchParams.get('port') ?? (u.port || 5432));
  let database: string;
  try {
    database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  } catch {
    return undefined;
  }
  return { host, port, database: database || decodeURIComponent(u.username) || 'postgres' };
}

/** One name for the loopback host, so that `localhost`, `127.0.0.1` and `::1` compare equal. */
export function loopback(host: string): string {
  return ['localhost', '127.0.0.1', '::1', ''].includes(host.toLowerCase()) ? '127.0.0.1' : host.toLowerCase();
}

/**
 * Servers that read their databases from a file of their own before their command line: dbhub takes `./dbhub.toml`
 * (or `--config`) over `--dsn` (dbhub 0.21's order: demo, TOML, --dsn, DSN, .env). pgx can't point such a server at
 * a branch by its command line, so it is not routed (and its subagent calls stay refused).
 */
export function ownConfigFile(
  s: Pick<StdioFields, 'command' | 'args'>,
  cwd: string,
  exists: (f: string) => boolean,
): string | undefined {
  const pkg = knownPackage(s);
  if (pkg !== '@bytebase/dbhub' && pkg !== '@blocklet/dbhub' && pkg !== 'capybara-db-mcp') return undefined;
  const flag = (s.args ?? []).find((a) => a === '--config' || a.startsWith('--config='));
  if (flag) return flag;
  return exists(`${cwd}/dbhub.toml`) ? 'dbhub.toml' : undefined;
}
