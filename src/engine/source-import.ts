// `pgx source import` and `pgx source sync`: load a project's existing development database (another PostgreSQL, a
// pg_dump file or directory, "the origin") into pgx's server as the project's source, and later replace that copy
// with a fresh one. pg_dump/pg_restore (or psql for a plain SQL dump), progress on stderr, ownership kept where the
// owning roles exist (on pgx's own local server they are created, NOLOGIN). Where the copy came from is remembered in
// the registry (pgx_source), never its password.
//
// Crash safety as for everything pgx creates: a copy is never made under the source's name. Its pgx-only name
// `pgx_src_<nonce>` is recorded (pgx_source_copy) before the database is created, stamped `pgx:source-importing:`
// with the nonce right after, `pgx:source:` with the nonce once restored, and only then renamed into place, in one
// transaction with the pgx_source record that carries the same nonce. A sync sets the old copy aside under its own
// `pgx_src_<old nonce>` in that same transaction (recorded 'old'), then drops it. So a process killed at any point
// leaves the source's name on the old copy or the new one, never on nothing or a stranger, plus recorded leftovers
// that the next import or sync (under the source's lock) drops. A database under the source's name is replaced
// only when its stamp carries the nonce of pgx's record; an existing database is never overwritten.
import { clockTime } from '../lib/output.js';
import { PgxError } from '../lib/errors.js';
import { inTransaction } from '../registry/connection.js';
import { withSourceLock, withTemplateLock } from '../registry/locks.js';
import * as sources from '../registry/sources.js';
import type { OriginKind, SourceRecord } from '../registry/sources.js';
import * as catalog from '../server/catalog.js';
import { shellQuote } from '../lib/shell.js';
import type { EngineContext } from './context.js';
import { dropCopy, dropLeftovers, makeCopy, type Copy, type Progress } from './source-copy.js';
import { templateName } from './template.js';
import type { ImportFormat, ImportInput } from '../project/source-input.js';
import type { MaskResult } from '../mask/apply.js';

/** Where a source's copy came from, as pgx remembers it (no password in any field). */
export interface SourceOrigin {
  kind: OriginKind;
  /** The URL without its password, or the dump's absolute path. */
  origin: string;
  /** --from-env: the variable, and where it was found (`$VAR`: the environment; else the dotenv file). */
  env: string | null;
  env_file: string | null;
  format: string;
  /** The origin's schema fingerprint at the copy (null for a dump file). */
  fingerprint: string | null;
  imported_at: string;
}

export interface ImportResult {
  database: string;
  from: string;
  format: ImportFormat;
  items: number;
  /** How the origin was copied: by Node alone, or pg_dump | pg_restore (a dump file: pg_restore or psql); and why. */
  method: 'node-copy' | 'dump-restore';
  method_why: string;
  roles_created: string[];
  owners_missing: string[];
  warnings: string[];
  elapsed_ms: number;
  /** What pgx now remembers about the origin (`pgx source sync` re-imports from it). */
  origin: SourceOrigin;
  /** The copy's masking ([mask] in .pgx.toml): done before it was finished, so no template ever saw it unmasked. */
  mask: MaskResult;
}

export interface SyncResult extends ImportResult {
  /** The copy that was replaced and dropped (its pgx-only name), or null when there was none under the name. */
  old_copy_dropped: string | null;
  /** The old copy could not be dropped (it stays recorded; the next sync drops it). */
  old_copy_left: string | null;
}

/** How the CLI found the URL: `--from-env VAR` and where VAR was read (the environment, or a dotenv file). */
export interface OriginNote {
  env?: string;
  envFile?: string;
}

export interface ImportOptions {
  input: ImportInput;
  into: string;
  progress: Progress;
  origin?: OriginNote;
}

export interface SyncOptions {
  input: ImportInput;
  progress: Progress;
  origin?: OriginNote;
}

export function originView(r: SourceRecord): SourceOrigin {
  return {
    kind: r.origin_kind,
    origin: r.origin,
    env: r.origin_env,
    env_file: r.origin_env_file,
    format: r.format,
    fingerprint: r.origin_fingerprint,
    imported_at: new Date(r.imported_at).toISOString(),
  };
}

/** What pgx remembers about the source named `database`, if it imported it. */
export async function sourceOrigin(e: EngineContext, database: string): Promise<SourceOrigin | undefined> {
  const r = await sources.findSource(e.registry, database);
  return r ? originView(r) : undefined;
}

function newRecord(
  e: EngineContext,
  database: string,
  input: ImportInput,
  copy: Copy,
  origin: OriginNote | undefined,
): sources.NewSourceRecord {
  const kind: OriginKind = input.kind === 'path' ? 'file' : origin?.env ? 'env' : 'url';
  return {
    database,
    project: e.config.project,
    nonce: copy.nonce,
    origin_kind: kind,
    origin: input.display,
    origin_env: kind === 'env' ? origin!.env! : null,
    origin_env_file: kind === 'env' ? (origin!.envFile ?? null) : null,
    format: input.format,
    origin_fingerprint: copy.fingerprint,
  };
}

