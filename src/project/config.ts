// .pgx.toml discovery (inside a Claude Code worktree: the main checkout's) and the typed Config it becomes, with the
// environment's overrides (PGX_DATABASE_URL, PGX_POOL, PGX_HOST); the file's text is validated in config-schema.ts.
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { hostname } from 'node:os';
import { PgxError } from '../lib/errors.js';
import { pgxHome } from './home.js';
import { parseConfigText } from './config-schema.js';
import { DEFAULT_RESERVE, type DiskReserve } from './config-values.js';
import type { MaskRule } from '../mask/rules.js';

export const CONFIG_FILE = '.pgx.toml';

export type RolesMode = 'auto' | 'per-branch' | 'admin';

export type GuardName =
  'client_connection_check_interval' | 'idle_in_transaction_session_timeout' | 'statement_timeout';

export interface Config {
  /**
   * The directory holding .pgx.toml (in a Claude Code worktree: the main checkout's, see mainCheckoutConfig), or the
   * starting directory when there is none.
   */
  projectDir: string;
  /** Path of the .pgx.toml that was read; undefined when none was found (the project is out of scope for hooks). */
  file?: string;
  project: string;
  source?: string;
  /** The admin connection (a role with CREATEDB); undefined means the embedded local server. */
  serverUrl?: string;
  /** Where serverUrl came from, as a hint names it: "PGX_DATABASE_URL", "[server] url in /p/.pgx.toml", … */
  serverUrlFrom?: string;
  /**
   * What libpq would take from the environment the config was read in, for serverUrl (conn-params.ts parseUrl): USER (the
   * role when the URL names none) and PGSSLMODE. Carried here because one broker serves many environments
   * (decision 442); unset: the process's own.
   */
  serverEnv?: { USER?: string; PGSSLMODE?: string };
  host: string;
  idleTtlMs: number;
  graceMs: number;
  /** How long a subagent's branch that changed something is kept after its SubagentStop (at least its grace). */
  keepChangedMs: number;
  sessionBranch: boolean;
  /** On a Claude Code version the rewrite is not verified on: make every routed command ask, or trust the rules. */
  unverifiedClaudeCode: 'ask' | 'rules';
  /**
   * Which role a branch's commands connect as: `per-branch` (a login role of the branch's own, engine/roles.ts),
   * `admin` (the role of [server] url), or `auto`: per-branch when the admin role can create roles.
   */
  roles: RolesMode;
  /**
   * What a subagent's new branch is a copy of: its session's branch as it is at SubagentStart (`session`; the
   * template when there is none, or it can't be copied), or the template (engine/fork.ts).
   */
  fork: 'session' | 'template';
  /**
   * When a fork of the session's branch can't be made within the hook's time: `wait` (no branch until it can: the
   * subagent, its parent, the hook log and the doctor hear why) or `template` (the template instead, said as loudly).
   * Nothing else ever gives a subagent the template in place of its session's state (engine/fork-miss.ts).
   */
  forkFallback: 'wait' | 'template';
  guards: { enabled: boolean; settings: Record<GuardName, number | null> };
  /** Warm pool: the base size (0: no pool), the adaptive cap, and the disk budget counted from the template's size. */
  pool: { size: number; max: number; maxBytes: number };
  /** What every copy (branch, fork, reset, pool member, template build) leaves free on the server's file system. */
  disk: { reserve: DiskReserve };
  /** Where pgx keeps its own state (local server, hook log, passfiles). */
  home: string;
  /** [mask]: how each column of personal data is masked in pgx's copies (empty: no rules). */
  mask: MaskRule[];
}

export { pgxHome };

