// `pgx init`: write a commented .pgx.toml for the project. It never prompts (hooks, CI and agents run it without a
// TTY), so everything it needs comes from flags, with defaults that work: the embedded local server, no source.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CONFIG_FILE } from '../project/config.js';
import { describeError, isPgxError, PgxError } from '../lib/errors.js';
import { initProject } from '../project/init.js';
import { requireProjectDir } from '../project/markers.js';
import { connect } from '../server/db.js';
import { parseUrl, urlWithoutPassword } from '../server/conn-params.js';
import { unsupportedConnectionError, unsupportedConnectionString } from '../server/url-intake.js';
import { findDatabaseUrl } from '../project/dotenv.js';
import { action, withCommon, type CommonOpts } from './common.js';

interface InitOpts extends CommonOpts {
  url?: string;
  source?: string;
  name?: string;
  force?: boolean;
  check?: boolean;
  here?: boolean;
}

/** How long `init --url` waits for the server: long enough for a LAN server, short enough not to stall a typo. */
const CHECK_TIMEOUT_MS = 2000;

/**
 * `init --url` tries the URL once (a dead port, a wrong password) so that the mistake shows now and not at the first
 * SessionStart; the file is written either way (a server that is down today may be up tomorrow).
 */
async function tryServer(url: string): Promise<{ ok: true } | { ok: false; error: string; hint: string }> {
  try {
    const db = await connect({ ...parseUrl(url), connectTimeoutMs: CHECK_TIMEOUT_MS });
    await db.close();
    return { ok: true };
  } catch (e) {
    const d = describeError(e);
    return { ok: false, error: d.message, hint: d.hint };
  }
}

export const NEXT_AFTER_INIT = 'pgx agent install claude';
export const IMPORT_COMMAND = 'pgx source import --from-env DATABASE_URL';

function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.searchParams.delete('password'); // libpq reads a password from the query too
    return u.toString();
  } catch {
    return '(not a valid URL)';
  }
}

/** The flags of init and the keys they write: a hint names the flag the user typed. */
const FLAG_OF_KEY: [RegExp, string, string][] = [
  [/\bproject\.source\b/, '--source', '[project] source'],
  [/\bproject\.name\b/, '--name', '[project] name'],
  [/\bserver\.url\b/, '--url', '[server] url'],
];

export function flagHint(message: string): string {
  const named = FLAG_OF_KEY.filter(([re]) => re.test(message)).map(([, flag, key]) => `${flag} (it writes ${key})`);
  return named.length
    ? `Fix ${named.join(' and ')}; nothing was written.`
    : 'Fix --url, --source or --name; nothing was written.';
}

/** A CONFIG_INVALID from checking a flag's value is a usage error: same message and hint, exit 2. */
function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isPgxError(e) && e.code === 'CONFIG_INVALID') throw new PgxError('USAGE', e.message, e.hint);
    throw e;
  }
}

/** Registered by cli/commands.ts under `pgx`. */
export const under = 'pgx';

export function register(program: Command): void {
  withCommon(
    program.command('init').description('write a commented .pgx.toml in the project directory (never prompts)'),
  )
    .option('--url <url>', 'admin connection postgres://user@host:port/db (default: pgx runs its own local server)')
    .option('--source <db>', 'the database branches are cloned from (default: branches start empty)')
    .option('--name <name>', 'project name (default: the directory name)')
    .option('--force', 'overwrite an existing .pgx.toml')
    .option(
      '--here',
      'make this directory a project even with no project marker (.git, package.json, …), or in $HOME or /',
    )
    .option(
      '--no-check',
      'do not try to connect to --url (by default it is tried once, 2 s at most, and a failure is a warning)',
    )
    .action(
      action<InitOpts>(async (opts, out) => {
        const dir = resolve(opts.cwd ?? process.cwd());
        const refused = opts.url === undefined ? undefined : unsupportedConnectionString(opts.url);
        if (refused !== undefined) throw unsupportedConnectionError('--url', refused);
        requireProjectDir(dir, { here: opts.here, command: 'pgx init' });
        if (opts.url !== undefined) asUsage(() => parseUrl(opts.url!, '--url')); // its hint names --url, not .pgx.toml
        const existed = existsSync(join(dir, CONFIG_FILE));
        let r: ReturnType<typeof initProject>;
        try {
          r = initProject({ dir, url: opts.url, source: opts.source, name: opts.name, force: opts.force });
        } catch (e) {
          // The flags would have produced an invalid file (nothing was written): that is a usage error.
          if (isPgxError(e) && e.code === 'CONFIG_INVALID')
            throw new PgxError(
              'USAGE',
              e.message.replace(/invalid configuration/, 'these flags would write an invalid configuration'),
              flagHint(e.message),
            );
          throw e;
        }
        const server = opts.url ? urlWithoutPassword(parseUrl(opts.url)) : null;
        const hasPassword = !!opts.url && !!parseUrl(opts.url).password;
        if (hasPassword)
          out.progress(
            `warning: ${r.path} now holds a password; keep it out of version control, or use PGX_DATABASE_URL instead`,
          );
        const check = opts.url && opts.check !== false ? await tryServer(opts.url) : null;
        if (check && !check.ok)
          out.progress(
            `warning: ${check.error} ${r.path} was written anyway. ${check.hint} (--no-check skips this check.)`,
          );
        // An existing development database named in the environment or a .env: offer to make it the source.
        const found = opts.source ? undefined : findDatabaseUrl(dir);
        const offer = found
          ? { variable: 'DATABASE_URL', from: found.from, url: safeUrl(found.value), command: IMPORT_COMMAND }
          : null;
        const value = {
          path: r.path,
          project: r.name,
          server_url: server,
          server_check: check,
          source: opts.source ?? null,
          overwritten: existed,
          import: offer,
          next: offer ? IMPORT_COMMAND : NEXT_AFTER_INIT,
        };
        out.result(value, () =>
          [
            `wrote ${r.path}`,
            `  project ${r.name}`,
            `  server  ${server ?? 'the embedded local server (`pgx local up` starts it; hooks start it on demand)'}` +
              (check ? (check.ok ? ' (reached)' : ' (NOT reached: see the warning above)') : ''),
            `  source  ${opts.source ?? '(none: branches start from an empty database)'}`,
            offer
              ? `found DATABASE_URL in ${offer.from} (${offer.url}): to clone branches from that database, import it as the source:`
              : null,
            offer ? `  ${IMPORT_COMMAND}` : null,
            `next: ${value.next}${offer ? `, then ${NEXT_AFTER_INIT}` : ''}`,
          ]
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );
}
