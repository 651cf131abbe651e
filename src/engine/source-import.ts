// `pgx source import`: load a project's existing development database (another PostgreSQL, a pg_dump file or
// directory) into pgx's server as the project's source. pg_dump/pg_restore (or psql for a plain SQL dump), progress on
// stderr, ownership kept where the owning roles exist (on pgx's own local server they are created, NOLOGIN).
//
// Crash safety as for everything pgx creates: the new database is stamped `pgx:source-importing:{…}` right after it is
// created, dropped (stamp-checked) if the restore fails, and the stamp is removed once it succeeded, from
// which point it is the user's source and pgx never alters or drops it again. An existing database is never
// overwritten.
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgxError } from '../errors.js';
import { pgDumpFailure } from './dump-errors.js';
import * as catalog from '../server/catalog.js';
import { findClientTool } from '../server/client-tools.js';
import type { Db } from '../server/db.js';
import { libpqEnv } from '../server/libpq-env.js';
import { shellQuote } from '../shell.js';
import type { EngineContext } from './context.js';
import type { ImportFormat, ImportInput } from '../source-input.js';

export interface ImportResult {
  database: string;
  from: string;
  format: ImportFormat;
  items: number;
  roles_created: string[];
  owners_missing: string[];
  warnings: string[];
  elapsed_ms: number;
}

type Progress = (msg: string) => void;

/** Runs a client tool; password only in its environment; stderr lines go to `onLine`. Resolves with its exit status. */
function runTool(cmd: string, args: string[], env: NodeJS.ProcessEnv, onLine: (line: string) => void, stdin?: { file: string; onBytes: (n: number) => void }): Promise<{ status: number; stdout: string }> {
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
    child.on('error', (err) => reject(new PgxError('EXEC_FAILED', `Could not run ${cmd}: ${err.message}`, 'Check the PostgreSQL client tools (PGX_PG_BINDIR).')));
    child.on('close', (code, signal) => {
      if (pending) onLine(pending);
      resolveRun({ status: code ?? (signal ? 128 : 1), stdout });
    });
  });
}

