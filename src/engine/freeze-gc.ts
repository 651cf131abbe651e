// The end of frozen copies: one is dropped only when it is provably that record's, and gc drops those no fork needs
// (a dead maker's, a superseded one, one whose parent is gone), passing by any being chosen, made or cloned.
import * as frozen from '../registry/frozen.js';
import type { FrozenRow } from '../registry/frozen.js';
import { tryFreezeLock, whenFrozenUnused } from '../registry/locks.js';
import * as records from '../registry/records.js';
import { branchesKeepingCopy } from '../registry/fork-points.js';
import * as catalog from '../server/catalog.js';
import type { EngineContext } from './context.js';

export const isOwn = (c: FrozenRow) =>
  catalog.isOwnFrozenCopy(
    {
      exists: c.db_exists,
      comment: c.comment,
      stamp: catalog.parseStamp(c.comment),
      allowConn: false,
      isTemplate: false,
    },
    c,
  );

/** Drops a copy's database when it is provably that record's (stamped with its nonce, or unstamped under its name), then the record. */
export async function dropFrozen(e: EngineContext, c: Pick<FrozenRow, 'name' | 'nonce'>): Promise<void> {
  const info = await catalog.databaseInfo(e.registry, c.name);
  if (info.exists && (info.comment === null || catalog.isOwnFrozenCopy(info, c)))
    await catalog.dropDatabase(e.registry, c.name);
  await frozen.deleteFrozen(e.registry, c.name);
}

/**
 * Drops a ready copy nobody is cloning, unless it is a fork point a branch keeps (fork-point.ts: a subagent's branch
 * cloned from it lives and has not been merged): then it stays, whatever gc's other reasons.
 */
export async function dropFrozenIfUnused(e: EngineContext, c: FrozenRow): Promise<boolean> {
  if ((await branchesKeepingCopy(e.registry, c.name)).length) return false;
  return (await whenFrozenUnused(e.registry, c.name, async () => (await dropFrozen(e, c), true))) === true;
}

/**
 * gc: drops the copies no fork needs: a dead maker's, one superseded by a newer ready copy of its parent, one whose
 * parent is not an active branch any more (its session ended, it was dropped or replaced). A parent whose freeze lock
 * is held (a fork choosing or making a copy now), a copy being cloned, and a copy a branch keeps as its fork point
 * (dropFrozenIfUnused) are passed by.
 */
export async function gcFrozen(e: EngineContext, limit = 1000): Promise<string[]> {
  const reg = e.registry;
  const dropped: string[] = [];
  const parents = [...new Set((await frozen.listFrozen(reg)).map((c) => c.parent))];
  for (const parent of parents) {
    if (dropped.length >= limit) break;
    await tryFreezeLock(reg, parent, async () => {
      // Read again under the lock: a copy listed as 'making' before it may be ready now (its maker let the lock go).
      const copies = await frozen.copiesOf(reg, parent);
      const p = await records.findByName(reg, parent);
      const parentLive = p !== undefined && p.state === 'active' && p.db_exists === true;
      let newestSeen = false;
      for (const c of copies) {
        const keep = parentLive && c.state === 'ready' && !newestSeen && c.db_exists && isOwn(c);
        if (c.state === 'ready') newestSeen = true;
        if (keep) continue;
        if (c.state === 'making') await dropFrozen(e, c).then(() => dropped.push(c.name));
        else if (await dropFrozenIfUnused(e, c)) dropped.push(c.name);
      }
    });
  }
  return dropped;
}