function resultOf(
  input: ImportInput,
  database: string,
  copy: Copy,
  rec: sources.NewSourceRecord,
  t0: number,
): ImportResult {
  return {
    database,
    from: input.display,
    format: input.format,
    items: copy.items,
    method: copy.method,
    method_why: copy.method_why,
    roles_created: copy.rolesCreated,
    owners_missing: copy.missing,
    warnings: copy.warnings,
    elapsed_ms: Math.round(performance.now() - t0),
    mask: copy.mask,
    origin: {
      kind: rec.origin_kind,
      origin: rec.origin,
      env: rec.origin_env,
      env_file: rec.origin_env_file,
      format: rec.format,
      fingerprint: rec.origin_fingerprint,
      imported_at: new Date().toISOString(),
    },
  };
}

/** Imports into `into` on the engine's server (which must not hold a database of that name). */
export async function importSource(e: EngineContext, o: ImportOptions): Promise<ImportResult> {
  const t0 = performance.now();
  const { input, into } = o;
  const { admin, registry: db } = e;
  return withSourceLock(db, into, async () => {
    const existing = await catalog.databaseInfo(db, into);
    if (existing.stamp?.kind === 'importing' && existing.stamp.nonce === undefined) {
      const drop = shellQuote(catalog.fixStatement.dropDatabase(into));
      throw new PgxError(
        'REFUSED',
        `"${into}" is what an interrupted (or still running) pgx import left behind.`,
        `If no import is running, drop it (\`pgx local sql -c ${drop}\`, or psql on your server) and import again.`,
      );
    }
    if (existing.exists) {
      const rec = await sources.findSource(db, into);
      if (rec && catalog.isOwnSourceCopy(existing, rec)) {
        throw new PgxError(
          'REFUSED',
          `"${into}" is already pgx's copy of ${rec.origin} (imported ${clockTime(rec.imported_at)}); pgx never ` +
            `overwrites a database.`,
          `To bring it up to date with its origin, run \`pgx source sync\` (it replaces the copy and refreshes the template).`,
        );
      }
      throw new PgxError(
        'REFUSED',
        `A database named "${into}" already exists on the server; pgx never overwrites a database.`,
        `Import into another name (--into <db>), or drop "${into}" yourself if it is a leftover.`,
      );
    }
    if (
      input.kind === 'url' &&
      input.conn!.host === admin.host &&
      input.conn!.port === admin.port &&
      input.conn!.database === into
    ) {
      throw new PgxError(
        'USAGE',
        `${input.where} names "${into}" on this same server: it is already there.`,
        `Set [project] source = "${into}" in ${e.config.file ?? '.pgx.toml'} instead of importing.`,
      );
    }
    await dropLeftovers(e, into);
    const copy = await makeCopy(e, input, into, o);
    const rec = newRecord(e, into, input, copy, o.origin);
    try {
      // One transaction: the name, the record and the copy's bookkeeping change together or not at all.
      await inTransaction(db, async () => {
        await catalog.renameDatabase(db, copy.name, into);
        await sources.putSource(db, rec);
        await sources.forgetCopy(db, copy.name);
      });
    } catch (err) {
      await dropCopy(e, {
        name: copy.name,
        database: into,
        project: e.config.project,
        nonce: copy.nonce,
        state: 'new',
      }).catch(() => {});
      if (catalog.sqlstateOf(err) === catalog.SQLSTATE.DUPLICATE_DATABASE) {
        throw new PgxError(
          'REFUSED',
          `A database named "${into}" was created on the server while the import ran; pgx never overwrites a database.`,
          'Import into another name (--into <db>).',
          { cause: err },
        );
      }
      throw err;
    }
    return resultOf(input, into, copy, rec, t0);
  });
}

/** The refusal for a source pgx cannot prove it copied: it is the user's own, or an older pgx's import. */
function notOurCopy(database: string, file: string): PgxError {
  return new PgxError(
    'NOT_PGX_DATABASE',
    `"${database}" ([project] source) is not a copy pgx made (no record of it as an import, or its stamp ` +
      `lacks the recorded nonce): pgx will not replace or drop it.`,
    `If [server] url points at your own server and "${database}" is your real development database, there ` +
      `is nothing to sync: it is always current, and \`pgx template refresh\` snapshots it. If it is an import ` +
      `by an older pgx, rename it aside yourself (\`pgx local sql -c ${shellQuote(catalog.fixStatement.renameDatabase(database, `${database}_old`))}\`, ` +
      `or psql on your server), then \`pgx source import --from ...\` (it remembers the origin); or set another ` +
      `[project] source in ${file}.`,
  );
}

