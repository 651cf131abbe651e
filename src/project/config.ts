// .pgx.toml discovery and validation. Every key is checked with zod (.strict(): unknown keys are errors),
// all problems are reported at once with the file and the key's path, then a typed Config goes onwards.
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import * as z from 'zod/mini';
import { PgxError } from '../lib/errors.js';
import { pgxHome } from './home.js';
import { unknownKeyNote } from './config-hints.js';
import { isSupportedUrl, unsupportedConnectionString } from '../server/url-intake.js';
import { maskSection, type MaskRule } from '../mask/rules.js';

export const CONFIG_FILE = '.pgx.toml';

let examplePath: string | undefined;
/**
 * Where this pgx's .pgx.toml.example is (the package root, found upward from the running code: dist/, a chunk, or
 * src/ in tests), so that hints can name a file the user can open; the bare name if it is not shipped.
 */
export function exampleConfigPath(): string {
  if (examplePath) return examplePath;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, '.pgx.toml.example'))) return (examplePath = join(dir, '.pgx.toml.example'));
  }
  return (examplePath = '.pgx.toml.example');
}

const DURATION_RE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** "5s", "15m", "2h", "1d", "500ms", or a number of seconds → milliseconds. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error('must be a non-negative number of seconds');
    return Math.round(value * 1000);
  }
  const m = DURATION_RE.exec(value.trim());
  if (!m) throw new Error(`"${value}" is not a duration like 5s, 15m, 2h, 1d`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
}

/**
 * What PostgreSQL accepts, checked here so that a value can't validate and then fail every branch. The guards are
 * integer GUCs in milliseconds (INT_MAX at most). The agent timings end up in `now() + ms * interval '1 millisecond'`
 * (the registry's deadlines): a timestamp must stay below year 294276, so pgx caps them at 100 years, far inside it.
 */
export const PG_INT_MAX = 2_147_483_647;
const HUNDRED_YEARS_MS = 100 * 365 * 86_400_000;

/** A duration string or number of seconds → milliseconds, within [minMs, maxMs]. */
function duration(range: { minMs: number; maxMs: number; max: string; why: string }) {
  return z.pipe(
    z.union([z.string(), z.number()]),
    z.transform((v: string | number, ctx) => {
      try {
        return inRange(parseDuration(v), v, range);
      } catch (e) {
        ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
        return z.NEVER;
      }
    }),
  );
}

function inRange(ms: number, v: string | number, range: { minMs: number; maxMs: number; max: string; why: string }): number {
  const shown = typeof v === 'number' ? `${v}` : `"${v}"`;
  if (ms > range.maxMs) throw new Error(`${shown} is too long: at most ${range.max} (${range.why})`);
  if (ms < range.minMs) throw new Error(`${shown} is too short: at least ${range.minMs / 1000}s`);
  return ms;
}

const AGENT_TIMING = { maxMs: HUNDRED_YEARS_MS, max: '36500d', why: 'a deadline PostgreSQL can store' } as const;
const GUARD_RANGE = { minMs: 0, maxMs: PG_INT_MAX, max: '2147483647ms (about 24.8 days)', why: 'PostgreSQL keeps these settings as an integer number of milliseconds' } as const;

/** A guard is a duration, or false / "off" to leave that setting alone (null). */
const guard = z.pipe(
  z.union([z.literal(false), z.string(), z.number()]),
  z.transform((v: false | string | number, ctx): number | null => {
    if (v === false || v === 'off') return null;
    try {
      return inRange(parseDuration(v), v, GUARD_RANGE);
    } catch (e) {
      ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
      return z.NEVER;
    }
  }),
);

const SIZE_RE = /^(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|GB|TB)?$/i;
const SIZE_UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 };

/** "512MB", "2GB", or a number of bytes → bytes. */
export function parseSize(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error('must be a non-negative number of bytes');
    return Math.round(value);
  }
  const m = SIZE_RE.exec(value.trim());
  if (!m) throw new Error(`"${value}" is not a size like 512MB or 2GB`);
  return Math.round(Number(m[1]) * SIZE_UNIT[(m[2] ?? 'b').toLowerCase()]!);
}

const size = z.pipe(
  z.union([z.string(), z.number()]),
  z.transform((v: string | number, ctx) => {
    try {
      return parseSize(v);
    } catch (e) {
      ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
      return z.NEVER;
    }
  }),
);
const count = z.int().check(z.gte(0), z.lte(256));

/** How much of a file system pgx leaves free: a size, a share of the file system's size, or (both) the smaller. */
export interface DiskReserve {
  bytes?: number;
  percent?: number;
}

/** Unset: 2 GB, or 10% of a file system smaller than 20 GB (a small data volume is not refused everything). */
export const DEFAULT_RESERVE: DiskReserve = { bytes: 2 * 1024 ** 3, percent: 10 };

const PERCENT_RE = /^(\d+(?:\.\d+)?)\s*%$/;

