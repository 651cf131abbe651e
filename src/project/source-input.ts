// What `pgx source import --from` names: a postgres:// URL, a pg_dump directory, or a dump file (custom, tar or plain
// SQL), told apart by their first bytes. Parsing only (the CLI validates its input before the engine runs); the
// import itself is src/engine/source-import.ts.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { PgxError } from '../lib/errors.js';
import {
  checkUrlShape,
  nameableQueryKey,
  parseUrl,
  urlWithoutPassword,
  type ConnParams,
} from '../server/conn-params.js';
import { isSupportedUrl, unsupportedConnectionError, unsupportedConnectionString } from '../server/url-intake.js';

export type ImportFormat = 'server' | 'custom' | 'directory' | 'tar' | 'plain';

export interface ImportInput {
  kind: 'url' | 'path';
  /** The source server (kind url), password included: it only ever reaches pg_dump's environment. */
  conn?: ConnParams;
  path?: string;
  format: ImportFormat;
  /** What to print: the URL without its password, or the absolute path. */
  display: string;
  /** Query parameters of the URL pgx does not pass on (e.g. Prisma's `schema`). */
  droppedParams: string[];
  /** Where the URL or path came from, as a hint names it: "--from", "$DATABASE_URL (from /p/.env)", the remembered origin. */
  where: string;
}

/** URL query parameters parseUrl understands; others (Prisma's `schema`, `pgbouncer`…) are dropped with a note. */
const KEPT_PARAMS = ['sslmode', 'host', 'port', 'application_name', 'channel_binding', 'connect_timeout', 'password'];

/** `word://` or `word:/`: never a file name anyone means. */
const SCHEME_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\//;

/** Classifies `--from`: a postgres:// URL, a pg_dump directory, or a dump file (custom, tar or plain SQL). */
export function classifyInput(raw: string, cwd: string, where = '--from'): ImportInput {
  const from = raw.trim();
  // Before any file lookup: a mistyped scheme (postgress://, mysql://, user:pw@host) used to become a path, printed in
  // the "no such file" error with its password. An existing file of such a name is still a file.
  const refused = unsupportedConnectionString(from);
  if (refused !== undefined && (SCHEME_LIKE.test(from) || !existsSync(resolve(cwd, from))))
    throw unsupportedConnectionError(where, refused);
  if (isSupportedUrl(from)) {
    let u: URL;
    try {
      checkUrlShape(from, where); // first: a password's unencoded "?" or "#" would make the rest of it a query key below
      u = new URL(from);
    } catch (e) {
      if (e instanceof PgxError)
        throw new PgxError('USAGE', `The URL of ${where} ${e.message.replace(/^The server URL /, '')}`, e.hint);
      throw new PgxError(
        'USAGE',
        `The URL of ${where} is not a valid postgres:// URL.`,
        `Fix ${where}, e.g. postgresql://me@db.example.com:5432/shop_dev (the password is better in PGPASSWORD ` +
          `or a .env: --from-env DATABASE_URL).`,
      );
    }
    const unknown = [...new Set(u.searchParams.keys())].filter((k) => !KEPT_PARAMS.includes(k));
    // named in the import's warnings: only keys that read as parameter names
    const dropped = unknown.map((k) => (nameableQueryKey(k, u.searchParams) ? k : '(a parameter not shown)'));
    for (const k of unknown) u.searchParams.delete(k);
    let conn: ConnParams;
    try {
      conn = parseUrl(u.toString(), where);
    } catch (e) {
      throw new PgxError(
        'USAGE',
        `The URL of ${where}: ${(e as Error).message.replace(/^The server URL( \([^)]*\))?/, 'it')}`,
        e instanceof PgxError ? e.hint : `Fix ${where}.`,
      );
    }
    return { kind: 'url', conn, format: 'server', display: urlWithoutPassword(conn), droppedParams: dropped, where };
  }
  const path = resolve(cwd, from);
  if (!existsSync(path))
    throw new PgxError(
      'USAGE',
      `${where === '--from' ? '--from' : `${where}:`} ${path}: no such file or directory.`,
      'Give a postgres:// URL, a pg_dump file (-Fc, -Ft or plain SQL) or a pg_dump directory (-Fd).',
    );
  if (statSync(path).isDirectory()) {
    if (!existsSync(join(path, 'toc.dat')))
      throw new PgxError(
        'USAGE',
        `--from ${path} is a directory without toc.dat: not a pg_dump directory-format dump.`,
        'Make one with `pg_dump -Fd -f DIR`, or give a dump file.',
      );
    return { kind: 'path', path, format: 'directory', display: path, droppedParams: [], where };
  }
  const head = Buffer.alloc(512);
  const fd = openSync(path, 'r');
  const n = readSync(fd, head, 0, 512, 0);
  closeSync(fd);
  if (head.subarray(0, 5).toString('latin1') === 'PGDMP')
    return { kind: 'path', path, format: 'custom', display: path, droppedParams: [], where };
  if (n >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar')
    return { kind: 'path', path, format: 'tar', display: path, droppedParams: [], where };
  if (head[0] === 0x1f && head[1] === 0x8b)
    throw new PgxError(
      'USAGE',
      `--from ${path} is gzip-compressed.`,
      `Decompress it first (gunzip -k ${basename(path)}), then import the .sql file.`,
    );
  return { kind: 'path', path, format: 'plain', display: path, droppedParams: [], where };
}

/** The database name an import goes into when neither --into nor [project] source names one. */
export function defaultDatabaseName(input: ImportInput): string {
  const raw =
    input.kind === 'url'
      ? input.conn!.database
      : basename(input.path!).replace(/\.(sql|dump|pgdump|backup|bak|tar|custom|dir)$/i, '');
  return (
    raw
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_')
      .replace(/^[^a-z_]+/, '')
      .slice(0, 63) || 'source'
  );
}
