// A copy of the origin under a pgx-only name, `pgx_src_<nonce>` (source-import.ts says why, and what is crash-safe):
// made by Node alone or by pg_dump and pg_restore (copy-method.ts chooses; a dump file needs pg_restore, or psql for a
// plain SQL dump: source-dump.ts), its owners created or reported, scanned and masked, stamped; and dropped again,
// when provably pgx's, by a failed import or by the next one (leftovers).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as sources from '../registry/sources.js';
import * as catalog from '../server/catalog.js';
import type { EngineContext } from './context.js';
import { fingerprintAt } from './fingerprint.js';
import { originConnectFailure } from './dump-errors.js';
import type { ImportInput } from '../project/source-input.js';
import { scanAndMask, scanOrigin, type MaskResult } from '../mask/apply.js';
import {
  dumpOrigin,
  ownersForDump,
  refuseDumpWithoutTools,
  restoreDump,
  throttled,
  type Progress,
} from './source-dump.js';

export type { Progress };

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
  /** How the origin was copied, and why that way. */
  method: 'dump-restore' | 'node-copy';
  method_why: string;
}

/**
 * Makes a complete copy of the origin under a new pgx-only name (recorded first), stamped `pgx:source:` with its
 * nonce. A URL is copied by pg_dump | pg_restore or by Node alone (engine/copy-method.ts chooses); a dump file by
 * pg_restore (psql for a plain one). Catalog statements go over the registry connection; the client tools get the
 * admin parameters, the password only in their environment. On failure nothing is kept.
 */
export async function makeCopy(
  e: EngineContext,
  input: ImportInput,
  database: string,
  o: { progress: Progress },
): Promise<Copy> {
  const { admin, registry: db } = e;
  refuseDumpWithoutTools(input, e.config.home);
  const work = mkdtempSync(join(tmpdir(), 'pgx-import-'));
  const warnings: string[] = input.droppedParams.length
    ? [`ignored URL parameter(s) ${input.droppedParams.join(', ')}`]
    : [];
  const nonce = catalog.newNonce();
  const name = catalog.sourceCopyName(nonce);
  let recorded = false;
  try {
    // 1. A URL: its schema fingerprint first (a migration during the copy then shows as a change, never hides), the
    // scan, then the way: by Node, or the dump (custom format, to a private temp file: restore then gets a TOC).
    let file = input.path!;
    let fingerprint: string | null = null;
    let method: MethodUsed = { method: 'dump-restore', why: 'a dump file' };
    if (input.kind === 'url') {
      fingerprint = await fingerprintAt(input.conn!).catch(() => null); // the copy reports an unreachable origin
      // Personal columns without a rule refuse the import before anything is copied (decision 460); the copy is
      // scanned again before it is masked, so an origin that could not be scanned here is still checked.
      if (fingerprint !== null)
        await scanOrigin(input.conn!, e.config.mask, e.config.file ?? '.pgx.toml', o.progress, e.gate);
      const { chooseCopyMethod, serverVersionAt } = await import('./copy-method.js');
      try {
        const major = Math.floor((await serverVersionAt(input.conn!)) / 10000);
        method = await chooseCopyMethod(e.config.home, input.conn!, major);
      } catch (err) {
        throw originConnectFailure(err, input.display, input.where);
      }
      o.progress(`copying by ${method.method} (${method.why}) …`);
      if (method.method === 'dump-restore') {
        file = join(work, 'source.dump');
        await dumpOrigin(e, input, file, o);
      }
    }
    // 2. The dump's owners (a Node copy learns its own from the origin's catalog, step 3).
    const owners =
      method.method === 'dump-restore'
        ? await ownersForDump(e, input, file, name)
        : { items: 0, rolesCreated: [], missing: [] };

    // 3. The copy: recorded, created, stamped at once, then the restore (or the Node copy).
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
    let items = owners.items;
    if (method.method === 'dump-restore') {
      const tolerated = await restoreDump(e, input, file, name, database, { progress: o.progress, items });
      if (owners.missing.length)
        warnings.push(
          `role(s) ${owners.missing.join(', ')} do not exist on this server: their objects are owned by "${admin.user}" instead`,
        );
      if (tolerated) warnings.push(`${tolerated} statement(s) about ownership or grants to missing roles were skipped`);
    } else {
      const node = await copyByNode(e, input, name, o.progress);
      items = node.items;
      owners.rolesCreated = node.rolesCreated;
      owners.missing = node.missing;
      warnings.push(...node.warnings);
    }
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
    const { rolesCreated, missing } = owners;
    return {
      name,
      nonce,
      items,
      rolesCreated,
      missing,
      warnings,
      fingerprint,
      mask,
      method: method.method,
      method_why: method.why,
    };
  } catch (err) {
    if (recorded) await dropCopy(e, { name, database, project: e.config.project, nonce, state: 'new' }).catch(() => {});
    throw err;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type MethodUsed = { method: 'dump-restore' | 'node-copy'; why: string };

/** The origin copied with Node alone into `name`; its owners created NOLOGIN on pgx's own server, else reported. */
async function copyByNode(e: EngineContext, input: ImportInput, name: string, progress: Progress) {
  const { nodeCopy, isTargetSideFailure } = await import('../copy/node-copy.js');
  const rolesCreated: string[] = [];
  // Each step is said; only the row counts, which come per table, are held to one line a second.
  const rows = throttled(progress);
  const say = (msg: string) => {
    if (msg.startsWith('copying rows:')) return rows(msg);
    rows.flush();
    progress(msg);
  };
  const r = await nodeCopy(
    input.conn!,
    { ...e.admin, database: name },
    {
      gate: e.gate,
      progress: say,
      prepareRoles: async (named) => {
        if (e.config.serverUrl) return;
        const present = await catalog.existingRoles(e.registry, named);
        for (const role of named.filter((r) => !present.has(r)))
          if (await catalog.createNoLoginRole(e.registry, role)) rolesCreated.push(role);
      },
    },
  ).catch((err: unknown) => {
    // pgx's own server failing is not the origin's: said as the target's (node-copy.ts), never reworded here.
    throw isTargetSideFailure(err) ? err : originConnectFailure(err, input.display, input.where);
  });
  return { items: r.statements + r.tables, rolesCreated, missing: r.roles_missing, warnings: r.warnings };
}
