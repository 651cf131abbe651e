// A branch's fork point: the database it was cloned from, kept while a merge may need it (decision 500). A merge is
// three-way: what the branch changed since the fork point goes to the parent, and what the parent changed since the
// same point is left as it is; `pgx agent diff --sql` is the branch against it. It is one of:
// - the frozen copy a fork of a changed session branch cloned (freeze.ts; recorded as `fork_point` before the clone);
// - the template build a template clone or a pool claim came from (`base_template`, its oid: a refresh renames the
//   build aside and keeps it while a branch keeps it, template.ts).
// Kept while a subagent's branch made from it lives and has not been merged and stopped (registry/fork-points.ts):
// gc passes it by (freeze-gc.ts), and on a file system without copy-on-write it is a full copy that counts against
// the disk reserve like any other (the doctor's frozen-copies check shows how much is kept).
//
// Reading one: a frozen copy and a template build refuse connections (so that clones of them work). A frozen copy is
// let in for the read, held exclusively (a fork waits to clone it until the read is over); the current template is
// read through the diff's baseline copy (diff-access.ts); a build a refresh set aside is let in under the template's
// lock. Each is shut again after, in a `finally`; a crash in between leaves a copy only the admin can reach, which
// the next read shuts.
import { PgxError } from '../lib/errors.js';
import * as frozen from '../registry/frozen.js';
import { branchesKeepingBuild, keptBuildOids } from '../registry/fork-points.js';
import { withFrozenExclusive, withTemplateLock } from '../registry/locks.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import type { Db } from '../server/db.js';
import type { EngineContext } from './context.js';
import { withDb, withTemplateCopy } from './diff-access.js';
import { isOwn } from './freeze-gc.js';
import { templateName } from './template.js';

/** Where a branch was cloned from, as a merge reads it. */
export interface ForkPoint {
  kind: 'frozen-copy' | 'template-build';
  /** The database's name now (a build set aside by a refresh has its aside name). */
  database: string;
  /** A template build: its oid, and whether it is still the project's template (else it was refreshed since). */
  oid?: string;
  current?: boolean;
}

/** The fork point's absence, said: which branch, why, and what can be done instead. */
function gone(rec: BranchRecord, why: string): PgxError {
  return new PgxError(
    'NOT_FOUND',
    `The fork point of "${rec.name}" (what it was cloned from) ${why}, so its changes can't be told from its parent's.`,
    `\`pgx agent diff --branch ${rec.name}\` still compares it with its parent as it is now (two-way); ` +
      '`pgx agent adopt --agent <id>` takes the branch whole.',
  );
}

/** The branch's fork point, if pgx still has it (NOT_FOUND otherwise, saying why). */
export async function forkPointOf(e: EngineContext, rec: BranchRecord): Promise<ForkPoint> {
  const reg = e.registry;
  if (rec.fork_point) {
    const row = (await frozen.listFrozen(reg)).find((c) => c.name === rec.fork_point);
    if (!row || !row.db_exists || row.state !== 'ready' || !isOwn(row))
      throw gone(rec, `was the frozen copy "${rec.fork_point}", which is gone`);
    return { kind: 'frozen-copy', database: row.name };
  }
  if (!rec.base_template)
    throw gone(
      rec,
      rec.parent ? 'is not known (the branch was reset or adopted into since it was made)' : 'is not known',
    );
  const name = await catalog.databaseNamed(reg, rec.base_template);
  const info = name ? await catalog.databaseInfo(reg, name) : undefined;
  if (!name || info?.stamp?.kind !== 'template' || info.stamp.project !== e.config.project)
    throw gone(rec, 'was a template build that a refresh has dropped since');
  const current = name === templateName(e.config.project, e.config.source);
  return { kind: 'template-build', database: name, oid: rec.base_template, current };
}

/** Runs `fn` on a connection to the branch's fork point (let in for the read, shut again after). */
export async function withForkPoint<T>(
  e: EngineContext,
  rec: BranchRecord,
  fn: (db: Db, fp: ForkPoint) => Promise<T>,
): Promise<T> {
  const reg = e.registry;
  const fp = await forkPointOf(e, rec);
  if (fp.kind === 'template-build' && fp.current)
    return withTemplateCopy(e, fp.database, undefined, (db) => fn(db, fp));
  const opened = async () => {
    const now = await forkPointOf(e, rec); // under the lock: it may have gone (or been set aside) meanwhile
    if (now.database !== fp.database) throw gone(rec, 'moved while pgx was about to read it');
    await catalog.allowConnections(reg, fp.database, true);
    try {
      return await withDb(e, fp.database, undefined, (db) => fn(db, fp));
    } finally {
      await catalog.allowConnections(reg, fp.database, false).catch(() => {});
    }
  };
  if (fp.kind === 'frozen-copy') return withFrozenExclusive(reg, fp.database, opened);
  // A build set aside by a refresh: its lock is the template's (template.ts sweeps asides under it).
  return withTemplateLock(reg, templateName(e.config.project, e.config.source), opened);
}

/**
 * gc: the template builds a refresh set aside for a fork point that no branch keeps any more (merged and stopped, or
 * dropped): dropped under the template's lock. Only this project's, stamped as its template.
 */
export async function dropReleasedBuilds(e: EngineContext): Promise<string[]> {
  const reg = e.registry;
  const template = templateName(e.config.project, e.config.source);
  const aside = new RegExp(`^${template}_o[a-z0-9]{6}$`);
  const candidates = (await catalog.databasesNamedLike(reg, `${template}_o`)).filter((d) => aside.test(d));
  if (!candidates.length) return [];
  return withTemplateLock(reg, template, async () => {
    const kept = await keptBuildOids(reg);
    const dropped: string[] = [];
    for (const name of candidates) {
      const info = await catalog.databaseInfo(reg, name);
      const oid = await catalog.databaseOid(reg, name);
      if (!info.exists || !oid || kept.has(oid)) continue;
      if (info.stamp?.kind !== 'template' || info.stamp.project !== e.config.project) continue;
      await catalog.dropDatabase(reg, name, { isTemplate: info.isTemplate });
      dropped.push(name);
    }
    return dropped;
  });
}

/** The branches that keep a template build (by oid): for the doctor and `agent ls`. */
export function branchesKeeping(e: EngineContext, oid: string): Promise<string[]> {
  return branchesKeepingBuild(e.registry, oid);
}