export function findConfigFile(startDir: string): string | undefined {
  let dir = resolve(startDir);
  for (;;) {
    const candidate = join(dir, CONFIG_FILE);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

const CLAUDE_WORKTREES = `${sep}.claude${sep}worktrees${sep}`;

/**
 * The main checkout's .pgx.toml for one found inside a Claude Code worktree, or undefined.
 *
 * Claude Code (2.1.328) makes its worktrees (`claude --worktree`, subagents with `isolation: worktree`) as git linked
 * worktrees at <root>/.claude/worktrees/<name>, and resolves their settings.local.json to <root>'s, where pgx's
 * permission rule names `--cwd <root>`. A worktree's own copy of a committed .pgx.toml would make the rewrite write
 * `--cwd <worktree>`, which that rule does not cover, and name an unnamed project after the worktree: pgx reads the
 * main checkout's file instead, as Claude Code does its settings (decisions/171-claude-worktrees-use-the-main-checkout.md).
 */
function mainCheckoutConfig(file: string): string | undefined {
  const dir = dirname(file);
  const at = `${dir}${sep}`.lastIndexOf(CLAUDE_WORKTREES);
  if (at <= 0) return undefined;
  const root = dir.slice(0, at);
  const rest = dir.slice(at + CLAUDE_WORKTREES.length);
  const worktree = join(root, '.claude', 'worktrees', rest.split(sep)[0]!);
  try {
    if (!lstatSync(join(worktree, '.git')).isFile()) return undefined; // a linked worktree has a .git FILE
  } catch {
    return undefined;
  }
  const main = join(root, relative(worktree, dir), CONFIG_FILE);
  return existsSync(main) ? main : undefined;
}

/** A host label safe inside a database name: lowercase [a-z0-9], at most 16 characters. */
export function hostLabel(raw: string): string {
  const label = raw
    .toLowerCase()
    .split('.')[0]!
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 16);
  return label || 'host';
}

/**
 * PGX_DATABASE_URL_FILE: a 0600 file holding the admin URL, which the SessionStart env file exports INSTEAD of
 * PGX_DATABASE_URL when the session's branch has a role, so that the password is in no variable of the agents'
 * shells while the routed `pgx agent exec` (which runs in those shells) still finds the server.
 */
function serverUrlFile(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    throw new PgxError(
      'CONFIG_INVALID',
      `PGX_DATABASE_URL_FILE names ${file}, which can't be read.`,
      'It is written by pgx at SessionStart; restart the session, or set PGX_DATABASE_URL.',
    );
  }
}

export function loadConfig(opts: { cwd?: string; env?: NodeJS.ProcessEnv; hostname?: string } = {}): Config {
  const env = opts.env ?? process.env;
  const cwd = resolve(opts.cwd ?? process.cwd());
  const found = findConfigFile(cwd);
  const file = found && (mainCheckoutConfig(found) ?? found);
  const c = parseConfigText(file ? readFileSync(file, 'utf8') : undefined, file);
  const projectDir = file ? dirname(file) : cwd;
  const fromFile = env.PGX_DATABASE_URL ? undefined : serverUrlFile(env.PGX_DATABASE_URL_FILE);
  const serverUrl = env.PGX_DATABASE_URL || fromFile || c.server.url || undefined;
  const serverUrlFrom = env.PGX_DATABASE_URL
    ? 'PGX_DATABASE_URL'
    : fromFile
      ? `PGX_DATABASE_URL_FILE (${env.PGX_DATABASE_URL_FILE})`
      : serverUrl
        ? `[server] url in ${file}`
        : undefined;
  return {
    projectDir,
    file,
    project: c.project.name ?? (basename(projectDir) || 'project'),
    source: c.project.source,
    serverUrl,
    serverUrlFrom,
    serverEnv: { USER: env.USER, PGSSLMODE: env.PGSSLMODE },
    host: hostLabel(env.PGX_HOST || opts.hostname || hostname()),
    idleTtlMs: c.agent.idle_ttl,
    graceMs: c.agent.grace,
    keepChangedMs: c.agent.keep_changed,
    sessionBranch: c.agent.session_branch,
    unverifiedClaudeCode: c.agent.unverified_claude_code,
    roles: c.agent.roles,
    fork: c.agent.fork,
    forkFallback: c.agent.fork_fallback,
    guards: {
      enabled: c.guards.enabled,
      settings: {
        client_connection_check_interval: c.guards.client_connection_check_interval,
        idle_in_transaction_session_timeout: c.guards.idle_in_transaction_session_timeout,
        statement_timeout: c.guards.statement_timeout,
      },
    },
    pool: { size: poolSizeFrom(env.PGX_POOL, c.agent.pool), max: c.agent.pool_max, maxBytes: c.agent.pool_max_bytes },
    disk: { reserve: c.disk.reserve ?? DEFAULT_RESERVE },
    home: pgxHome(env),
    mask: c.mask,
  };
}

/** PGX_POOL (a whole number) overrides [agent] pool: CI and tests turn the pool off without editing the file. */
function poolSizeFrom(envValue: string | undefined, fileValue: number): number {
  if (envValue === undefined || envValue === '') return fileValue;
  if (!/^\d{1,3}$/.test(envValue) || Number(envValue) > 256)
    throw new PgxError(
      'CONFIG_INVALID',
      `PGX_POOL must be a whole number from 0 to 256 (got "${envValue.slice(0, 20)}").`,
      'Unset it, or set e.g. PGX_POOL=0 to turn the warm pool off.',
    );
  return Number(envValue);
}