/** "2GB", a number of bytes, or "10%" (of the file system's size, at most 90%) → a reserve. */
export function parseReserve(value: string | number): DiskReserve {
  const m = typeof value === 'string' ? PERCENT_RE.exec(value.trim()) : null;
  if (!m) return { bytes: parseSize(value) };
  const percent = Number(m[1]);
  if (percent > 90) throw new Error(`"${value}" is more than 90% of the file system: nothing could ever be copied`);
  return { percent };
}

const reserve = z.pipe(
  z.union([z.string(), z.number()]),
  z.transform((v: string | number, ctx) => {
    try {
      return parseReserve(v);
    } catch (e) {
      ctx.issues.push({ code: 'custom', message: (e as Error).message, input: v });
      return z.NEVER;
    }
  }),
);
/**
 * Databases that can't be a source: the registry (branches would carry pgx's own bookkeeping), PostgreSQL's templates
 * (template0 refuses connections; template1 is what every new database is copied from by default) and the maintenance
 * database `postgres` (pgx's own connections sit in it, and it is nobody's application data). pgx's templates
 * (pgx_tpl_…) are derived from a source, never one.
 */
export function sourceRefusal(name: string): string | undefined {
  if (name === 'pgx_registry' || name.startsWith('pgx_tpl_')) return `"${name}" is pgx's own database, not application data`;
  if (name === 'template0' || name === 'template1') return `"${name}" is one of PostgreSQL's template databases, not application data`;
  if (name === 'postgres') return `"postgres" is the server's maintenance database (pgx's own connections use it), not application data`;
  return undefined;
}

const sourceName = z.string().check(
  z.minLength(1),
  z.maxLength(63),
  z.refine((v) => sourceRefusal(v) === undefined, { error: (i) => `${sourceRefusal(String(i.input))}; name the database your application uses, or remove source to start branches empty` }),
);

const identifierLike = z.string().check(z.minLength(1), z.maxLength(63), z.regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "-" and "." only'));

const GUARD_DEFAULTS = { client_connection_check_interval: '5s', idle_in_transaction_session_timeout: '15m', statement_timeout: '1h' } as const;

// Defaults are given as raw values (prefault) so they pass through the same transforms as user input.
const fileSchema = z.strictObject({
  server: z.prefault(
    z.strictObject({
      // the message never quotes the value (it may hold a password): only the scheme, or what kind of string it is
      url: z.optional(z.string().check(z.refine((v) => isSupportedUrl(v), { error: (i) => `${unsupportedConnectionString(String(i.input)) ?? 'not a URL'}; it must start with postgres:// or postgresql://` }))),
    }),
    {},
  ),
  project: z.prefault(z.strictObject({ name: z.optional(identifierLike), source: z.optional(sourceName) }), {}),
  agent: z.prefault(
    z.strictObject({
      idle_ttl: z.prefault(duration({ minMs: 1000, ...AGENT_TIMING }), '2h'),
      grace: z.prefault(duration({ minMs: 0, ...AGENT_TIMING }), '10m'),
      // A subagent's branch that changed something stays this long after its SubagentStop (decision 164); 0s: grace only.
      keep_changed: z.prefault(duration({ minMs: 0, ...AGENT_TIMING }), '24h'),
      session_branch: z._default(z.boolean(), true),
      unverified_claude_code: z._default(z.enum(['ask', 'rules']), 'ask'),
      roles: z._default(z.enum(['auto', 'per-branch', 'admin']), 'auto'),
      // What a subagent's branch starts as: its session's branch as it is at SubagentStart, or the template.
      fork: z._default(z.enum(['session', 'template']), 'session'),
      // The warm pool (src/engine/pool.ts; sizes decided in docs/pgx/local-dev/decisions/185-warm-pool.md).
      pool: z._default(count, 4),
      pool_max: z._default(count, 16),
      pool_max_bytes: z.prefault(size, '2GB'),
    }),
    {},
  ),
  // The disk budget (src/engine/disk-budget.ts; decision 410): what no copy pgx makes may take the file system below.
  disk: z.prefault(z.strictObject({ reserve: z.optional(reserve) }), {}),
  guards: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      client_connection_check_interval: z.prefault(guard, GUARD_DEFAULTS.client_connection_check_interval),
      idle_in_transaction_session_timeout: z.prefault(guard, GUARD_DEFAULTS.idle_in_transaction_session_timeout),
      statement_timeout: z.prefault(guard, GUARD_DEFAULTS.statement_timeout),
    }),
    {},
  ),
  // One rule per column of personal data: how pgx's copy replaces its values (src/mask/, decision 460).
  mask: z.prefault(maskSection, {}),
});

/** Each table's keys (the top level's: the tables), for "did you mean" on an unknown one. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': Object.keys(fileSchema.shape),
  // A table of fixed keys; [mask] is keyed by column names, so it has none to suggest.
  ...Object.fromEntries(Object.entries(fileSchema.shape).map(([t, v]) => [t, Object.keys((v._zod.def.innerType as z.ZodMiniObject).shape ?? {})])),
};

export type RolesMode = 'auto' | 'per-branch' | 'admin';

export type GuardName = 'client_connection_check_interval' | 'idle_in_transaction_session_timeout' | 'statement_timeout';

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
   * What libpq would take from the environment the config was read in, for serverUrl (db.ts parseUrl): USER (the
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
  const label = raw.toLowerCase().split('.')[0]!.replace(/[^a-z0-9]/g, '').slice(0, 16);
  return label || 'host';
}

/**
 * smol-toml reports a string left open at the end of its line as "control characters are not allowed in strings"
 * (the newline is the control character): the position is then at the line's end, and the string opened at the
 * last quote before it. Returns where it opened, or undefined for any other error.
 */
