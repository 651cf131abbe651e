// Typed errors: a stable code, a hint that names the next step, and a documented exit code.
// The one catch per command (src/cli/common.ts action()) maps them to the process exit status.

/** The documented exit codes, each with the line `pgx --help` prints for it (docs/pgx/local-dev/cli.md has the long form). */
const EXIT_TABLE = {
  ok: [0, 'success'],
  failure: [1, 'unexpected failure (a bug: rerun with DEBUG=pgx)'],
  usage: [2, 'usage error, or a destructive command without its confirmation flag'],
  config: [3, '.pgx.toml invalid'],
  server: [4, 'PostgreSQL unreachable / login refused / local server failed'],
  notFound: [5, 'branch not found'],
  refused: [
    6,
    'refused: the database is not a pgx branch (or the change would be dropped with it: adopt into an ended session)',
  ],
  branch: [7, 'creating or changing a branch failed'],
  doctor: [8, 'doctor found a failing check'],
  conflict: [
    9,
    'merge refused: both sides changed the same object or row since the fork point (each listed; nothing applied)',
  ],
  sql: [10, 'pgx local sql: the server refused a statement (its error is printed; the statements before it ran)'],
  // the child's own status passes through otherwise
  execFailed: [
    125,
    "agent exec could not start the command (127: not found, 126: not executable, as a shell's; otherwise " +
      "exec\n       exits with the command's status, 128+n on signal n)",
  ],
} as const;

type ExitName = keyof typeof EXIT_TABLE;
export const EXIT = Object.fromEntries(Object.entries(EXIT_TABLE).map(([k, [code]]) => [k, code])) as {
  readonly [K in ExitName]: (typeof EXIT_TABLE)[K][0];
};

/** The "Exit codes:" section of `pgx --help` (only there: every other help points to it, EXIT_CODES_POINTER). */
export const EXIT_CODES_HELP = `\nExit codes:\n${Object.values(EXIT_TABLE)
  .map(([code, means]) => `  ${String(code).padEnd(5)}${means}`)
  .join('\n')}`;

/** What every help but the top-level one says instead of repeating the table. */
export const EXIT_CODES_POINTER = '\nExit codes: `pgx --help` lists them (docs/pgx/local-dev/cli.md, "Exit codes").';

export type ErrorCode =
  | 'USAGE'
  | 'CONFIG_INVALID'
  | 'CONFIG_NOT_FOUND'
  | 'SERVER_UNREACHABLE'
  | 'SERVER_AUTH'
  | 'LOCAL_SERVER'
  | 'NOT_FOUND'
  | 'NOT_PGX_DATABASE'
  | 'REFUSED'
  | 'BRANCH_FAILED'
  | 'TEMPLATE_FAILED'
  | 'EXEC_FAILED'
  | 'IMPORT_FAILED'
  | 'INVALID_INPUT'
  | 'BROKER_UNAVAILABLE'
  | 'DISK_RESERVE'
  /** `pgx local sql`: a statement the server refused */
  | 'SQL_FAILED'
  /** init or install in $HOME, /, or a directory with no project marker, without --here (project/markers.ts) */
  | 'NOT_A_PROJECT'
  /** `agent merge`: an object or row both sides changed since the fork point (engine/merge.ts) */
  | 'MERGE_CONFLICT'
  /** `agent merge`: what it can't carry (rows left out, a statement outside a transaction), or a statement failed */
  | 'MERGE_FAILED';

const exitFor: Record<ErrorCode, number> = {
  USAGE: EXIT.usage,
  INVALID_INPUT: EXIT.usage,
  CONFIG_INVALID: EXIT.config,
  CONFIG_NOT_FOUND: EXIT.config,
  SERVER_UNREACHABLE: EXIT.server,
  SERVER_AUTH: EXIT.server,
  LOCAL_SERVER: EXIT.server,
  NOT_FOUND: EXIT.notFound,
  NOT_PGX_DATABASE: EXIT.refused,
  REFUSED: EXIT.refused,
  BRANCH_FAILED: EXIT.branch,
  TEMPLATE_FAILED: EXIT.branch,
  EXEC_FAILED: EXIT.execFailed,
  IMPORT_FAILED: EXIT.branch,
  // a copy that would take the server's file system below [disk] reserve (engine/disk-budget.ts)
  DISK_RESERVE: EXIT.branch,
  // off, no private socket directory, or it did not start: pgx refuses to serve over a socket others could reach
  BROKER_UNAVAILABLE: EXIT.refused,
  NOT_A_PROJECT: EXIT.usage,
  MERGE_CONFLICT: EXIT.conflict,
  // nothing applied: the session's branch is as it was
  MERGE_FAILED: EXIT.branch,
  SQL_FAILED: EXIT.sql,
};