/**
 * `pgx source sync`: a new copy of the origin replaces the project's source under the same name, and the old copy
 * is dropped. Branches and warm-pool members are clones of the template, which is a database of its own, so none of
 * them uses the source copy: only a template build reads it (under the template's lock, which the swap and the drop
 * take too), and sessions connected to it (the rename waits 5 s for them, and is refused if they stay).
 */
export async function syncSource(e: EngineContext, o: SyncOptions): Promise<SyncResult> {
  const t0 = performance.now();
  const db = e.registry;
  const database = e.config.source;
  const file = e.config.file ?? '.pgx.toml';
  if (!database)
    throw new PgxError(
      'USAGE',
      'There is no [project] source to sync: branches start from an empty database.',
      'Import your development database first: `pgx source import --from-env DATABASE_URL` (or --from <url|file|dir>).',
    );
  const { conn } = o.input;
  if (conn && conn.host === e.admin.host && conn.port === e.admin.port && conn.database === database) {
    throw new PgxError(
      'USAGE',
      `The origin names "${database}" on this same server: that is pgx's copy itself, not where it came from.`,
      'Pass the real origin: `pgx source sync --from-env <var>` or --from <url|file|dir>.',
    );
  }
  return withSourceLock(db, database, async () => {
    const rec = await sources.findSource(db, database);
    const current = await catalog.databaseInfo(db, database);
    if (current.exists && !(rec && catalog.isOwnSourceCopy(current, rec))) throw notOurCopy(database, file);
    if (current.exists && !(await idle(e, database, 1000))) {
      throw busy(database, await catalog.countBackends(db, database));
    }
    await dropLeftovers(e, database);
    const copy = await makeCopy(e, o.input, database, o);
    const next = newRecord(e, database, o.input, copy, o.origin);
    const discard = () =>
      dropCopy(e, { name: copy.name, database, project: e.config.project, nonce: copy.nonce, state: 'new' }).catch(
        () => {},
      );
    let aside: sources.CopyRecord | null = null;
    o.progress(`switching "${database}" to the new copy …`);
    try {
      // A rename waits by itself (PostgreSQL gives other sessions on the database 5 s to leave), then fails 55006.
      await withTemplateLock(db, templateName(e.config.project, database), async () => {
        aside = await swap(e, database, rec, copy, next);
      });
    } catch (err) {
      await discard();
      if (catalog.sqlstateOf(err) === catalog.SQLSTATE.OBJECT_IN_USE)
        throw busy(database, await catalog.countBackends(db, database).catch(() => 1));
      throw err;
    }
    // The old copy: set aside and recorded by the swap; nothing uses it any more. A failed drop leaves it recorded.
    let dropped: string | null = null;
    let left: string | null = null;
    const old = aside as sources.CopyRecord | null;
    if (old) {
      const ok = await withTemplateLock(db, templateName(e.config.project, database), () => dropCopy(e, old)).catch(
        () => false,
      );
      if (ok) dropped = old.name;
      else left = old.name;
    }
    return { ...resultOf(o.input, database, copy, next, t0), old_copy_dropped: dropped, old_copy_left: left };
  });
}

/** The swap, in one transaction: the old copy aside under its own pgx-only name (recorded 'old'), the new one into place. */
async function swap(
  e: EngineContext,
  database: string,
  rec: SourceRecord | undefined,
  copy: Copy,
  next: sources.NewSourceRecord,
): Promise<sources.CopyRecord | null> {
  const db = e.registry;
  return inTransaction(db, async () => {
    const current = await catalog.databaseInfo(db, database);
    let aside: sources.CopyRecord | null = null;
    if (current.exists) {
      if (!(rec && catalog.isOwnSourceCopy(current, rec))) throw notOurCopy(database, e.config.file ?? '.pgx.toml');
      aside = {
        name: catalog.sourceCopyName(rec.nonce),
        database,
        project: rec.project,
        nonce: rec.nonce,
        state: 'old',
      };
      await catalog.renameDatabase(db, database, aside.name);
      await sources.recordCopy(db, aside);
    }
    await catalog.renameDatabase(db, copy.name, database);
    await sources.putSource(db, next);
    await sources.forgetCopy(db, copy.name);
    return aside;
  });
}

async function idle(e: EngineContext, database: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await catalog.countBackends(e.registry, database)) === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((res) => setTimeout(res, 100));
  }
}

function busy(database: string, n: number): PgxError {
  const list = shellQuote(catalog.fixStatement.sessionsOn(database));
  return new PgxError(
    'REFUSED',
    `${n} session(s) are connected to "${database}" (pgx's copy of the source): it cannot be switched while they are.`,
    `Close them (see them with \`pgx local sql -c ${list}\`, or psql on your server), then run \`pgx source ` +
      `sync\` again. Branches are not affected: they are clones of the template.`,
  );
}
