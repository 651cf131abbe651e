import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../lib/fsutil.js';
import { urlWithoutPassword, type ConnParams } from './conn-params.js';

/**
 * The names hosting platforms and ORMs read a connection URL from, besides DATABASE_URL (Vercel/Neon:
 * POSTGRES_URL, POSTGRES_PRISMA_URL, POSTGRES_URL_NON_POOLING, POSTGRES_URL_NO_SSL, DATABASE_URL_UNPOOLED; Railway:
 * DATABASE_PRIVATE_URL; Prisma's directUrl convention: DIRECT_URL). Each is set to the branch, like DATABASE_URL: an
 * inherited one would point a routed command's app at the shared database.
 */
const URL_ALIASES = [
  'DATABASE_URL',
  'POSTGRES_URL',
  'POSTGRES_PRISMA_URL',
  'POSTGRES_URL_NON_POOLING',
  'POSTGRES_URL_NO_SSL',
  'DATABASE_URL_UNPOOLED',
  'DATABASE_PRIVATE_URL',
  'DIRECT_URL',
];

/**
 * Variables that pick WHICH server/database/role libpq connects to, or override session settings. All are removed
 * before pgx sets its own, so a decoy inherited from the user's shell (DATABASE_URL pointing at the source, a
 * PGSERVICE with a pg_service.conf, PGOPTIONS='-c statement_timeout=0') can never redirect or unguard a command.
 * The platform's split variables (POSTGRES_HOST, POSTGRES_DATABASE…) are cleared rather than set: an app reading them
 * then fails loudly, or falls back to the PG* variables, instead of reaching the shared database.
 */
const TARGETING = [
  'PGSERVICE',
  'PGSERVICEFILE',
  'PGHOST',
  'PGHOSTADDR',
  'PGPORT',
  'PGUSER',
  'PGDATABASE',
  'PGPASSWORD',
  'PGPASSFILE',
  'PGOPTIONS',
  'PGTARGETSESSIONATTRS',
  ...URL_ALIASES,
  'POSTGRES_HOST',
  'POSTGRES_PORT',
  'POSTGRES_USER',
  'POSTGRES_PASSWORD',
  'POSTGRES_DATABASE',
  'POSTGRES_DB',
];

/** The environment for a child process connected to `p`. The password goes into PGPASSWORD only, never a URL or argv. */
export function libpqEnv(base: NodeJS.ProcessEnv, p: ConnParams): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of TARGETING) delete env[k];
  // The admin URL (with its password) is pgx's, not the command's: with branch roles, the command gets the role's.
  delete env.PGX_DATABASE_URL;
  delete env.PGX_DATABASE_URL_FILE;
  env.PGHOST = p.host;
  env.PGPORT = String(p.port);
  env.PGUSER = p.user;
  env.PGDATABASE = p.database;
  const url = urlWithoutPassword(p);
  for (const k of URL_ALIASES) env[k] = url;
  if (p.password) env.PGPASSWORD = p.password;
  // The URL's sslmode reaches the child too (libpq and node-postgres read PGSSLMODE), replacing an inherited one;
  // a URL without sslmode leaves the user's own PGSSLMODE in place, as pgx's own connections do.
  if (p.sslmode) env.PGSSLMODE = p.sslmode;
  return env;
}

export { TARGETING as LIBPQ_TARGETING_VARS };

/** A branch's 0600 passfile (SessionStart's env file and `agent up` point PGPASSFILE at it). */
export function passfilePath(home: string, branch: string): string {
  return join(home, 'agent', 'passfiles', `${branch}.pgpass`);
}

/**
 * Writes the branch's passfile (0600, in a 0700 directory) and returns its path; undefined when `p` has no password.
 * With branch roles it holds the branch role's password, which dies with the branch.
 */
export function writePassfile(home: string, p: ConnParams): string | undefined {
  if (!p.password) return undefined;
  const file = passfilePath(home, p.database);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const esc = (s: string) => s.replace(/[\\:]/g, (c) => `\\${c}`);
  writeFileSync(file, `${esc(p.host)}:${p.port}:${esc(p.database)}:${esc(p.user)}:${esc(p.password)}\n`, {
    mode: 0o600,
  });
  chmodSync(file, 0o600);
  return file;
}