export class PgxError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  readonly exitCode: number;
  /** Figures a script can use, printed with the error's `--json` (e.g. `disk`: the disk budget's refusal). No secrets. */
  readonly data?: Record<string, unknown>;
  constructor(
    code: ErrorCode,
    message: string,
    hint: string,
    options?: { cause?: unknown; data?: Record<string, unknown> },
  ) {
    // masked here too, so that a message printed without describeError (a doctor detail, a hook log reason, an
    // error wrapped into another's text) is as safe as one printed with it
    super(redactSecrets(message), options);
    this.name = 'PgxError';
    this.code = code;
    this.hint = redactSecrets(hint);
    this.exitCode = exitFor[code];
    if (options?.data) this.data = options.data;
  }
  toJSON() {
    return { code: this.code, message: this.message, hint: this.hint, exit_code: this.exitCode, ...this.data };
  }
}

export function isPgxError(e: unknown): e is PgxError {
  return e instanceof PgxError;
}

/** The exit status an error ends a command with: its documented code, or 1 for anything unclassified. */
export function exitCodeOf(e: unknown): number {
  return isPgxError(e) ? e.exitCode : EXIT.failure;
}

/**
 * Masks credentials in text that may quote user input (a TOML parser quoting the line of a url, a driver error, a
 * path built from a mistyped URL): in any word holding an "@", what lies between the first ":" of its user info
 * (after a leading "scheme://", if any) and its LAST "@" (a password may hold an unencoded "@") becomes `***`, so
 * `scheme://user:secret@host`, `scheme:/user:secret@host` and `/some/dir/user:secret@host` all lose the secret; and
 * `password=secret`, `PGPASSWORD=secret`, `password='a b'`, `"password":"secret"`, `password:secret` become `…=***`
 * (not `password: ` and a space: that is prose, e.g. a hint). It over-masks
 * rather than under-masks. The parsers never quote a URL in the first place (src/server/url-intake.ts); this is the second
 * line, applied to every error pgx prints.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(
      /(password|passwd|pwd)(\s*=\s*|"\s*:\s*|:(?!\s))('(?:[^'\\]|\\.)*'?\S*|"(?:[^"\\]|\\.)*"?\S*|\S+)/gi,
      '$1$2***',
    )
    .replace(/\S*@\S*/g, (word) => {
      const last = word.lastIndexOf('@');
      // the user info starts after a leading "scheme://" (a quote or bracket may come first), else at the word's start
      const scheme = /^[^A-Za-z]*[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(word);
      let colon = word.indexOf(':', scheme ? scheme[0].length : 0);
      // no ":" in the user info of a scheme pgx does not read: `me://secret@host` may be `me:` + a password
      if ((colon === -1 || colon > last) && scheme && !/postgres(ql)?:\/\/$/i.test(scheme[0]))
        colon = scheme[0].length - 3;
      return colon !== -1 && colon < last && word.slice(colon + 1, last) !== '***'
        ? `${word.slice(0, colon + 1)}***${word.slice(last)}`
        : word;
    });
}

/** Any error as {code, message, hint}, credentials masked: for hook outputs, --json error objects and stderr. */
export function describeError(e: unknown): { code: string; message: string; hint: string } & Record<string, unknown> {
  if (isPgxError(e)) return { code: e.code, message: redactSecrets(e.message), hint: redactSecrets(e.hint), ...e.data };
  const message = e instanceof Error ? e.message : String(e);
  return {
    code: 'UNEXPECTED',
    message: redactSecrets(message),
    hint: 'Run with DEBUG=pgx for details, and `pgx agent doctor`.',
  };
}
