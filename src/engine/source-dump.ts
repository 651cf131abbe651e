// An import's dump way (engine/source-copy.ts orchestrates): pg_dump of the origin to a private custom-format file,
// then pg_restore (psql for a plain SQL dump) into pgx's copy; the dump file given to `--from` takes the second half
// only. Progress from the tools' verbose output; ownership and grants to roles this server lacks are tolerated errors.
import { spawn } from 'node:child_process';
import { createReadStream, statSync } from 'node:fs';
import { PgxError } from '../lib/errors.js';
import * as catalog from '../server/catalog.js';
import { clientToolPath, findClientTool, GET_CLIENT_TOOLS } from '../server/client-tools.js';
import { libpqEnv } from '../server/libpq-env.js';
import type { EngineContext } from './context.js';
import { pgDumpFailure } from './dump-errors.js';
import type { ImportInput } from '../project/source-input.js';

export type Progress = (msg: string) => void;

/** Runs a client tool; password only in its environment; stderr lines go to `onLine`. Resolves with its exit status. */
function runTool(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onLine: (line: string) => void,
  stdin?: { file: string; onBytes: (n: number) => void },
): Promise<{ status: number; stdout: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { env, stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => {
      const lines = (pending + d.toString()).split('\n');
      pending = lines.pop()!;
      lines.forEach(onLine);
    });
    if (stdin) {
      const rs = createReadStream(stdin.file);
      rs.on('data', (chunk) => stdin.onBytes(chunk.length));
      rs.pipe(child.stdin!);
      child.stdin!.on('error', () => rs.destroy());
    }
    child.on('error', (err) =>
      reject(
        new PgxError(
          'EXEC_FAILED',
          `Could not run ${cmd}: ${err.message}`,
          'Check the PostgreSQL client tools (PGX_PG_BINDIR).',
        ),
      ),
    );
    child.on('close', (code, signal) => {
      if (pending) onLine(pending);
      resolveRun({ status: code ?? (signal ? 128 : 1), stdout });
    });
  });
}

/** At most one progress line a second, plus the last one. */
export function throttled(progress: Progress): Progress & { flush(): void } {
  let last = 0;
  let held: string | undefined;
  const f = ((msg: string) => {
    const now = Date.now();
    if (now - last >= 1000) {
      last = now;
      held = undefined;
      progress(msg);
    } else held = msg;
  }) as Progress & { flush(): void };
  f.flush = () => {
    if (held) progress(held);
    held = undefined;
  };
  return f;
}

/** Owners named in a dump: the last field of each `pg_restore -l` entry, or `OWNER TO x` in a plain SQL dump. */
async function ownersOf(
  input: ImportInput,
  file: string,
  home: string,
  env: NodeJS.ProcessEnv,
): Promise<{ owners: string[]; items: number }> {
  const owners = new Set<string>();
  if (input.format === 'plain') {
    let tail = '';
    let items = 0;
    await new Promise<void>((res, rej) => {
      createReadStream(file, { encoding: 'utf8' })
        .on('data', (chunk) => {
          const text = tail + (chunk as string);
          for (const m of text.matchAll(/OWNER TO ("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*);/g))
            owners.add(m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!.toLowerCase());
          items += (text.match(/;\n/g) ?? []).length;
          tail = text.slice(-200);
        })
        .on('end', () => res())
        .on('error', rej);
    });
    return { owners: [...owners], items };
  }
  const pgRestore = findClientTool('pg_restore', home, '`pgx source import`');
  const r = await runTool(pgRestore, ['-l', file], env, () => {});
  if (r.status !== 0)
    throw new PgxError(
      'USAGE',
      `pg_restore cannot read ${input.display} (exit ${r.status}).`,
      'Check that it is a pg_dump file made by a pg_dump no newer than pg_restore (`pg_restore --version`).',
    );
  let items = 0;
  for (const line of r.stdout.split('\n')) {
    const m = /^\d+; \d+ \d+ \S+ .* (\S+)$/.exec(line);
    if (!m) continue;
    items++;
    if (m[1] !== '-') owners.add(m[1]!);
  }
  return { owners: [...owners], items };
}

/** Errors a restore may hit without the data being wrong: ownership or grants to a role this server lacks. */
const TOLERATED = [
  /role "[^"]+" does not exist/,
  /must be owner of (extension|schema) /,
  /schema "public" already exists/,
];

/** The origin's connection for pg_dump and the fingerprint: a URL without a password takes the user's PGPASSWORD / PGPASSFILE / ~/.pgpass. */
function originEnv(input: ImportInput): NodeJS.ProcessEnv {
  const env = libpqEnv(process.env, input.conn!);
  if (!input.conn!.password) {
    if (process.env.PGPASSWORD) env.PGPASSWORD = process.env.PGPASSWORD;
    if (process.env.PGPASSFILE) env.PGPASSFILE = process.env.PGPASSFILE;
  }
  return env;
}

/** A dump file needs pg_restore (psql for a plain SQL one): without it, refused before anything is made. */
export function refuseDumpWithoutTools(input: ImportInput, home: string): void {
  if (input.kind !== 'path') return;
  const tool = input.format === 'plain' ? 'psql' : 'pg_restore';
  if (clientToolPath(tool, home)) return;
  throw new PgxError(
    'EXEC_FAILED',
    `${input.display} is a pg_dump ${input.format === 'plain' ? 'SQL script' : 'archive'}: only ${tool} can read it, ` +
      `and there is none here (PGX_PG_BINDIR, PATH, the local server's binaries).`,
    'Import from the database itself instead: `pgx source import --from postgres://…` or `--from-env DATABASE_URL` ' +
      `(copied with Node alone, no client program needed); or install ${tool} (${GET_CLIENT_TOOLS}).`,
  );
}

/** pg_dump of the origin into `file` (custom format). */
export async function dumpOrigin(e: EngineContext, input: ImportInput, file: string, o: { progress: Progress }) {
  const progress = throttled(o.progress);
  const pgDump = findClientTool('pg_dump', e.config.home, '`pgx source import`');
  let tables = 0;
  const tail: string[] = [];
  o.progress(`dumping ${input.display} …`);
  const r = await runTool(pgDump, ['-Fc', '--verbose', '-f', file], originEnv(input), (line) => {
    const m = /dumping contents of table "?([^"]+)"?/.exec(line);
    if (m) progress(`dumping: ${++tables} table(s), now ${m[1]}`);
    else if (!/^pg_dump: /.test(line) || /error|fatal/i.test(line)) tail.push(line);
  });
  progress.flush();
  if (r.status !== 0) throw pgDumpFailure(input.display, r.status, tail, input.where);
}