const PINNED = ['PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE', ...URL_ALIASES, 'PGPASSWORD', 'PGSSLMODE'] as const;

/** Puts the branch's libpq variables back after a user's startup file ran (shared by the bash and zsh wrappers). */
const REPIN = `unset ${TARGETING.filter((k) => !(PINNED as readonly string[]).includes(k)).join(' ')}
${PINNED.map((k) => `if [ -n "\${PGX_PINNED_${k}+x}" ]; then export ${k}="$PGX_PINNED_${k}"; else unset ${k}; fi`).join('\n')}
`;

/** Static (no values, no secrets): sourced by bash before the command when the user had a BASH_ENV. */
const BASH_ENV_WRAPPER = `# Written by pgx; static, holds no values. \`pgx agent exec\` points BASH_ENV here when the user had a BASH_ENV:
# the user's file is sourced as before, then the branch's libpq variables are put back, so a BASH_ENV that exports
# PGDATABASE (or DATABASE_URL, PGSERVICE, ...) cannot redirect a routed command. Nested bash shells re-apply it.
if [ -n "\${PGX_USER_BASH_ENV:-}" ] && [ -r "$PGX_USER_BASH_ENV" ]; then . "$PGX_USER_BASH_ENV"; fi
${REPIN}`;

/** Static: zsh reads $ZDOTDIR/.zshenv (else ~/.zshenv) for every shell, \`zsh -c\` included. */
const ZSHENV_WRAPPER = `# Written by pgx; static, holds no values. \`pgx agent exec\` points ZDOTDIR here for \`zsh -c\`: the user's
# .zshenv is sourced as before (ZDOTDIR restored first), then the branch's libpq variables are put back.
if [ -n "\${PGX_USER_ZDOTDIR-}" ]; then ZDOTDIR="$PGX_USER_ZDOTDIR"; else unset ZDOTDIR; fi
if [ -r "\${ZDOTDIR:-$HOME}/.zshenv" ]; then . "\${ZDOTDIR:-$HOME}/.zshenv"; fi
${REPIN}`;

function writeIfChanged(file: string, text: string): void {
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== text) writeFileAtomic(file, text, 0o644);
}

function savePinned(env: NodeJS.ProcessEnv): void {
  for (const k of PINNED) {
    if (env[k] !== undefined) env[`PGX_PINNED_${k}`] = env[k];
  }
}

/**
 * Shells read startup files AFTER pgx has set the branch's variables: bash sources $BASH_ENV before \`bash -c\`, zsh
 * always reads .zshenv. A user's file that exports PGDATABASE would win. Route them through static wrappers that
 * source the user's file, then restore the pinned values. (fish and csh are never used as the inner shell.)
 */
export function pinAgainstShellStartup(env: NodeJS.ProcessEnv, home: string, shell: string): void {
  if (env.BASH_ENV) {
    const file = join(home, 'agent', 'bash-env.sh');
    writeIfChanged(file, BASH_ENV_WRAPPER);
    if (env.BASH_ENV !== file) env.PGX_USER_BASH_ENV = env.BASH_ENV;
    env.BASH_ENV = file;
    savePinned(env);
  }
  if (basename(shell) === 'zsh') {
    const dir = join(home, 'agent', 'zdotdir');
    writeIfChanged(join(dir, '.zshenv'), ZSHENV_WRAPPER);
    if (env.ZDOTDIR !== dir) {
      if (env.ZDOTDIR !== undefined) env.PGX_USER_ZDOTDIR = env.ZDOTDIR;
      else delete env.PGX_USER_ZDOTDIR;
    }
    env.ZDOTDIR = dir;
    savePinned(env);
  }
}

/** The admin URL for PGX_DATABASE_URL_FILE (config.ts): 0600, in pgx's 0700 agent directory. */
export function writeServerUrlFile(home: string, url: string): string {
  const file = join(home, 'agent', 'server-url');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, url + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}
