// What a .pgx.toml may say, and a file's text checked against it. Every key is checked with zod (.strict(): unknown keys
// are errors), and all problems are reported at once with the file and the key's path.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import * as z from 'zod/mini';
import { PgxError } from '../lib/errors.js';
import { unknownKeyNote } from './config-hints.js';
import { AGENT_TIMING, count, duration, guard, reserve, size } from './config-values.js';
import { isSupportedUrl, unsupportedConnectionString } from '../server/url-intake.js';
import { maskSection } from '../mask/rules.js';

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

/**
 * Databases that can't be a source: the registry (branches would carry pgx's own bookkeeping), PostgreSQL's templates
 * (template0 refuses connections; template1 is what every new database is copied from by default) and the maintenance
 * database `postgres` (pgx's own connections sit in it, and it is nobody's application data). pgx's templates
 * (pgx_tpl_…) are derived from a source, never one.
 */
export function sourceRefusal(name: string): string | undefined {
  if (name === 'pgx_registry' || name.startsWith('pgx_tpl_'))
    return `"${name}" is pgx's own database, not application data`;
  if (name === 'template0' || name === 'template1')
    return `"${name}" is one of PostgreSQL's template databases, not application data`;
  if (name === 'postgres')
    return `"postgres" is the server's maintenance database (pgx's own connections use it), not application data`;
  return undefined;
}

const sourceName = z.string().check(
  z.minLength(1),
  z.maxLength(63),
  z.refine((v) => sourceRefusal(v) === undefined, {
    error: (i) =>
      `${sourceRefusal(String(i.input))}; name the database your application uses, or remove source to start branches empty`,
  }),
);

const identifierLike = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(63),
    z.regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "-" and "." only'),
  );

const GUARD_DEFAULTS = {
  client_connection_check_interval: '5s',
  idle_in_transaction_session_timeout: '15m',
  statement_timeout: '1h',
} as const;

// Defaults are given as raw values (prefault) so they pass through the same transforms as user input.
const fileSchema = z.strictObject({
  server: z.prefault(
    z.strictObject({
      // the message never quotes the value (it may hold a password): only the scheme, or what kind of string it is
      url: z.optional(
        z.string().check(
          z.refine((v) => isSupportedUrl(v), {
            error: (i) =>
              `${unsupportedConnectionString(String(i.input)) ?? 'not a URL'}; it must start with postgres:// or postgresql://`,
          }),
        ),
      ),
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
      // When the session's branch can't be copied in time: "wait" (the subagent has no branch until the copy can be
      // made, and everyone hears it) or "template" (it gets the template instead, and everyone hears that): decision 485.
      fork_fallback: z._default(z.enum(['wait', 'template']), 'wait'),
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
  ...Object.fromEntries(
    Object.entries(fileSchema.shape).map(([t, v]) => [
      t,
      Object.keys((v._zod.def.innerType as z.ZodMiniObject).shape ?? {}),
    ]),
  ),
};

/**
 * smol-toml reports a string left open at the end of its line as "control characters are not allowed in strings"
 * (the newline is the control character): the position is then at the line's end, and the string opened at the
 * last quote before it. Returns where it opened, or undefined for any other error.
 */
function unterminatedString(
  text: string,
  line: number | undefined,
  column: number | undefined,
  what: string,
): { line: number; column: number; quote: string } | undefined {
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
export function parseConfigText(text: string | undefined, file: string | undefined): z.infer<typeof fileSchema> {
  let raw: unknown = {};
  if (text !== undefined) {
    try {
      raw = parseToml(text);
    } catch (e) {
      // The position and smol-toml's first line (what is wrong), never the rest: it quotes the offending lines, which
      // may hold a password in [server] url.
      const { line, column, message } = e as { line?: number; column?: number; message?: string };
      const at = line ? `:${line}${column ? `:${column}` : ''}` : '';
      const what = (message ?? '')
        .split('\n')[0]!
        .replace(/^Invalid TOML document:\s*/, '')
        .trim();
      const open = unterminatedString(text, line, column, what);
      if (open)
        throw new PgxError(
          'CONFIG_INVALID',
          `${file}:${open.line}:${open.column}: not valid TOML: unterminated string at line ${open.line} col ${open.column} ` +
            `(no closing ${open.quote}${open.quote.length === 1 ? ' on that line' : ''}).`,
          `Close the string with ${open.quote}${open.quote.length === 1 ? ' on the same line' : ''} (every key, ` +
            `with its syntax: ${exampleConfigPath()}), or regenerate the file with \`pgx init --force\`.`,
        );
      throw new PgxError(
        'CONFIG_INVALID',
        `${file}${at}: not valid TOML${what ? `: ${what}` : ''}.`,
        `Fix the syntax${line ? ` at line ${line}` : ''} of ${file} (every key, with its syntax: ${exampleConfigPath()}), ` +
          `or regenerate the file with \`pgx init --force\`.`,
      );
    }
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const path = i.path.join('.') || '(top level)';
      const msg =
        i.code === 'unrecognized_keys'
          ? `unknown key(s) ${i.keys.map((k) => unknownKeyNote(text, i.path.join('.'), k, KNOWN_KEYS)).join(', ')}`
          : i.message;
      return `  ${path}: ${msg}`;
    });
    const named = parsed.error.issues.map((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => (i.path.length ? `[${i.path.join('.')}] ${k}` : `[${k}]`)).join(', ')
        : i.path.length
          ? `[${i.path.slice(0, -1).join('.')}] ${String(i.path.at(-1))}`
          : '(top level)',
    );
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