/** At most one progress line a second, plus the last one. */
function throttled(progress: Progress): Progress & { flush(): void } {
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
async function ownersOf(input: ImportInput, file: string, home: string, env: NodeJS.ProcessEnv): Promise<{ owners: string[]; items: number }> {
  const owners = new Set<string>();
  if (input.format === 'plain') {
    let tail = '';
    let items = 0;
    await new Promise<void>((res, rej) => {
      createReadStream(file, { encoding: 'utf8' })
        .on('data', (chunk) => {
          const text = tail + (chunk as string);
          for (const m of text.matchAll(/OWNER TO ("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*);/g)) owners.add(m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!.toLowerCase());
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
  if (r.status !== 0) throw new PgxError('USAGE', `pg_restore cannot read ${input.display} (exit ${r.status}).`, 'Check that it is a pg_dump file made by a pg_dump no newer than pg_restore (`pg_restore --version`).');
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
const TOLERATED = [/role "[^"]+" does not exist/, /must be owner of (extension|schema) /, /schema "public" already exists/];

async function dropImporting(db: Db, name: string): Promise<void> {
  const info = await catalog.databaseInfo(db, name);
  if (info.stamp?.kind !== 'importing') return; // not ours (any more): never touched
  await catalog.terminateBackends(db, name);
  await catalog.dropDatabase(db, name);
}

export interface ImportOptions {
  input: ImportInput;
  into: string;
  progress: Progress;
}

/**
 * Imports into `into` on the engine's server. Catalog statements go over the registry connection (they run from any
 * database); the client tools get the admin parameters, the password only in their environment. On pgx's own local
 * server (no [server] url) missing owner roles are created, NOLOGIN, so ownership survives.
 */
export async function importSource(e: EngineContext, o: ImportOptions): Promise<ImportResult> {
  const t0 = performance.now();
  const { input, into } = o;
  const { admin, registry: db } = e;
  const home = e.config.home;
  const localServer = !e.config.serverUrl;
  const progress = throttled(o.progress);
  const work = mkdtempSync(join(tmpdir(), 'pgx-import-'));
  const warnings: string[] = input.droppedParams.length ? [`ignored URL parameter(s) ${input.droppedParams.join(', ')}`] : [];
  let created = false;
  try {
    const existing = await catalog.databaseInfo(db, into);
    if (existing.stamp?.kind === 'importing') {
      const drop = shellQuote(catalog.fixStatement.dropDatabase(into));
      throw new PgxError('REFUSED', `"${into}" is what an interrupted (or still running) pgx import left behind.`, `If no import is running, drop it (\`pgx local psql -c ${drop}\`, or psql on your server) and import again.`);
    }
    if (existing.exists) {
      throw new PgxError('REFUSED', `A database named "${into}" already exists on the server; pgx never overwrites a database.`, `Import into another name (--into <db>, then set [project] source to it), or drop "${into}" yourself if it is a leftover.`);
    }
    if (input.kind === 'url' && input.conn!.host === admin.host && input.conn!.port === admin.port && input.conn!.database === into) {
      throw new PgxError('USAGE', `--from names "${into}" on this same server: it is already there.`, `Set [project] source = "${into}" in .pgx.toml instead of importing.`);
    }

    // 1. A URL is dumped first (custom format, to a private temp file): restore then gets a TOC, so progress, owners.
    let file = input.path!;
    if (input.kind === 'url') {
      file = join(work, 'source.dump');
      const pgDump = findClientTool('pg_dump', home, '`pgx source import`');
      let tables = 0;
      const tail: string[] = [];
      o.progress(`dumping ${input.display} …`);
      const r = await runTool(pgDump, ['-Fc', '--verbose', '-f', file], libpqEnv(process.env, input.conn!), (line) => {
        const m = /dumping contents of table "?([^"]+)"?/.exec(line);
        if (m) progress(`dumping: ${++tables} table(s), now ${m[1]}`);
        else if (!/^pg_dump: /.test(line) || /error|fatal/i.test(line)) tail.push(line);
      });
      progress.flush();
      if (r.status !== 0) throw pgDumpFailure(input.display, r.status, tail);
    }

    // 2. Owners: create the missing roles on pgx's own server; elsewhere they fall back to the admin role.
    const env = libpqEnv(process.env, { ...admin, database: into });
    const { owners, items } = await ownersOf(input, file, home, env);
    const present = await catalog.existingRoles(db, owners);
    const missing = owners.filter((r) => !present.has(r));
    const rolesCreated: string[] = [];
    if (localServer) {
      for (const role of missing) if (await catalog.createNoLoginRole(db, role)) rolesCreated.push(role);
    } else if (missing.length) {
      warnings.push(`role(s) ${missing.join(', ')} do not exist on this server: their objects are owned by "${admin.user}" instead`);
    }

    // 3. The database, stamped at once, then the restore.
    await catalog.createEmptyDatabase(db, into);
    created = true;
    await catalog.writeStamp(db, into, { kind: 'importing', project: e.config.project, from: input.display, started_at: new Date().toISOString() });
    const errors: string[] = [];
    let status: number;
    if (input.format === 'plain') {
      const size = statSync(file).size;
      let read = 0;
      const psql = findClientTool('psql', home, '`pgx source import`');
      status = (
        await runTool(psql, ['-X', '-q', '-d', into, '-v', 'ON_ERROR_STOP=0'], env, (line) => {
          if (/\bERROR:/.test(line)) errors.push(line.replace(/^psql:[^:]*:\d+: /, ''));
        }, { file, onBytes: (n) => progress(`restoring: ${Math.floor(((read += n) * 100) / Math.max(size, 1))}% of ${(size / 1048576).toFixed(1)} MB`) })
      ).status;
    } else {
      const pgRestore = findClientTool('pg_restore', home, '`pgx source import`');
      let done = 0;
      status = (
        await runTool(pgRestore, ['--verbose', '-d', into, file], env, (line) => {
          if (/processing (item|data for table)|creating /.test(line)) progress(`restoring: ${Math.min(++done, items)}/${items} items`);
          if (/error:/.test(line) && !/errors ignored on restore/.test(line)) errors.push(line.replace(/^pg_restore: error: /, ''));
        })
      ).status;
    }
    progress.flush();
    const fatal = errors.filter((e) => !TOLERATED.some((re) => re.test(e)));
    const tolerated = errors.length - fatal.length;
    if (fatal.length || (status !== 0 && !errors.length)) {
      throw new PgxError('IMPORT_FAILED', `Restoring ${input.display} into "${into}" failed (${fatal.length || 'exit ' + status} error(s)): ${fatal.slice(0, 3).join(' | ') || '(no message)'}`, 'Nothing was kept (the half-made database was dropped). Fix the cause (often a missing extension, or a pg_restore older than the dump), then run the import again.');
    }
    if (tolerated) warnings.push(`${tolerated} statement(s) about ownership or grants to missing roles were skipped`);
    // 4. Done: from now on it is the user's database, the project's source; pgx no longer claims it.
    await catalog.clearStamp(db, into);
    created = false;
    return { database: into, from: input.display, format: input.format, items, roles_created: rolesCreated, owners_missing: localServer ? [] : missing, warnings, elapsed_ms: Math.round(performance.now() - t0) };
  } finally {
    if (created) await dropImporting(db, into).catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}
