// A copy of the origin under a pgx-only name, `pgx_src_<nonce>` (source-import.ts says why, and what is crash-safe):
// made by pg_dump and pg_restore (or psql for a plain SQL dump), its owners created or reported, scanned and masked,
// stamped; and dropped again, when provably pgx's, by a failed import or by the next one (leftovers).
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgxError } from '../lib/errors.js';
import * as sources from '../registry/sources.js';
import { pgDumpFailure } from './dump-errors.js';
import * as catalog from '../server/catalog.js';
import { findClientTool } from '../server/client-tools.js';
import { libpqEnv } from '../server/libpq-env.js';
import type { EngineContext } from './context.js';
import { fingerprintAt } from './fingerprint.js';
import type { ImportInput } from '../project/source-input.js';
import { scanAndMask, scanOrigin, type MaskResult } from '../mask/apply.js';

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

/** Drops a recorded copy if it is provably pgx's (stamp with the record's nonce, or a 'new' one not stamped yet), then forgets it. */
export async function dropCopy(e: EngineContext, c: sources.CopyRecord): Promise<boolean> {
  const db = e.registry;
  const info = await catalog.databaseInfo(db, c.name);
  if (info.exists) {
    const ours = catalog.isOwnSourceCopy(info, c) || (c.state === 'new' && info.comment === null);
    if (!ours) {
      // Not what pgx made under that name: left alone, and the record forgotten (it proves nothing any more).
      await sources.forgetCopy(db, c.name);
      return false;
    }
    await catalog.terminateBackends(db, c.name);
    await catalog.dropDatabase(db, c.name);
  }
  await sources.forgetCopy(db, c.name);
  return info.exists;
}

/** Under the source's lock no copy of it is being made: what a killed import or sync left is dropped. Best effort. */
export async function dropLeftovers(e: EngineContext, database: string): Promise<string[]> {
  const dropped: string[] = [];
  for (const c of await sources.copiesOf(e.registry, database)) {
    if (await dropCopy(e, c).catch(() => false)) dropped.push(c.name);
  }
  return dropped;
}

export interface Copy {
  name: string;
  nonce: string;
  items: number;
  rolesCreated: string[];
  missing: string[];
  warnings: string[];
  fingerprint: string | null;
  mask: MaskResult;
}

/**
 * Makes a complete copy of the origin under a new pgx-only name (recorded first), stamped `pgx:source:` with its
 * nonce. Catalog statements go over the registry connection (they run from any database); the client tools get
 * the admin parameters, the password only in their environment. On failure nothing is kept.
 */
export async function makeCopy(
  e: EngineContext,
  input: ImportInput,
  database: string,
  o: { progress: Progress },
): Promise<Copy> {
  const { admin, registry: db } = e;
  const home = e.config.home;
  const localServer = !e.config.serverUrl;
  const progress = throttled(o.progress);
  const work = mkdtempSync(join(tmpdir(), 'pgx-import-'));
  const warnings: string[] = input.droppedParams.length
    ? [`ignored URL parameter(s) ${input.droppedParams.join(', ')}`]
    : [];
  const nonce = catalog.newNonce();
  const name = catalog.sourceCopyName(nonce);
  let recorded = false;
  try {
    // 1. A URL: its schema fingerprint first (a migration during the dump then shows as a change, never hides), then
    // the dump (custom format, to a private temp file): restore then gets a TOC, so progress, owners.
    let file = input.path!;
    let fingerprint: string | null = null;
    if (input.kind === 'url') {
      fingerprint = await fingerprintAt(input.conn!).catch(() => null); // pg_dump reports an unreachable origin
      // Personal columns without a rule refuse the import before anything is dumped (decision 460); the restored copy
      // is scanned again before it is masked, so an origin that could not be scanned here is still checked.
      if (fingerprint !== null)
        await scanOrigin(input.conn!, e.config.mask, e.config.file ?? '.pgx.toml', o.progress, e.gate);
      file = join(work, 'source.dump');
      const pgDump = findClientTool('pg_dump', home, '`pgx source import`');
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

    // 2. Owners: create the missing roles on pgx's own server; elsewhere they fall back to the admin role.
    const env = libpqEnv(process.env, { ...admin, database: name });
    const { owners, items } = await ownersOf(input, file, home, env);
    const present = await catalog.existingRoles(db, owners);
    const missing = owners.filter((r) => !present.has(r));
    const rolesCreated: string[] = [];
    if (localServer) {
      for (const role of missing) if (await catalog.createNoLoginRole(db, role)) rolesCreated.push(role);
    } else if (missing.length) {
      warnings.push(
        `role(s) ${missing.join(', ')} do not exist on this server: their objects are owned by "${admin.user}" instead`,
      );
    }

    // 3. The copy: recorded, created, stamped at once, then the restore.
    await sources.recordCopy(db, { name, database, project: e.config.project, nonce, state: 'new' });
    recorded = true;
    await catalog.createEmptyDatabase(db, name);
    await catalog.writeStamp(db, name, {
      kind: 'importing',
      project: e.config.project,
      from: input.display,
      started_at: new Date().toISOString(),
      nonce,
    });
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
    if (tolerated) warnings.push(`${tolerated} statement(s) about ownership or grants to missing roles were skipped`);
    // 4. Scanned and masked while it is still an unfinished copy: refused (and dropped) while a personal column has
    // no rule; a crash here leaves it unfinished, recorded, and never a source (decision 460).
    const mask = await scanAndMask(
      { admin, registry: db, gate: e.gate, project: e.config.project, file: e.config.file ?? '.pgx.toml' },
      name,
      e.config.mask,
      o.progress,
    );
    // 5. Complete: stamped as a finished copy (still under its pgx-only name, still recorded as 'new').
    await catalog.writeStamp(db, name, {
      kind: 'source',
      project: e.config.project,
      nonce,
      imported_at: new Date().toISOString(),
      mask: mask.digest,
    });
    recorded = false;
    return { name, nonce, items, rolesCreated, missing: localServer ? [] : missing, warnings, fingerprint, mask };
  } catch (err) {
    if (recorded) await dropCopy(e, { name, database, project: e.config.project, nonce, state: 'new' }).catch(() => {});
    throw err;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
