// How `pgx agent diff` (diff.ts) connects to the two databases it compares.
//
// A database that refuses connections is read through a copy or an opening: the template through its baseline copy
// (one per template build, made under the template's lock and reused; template.ts's sweep drops it with the build's
// leftovers), a retiring branch by letting the admin in for the diff, under the branch's identity lock (its role stays
// NOLOGIN, so nobody else gets in), and closing it again.
import { randomBytes } from 'node:crypto';
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { buildsOf, forgetBuild, recordBuild } from '../registry/template-builds.js';
import { withIdentityLock, withTemplateLock, withTemplateLockWithin } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import { connect, type Db } from '../server/db.js';
import type { EngineContext } from './context.js';
import { withRoomFor } from './disk-budget.js';

/** A connection as the admin to the record's own database, let in for the diff if it is retiring. */
export async function readable<T>(
  e: EngineContext,
  rec: BranchRecord,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const reg = e.registry;
  const info = await catalog.databaseInfo(reg, rec.name);
  if (!info.exists)
    throw new PgxError(
      'NOT_FOUND',
      `Branch "${rec.name}" has a record but no database (dropped meanwhile, or a creation that never finished).`,
      'See `pgx agent ls`.',
    );
  if (!catalog.isOwnBranch(info, rec))
    throw new PgxError(
      'NOT_PGX_DATABASE',
      `Database "${rec.name}" is not the one pgx made for this branch; pgx will not read it.`,
      '`pgx agent doctor` explains; `pgx agent forget --branch <name>` forgets the record.',
    );
  if (rec.state === 'active' && info.allowConn) return withDb(e, rec.name, timeoutMs, fn);
  // Retiring: connections are refused to everyone, the admin too. Under the identity lock (so no retire, revive or
  // drop runs meanwhile) the admin is let in, and shut out again after; the branch role stays NOLOGIN throughout.
  return withIdentityLock(reg, rec.identity_key, async () => {
    const cur = await records.findByName(reg, rec.name);
    const now = await catalog.databaseInfo(reg, rec.name);
    if (!cur || !catalog.isOwnBranch(now, cur))
      throw new PgxError(
        'NOT_FOUND',
        `Branch "${rec.name}" was dropped or replaced while pgx was about to read it.`,
        'See `pgx agent ls`.',
      );
    if (cur.state === 'active' && now.allowConn) return withDb(e, rec.name, timeoutMs, fn); // revived meanwhile
    if (!now.allowConn) await catalog.allowConnections(reg, rec.name, true);
    try {
      return await withDb(e, rec.name, timeoutMs, fn);
    } finally {
      // Refused again, unless it is active (an active record refusing connections is ensure's to repair). A crash
      // before this leaves a retiring branch only the admin can reach: the next diff of it shuts it, gc drops it.
      if (cur.state !== 'active') await catalog.allowConnections(reg, rec.name, false).catch(() => {});
    }
  });
}

/** A connection as the admin to `database`, closed after `fn` (the statement timeout the shorter of both). */
export async function withDb<T>(
  e: EngineContext,
  database: string,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const statementTimeoutMs =
    timeoutMs === undefined ? e.admin.statementTimeoutMs : Math.min(timeoutMs, e.admin.statementTimeoutMs ?? timeoutMs);
  const db = await connect({ ...e.admin, database, statementTimeoutMs }, { gate: e.gate });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/**
 * The template refuses connections (a session on it would make every clone from it fail), so it is read through a
 * copy: one per template build (its stamp names the build's oid), made from it once and kept for the next diff.
 * Recorded as one of the template's builds before it is created, and stamped `building`: the template's next refresh
 * sweeps it with the other build leftovers, and `pgx template drop` drops it. Held under the template's lock while
 * read, so that no refresh sweeps it meanwhile (SubagentStart's clones do not take that lock).
 */
export async function withTemplateCopy<T>(
  e: EngineContext,
  template: string,
  timeoutMs: number | undefined,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const reg = e.registry;
  const find = () => templateCopy(e, template);
  // With a budget (SubagentStop), the lock is waited for within it: twenty stops at once must not queue behind one
  // another's copy for longer than their summary may take.
  const copy =
    timeoutMs === undefined
      ? await withTemplateLock(reg, template, find)
      : await withTemplateLockWithin(reg, template, timeoutMs, find);
  if (copy === undefined)
    throw new PgxError(
      'BRANCH_FAILED',
      `The template "${template}" is being built or copied by another pgx process.`,
      'Retry in a moment.',
    );
  // Read outside the lock: many diffs read one copy at once. A refresh that sweeps it meanwhile ends this read
  // (DROP … WITH (FORCE)): the diff fails and says so, and the next one makes a copy of the new build.
  return withDb(e, copy, timeoutMs, fn);
}

/** Under the template's lock: this build's copy, made if there is none; other builds' leftovers swept. */
async function templateCopy(e: EngineContext, template: string): Promise<string> {
  const reg = e.registry;
  const info = await catalog.databaseInfo(reg, template);
  if (!info.exists || info.stamp?.kind !== 'template') {
    throw new PgxError(
      'NOT_FOUND',
      `The template "${template}" ${info.exists ? 'is not a pgx template' : 'does not exist (refreshed away, or dropped)'}, ` +
        `so there is nothing to compare with.`,
      'Run `pgx template refresh`, or compare with a branch: `--against <branch>`.',
    );
  }
  const oid = (await catalog.databaseOid(reg, template))!;
  let copy: string | undefined;
  for (const b of await buildsOf(reg, template)) {
    const bi = await catalog.databaseInfo(reg, b);
    const ours = bi.stamp?.kind === 'building' && bi.stamp.project === e.config.project;
    if (ours && bi.stamp?.kind === 'building' && bi.stamp.baseline_of === oid && copy === undefined) {
      copy = b;
      continue;
    }
    // Under the template's lock no build runs: any other recorded build is a leftover (or an older build's copy).
    if (bi.exists && (ours || bi.comment === null)) await catalog.dropDatabase(reg, b, { isTemplate: bi.isTemplate });
    if (!bi.exists || ours || bi.comment === null) await forgetBuild(reg, b);
  }
  if (copy !== undefined) return copy;
  // Not under the template's name prefix (a build's or an aside's): `pgx_base_<slug>_<hash>_<6 hex>`, ≤ 49 bytes.
  const name = `${template.replace(/^pgx_tpl_/, 'pgx_base_')}_${randomBytes(3).toString('hex')}`;
  // The disk budget (disk-budget.ts) first: a refusal leaves neither a record nor a database.
  await withRoomFor(
    e,
    {
      from: template,
      way: reg.serverVersionNum >= 150000 ? 'wal-log' : 'file-copy',
      what: `the diff's baseline "${name}" (a copy of the template "${template}")`,
    },
    async () => {
      await recordBuild(reg, name, template, e.config.project); // record first: a crash leaves a recorded build
      await catalog.createDatabase(reg, name, { template });
    },
  );
  await catalog.writeStamp(reg, name, {
    kind: 'building',
    project: e.config.project,
    started_at: new Date().toISOString(),
    baseline_of: oid,
  });
  await catalog.revokePublicConnect(reg, name);
  return name;
}