/** The dump's owners: created NOLOGIN on pgx's own server, else reported (their objects fall back to the admin role). */
export async function ownersForDump(e: EngineContext, input: ImportInput, file: string, name: string) {
  const env = libpqEnv(process.env, { ...e.admin, database: name });
  const { owners, items } = await ownersOf(input, file, e.config.home, env);
  const present = await catalog.existingRoles(e.registry, owners);
  const missing = owners.filter((r) => !present.has(r));
  const rolesCreated: string[] = [];
  if (!e.config.serverUrl)
    for (const role of missing) if (await catalog.createNoLoginRole(e.registry, role)) rolesCreated.push(role);
  return { items, rolesCreated, missing: e.config.serverUrl ? missing : [] };
}

/** pg_restore (psql for a plain dump) of `file` into `name`; the tolerated errors' count, or a refusal. */
export async function restoreDump(
  e: EngineContext,
  input: ImportInput,
  file: string,
  name: string,
  database: string,
  o: { progress: Progress; items: number },
): Promise<number> {
  const home = e.config.home;
  const progress = throttled(o.progress);
  const env = libpqEnv(process.env, { ...e.admin, database: name });
  const items = o.items;
  const errors: string[] = [];
  let status: number;
  if (input.format === 'plain') {
    const size = statSync(file).size;
    let read = 0;
    const psql = findClientTool('psql', home, '`pgx source import`');
    status = (
      await runTool(
        psql,
        ['-X', '-q', '-d', name, '-v', 'ON_ERROR_STOP=0'],
        env,
        (line) => {
          if (/\bERROR:/.test(line)) errors.push(line.replace(/^psql:[^:]*:\d+: /, ''));
        },
        {
          file,
          onBytes: (n) =>
            progress(
              `restoring: ${Math.floor(((read += n) * 100) / Math.max(size, 1))}% of ${(size / 1048576).toFixed(1)} MB`,
            ),
        },
      )
    ).status;
  } else {
    const pgRestore = findClientTool('pg_restore', home, '`pgx source import`');
    let done = 0;
    status = (
      await runTool(pgRestore, ['--verbose', '-d', name, file], env, (line) => {
        if (/processing (item|data for table)|creating /.test(line))
          progress(`restoring: ${Math.min(++done, items)}/${items} items`);
        if (/error:/.test(line) && !/errors ignored on restore/.test(line))
          errors.push(line.replace(/^pg_restore: error: /, ''));
      })
    ).status;
  }
  progress.flush();
  const fatal = errors.filter((x) => !TOLERATED.some((re) => re.test(x)));
  const tolerated = errors.length - fatal.length;
  if (fatal.length || (status !== 0 && !errors.length)) {
    throw new PgxError(
      'IMPORT_FAILED',
      `Restoring ${input.display} into "${database}" failed (${fatal.length || 'exit ' + status} error(s)): ` +
        `${fatal.slice(0, 3).join(' | ') || '(no message)'}`,
      'Nothing was kept (the half-made copy was dropped). Fix the cause (often a missing extension, or a pg_restore ' +
        'older than the dump), then run the import again.',
    );
  }
  return tolerated;
}