function unterminatedString(text: string, line: number | undefined, column: number | undefined, what: string): { line: number; column: number; quote: string } | undefined {
  if (!line || !column) return undefined;
  const lineText = text.split('\n')[line - 1]?.replace(/\r$/, '');
  if (lineText === undefined) return undefined;
  const atEnd = column > lineText.length;
  if (!(/control characters/.test(what) && atEnd) && !/unfinished string|unterminated/i.test(what)) return undefined;
  // a multi-line string ("""…) is reported where it opens; a one-line one where its line ends
  const m = /(["'])[^"']*$/.exec(lineText.slice(0, column - 1)) ?? /^(["'])/.exec(lineText.slice(column - 1));
  if (!m) return undefined;
  const opened = m.index === 0 && !atEnd && lineText.slice(column - 1).startsWith(m[1]!) ? column - 1 : m.index;
  const quote = lineText.slice(opened).startsWith(m[1]!.repeat(3)) ? m[1]!.repeat(3) : m[1]!;
  return { line, column: opened + 1, quote };
}

/** Parses and validates a .pgx.toml's text; every problem is reported at once, with its key path. */
function parseConfigText(text: string | undefined, file: string | undefined): z.infer<typeof fileSchema> {
  let raw: unknown = {};
  if (text !== undefined) {
    try {
      raw = parseToml(text);
    } catch (e) {
      // The position and smol-toml's first line (what is wrong), never the rest: it quotes the offending lines, which
      // may hold a password in [server] url.
      const { line, column, message } = e as { line?: number; column?: number; message?: string };
      const at = line ? `:${line}${column ? `:${column}` : ''}` : '';
      const what = (message ?? '').split('\n')[0]!.replace(/^Invalid TOML document:\s*/, '').trim();
      const open = unterminatedString(text, line, column, what);
      if (open) throw new PgxError('CONFIG_INVALID', `${file}:${open.line}:${open.column}: not valid TOML: unterminated string at line ${open.line} col ${open.column} (no closing ${open.quote}${open.quote.length === 1 ? ' on that line' : ''}).`, `Close the string with ${open.quote}${open.quote.length === 1 ? ' on the same line' : ''} (every key, with its syntax: ${exampleConfigPath()}), or regenerate the file with \`pgx init --force\`.`);
      throw new PgxError('CONFIG_INVALID', `${file}${at}: not valid TOML${what ? `: ${what}` : ''}.`, `Fix the syntax${line ? ` at line ${line}` : ''} of ${file} (every key, with its syntax: ${exampleConfigPath()}), or regenerate the file with \`pgx init --force\`.`);
    }
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const path = i.path.join('.') || '(top level)';
      const msg = i.code === 'unrecognized_keys' ? `unknown key(s) ${i.keys.map((k) => unknownKeyNote(text, i.path.join('.'), k, KNOWN_KEYS)).join(', ')}` : i.message;
      return `  ${path}: ${msg}`;
    });
    const named = parsed.error.issues.map((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => (i.path.length ? `[${i.path.join('.')}] ${k}` : `[${k}]`)).join(', ') : i.path.length ? `[${i.path.slice(0, -1).join('.')}] ${String(i.path.at(-1))}` : '(top level)'));
    throw new PgxError(
      'CONFIG_INVALID',
      `${file}: invalid configuration:\n${lines.join('\n')}`,
      `Fix or remove ${named.join('; ')} in ${file}; every key is documented in ${exampleConfigPath()}.`,
    );
  }
  return parsed.data;
}

/** Throws the same CONFIG_INVALID error loadConfig would, without touching the file system (`pgx init` checks first). */
export function validateConfigText(text: string, file: string): void {
  parseConfigText(text, file);
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
    throw new PgxError('CONFIG_INVALID', `PGX_DATABASE_URL_FILE names ${file}, which can't be read.`, 'It is written by pgx at SessionStart; restart the session, or set PGX_DATABASE_URL.');
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
  const serverUrlFrom = env.PGX_DATABASE_URL ? 'PGX_DATABASE_URL' : fromFile ? `PGX_DATABASE_URL_FILE (${env.PGX_DATABASE_URL_FILE})` : serverUrl ? `[server] url in ${file}` : undefined;
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
  if (!/^\d{1,3}$/.test(envValue) || Number(envValue) > 256) throw new PgxError('CONFIG_INVALID', `PGX_POOL must be a whole number from 0 to 256 (got "${envValue.slice(0, 20)}").`, 'Unset it, or set e.g. PGX_POOL=0 to turn the warm pool off.');
  return Number(envValue);
}
