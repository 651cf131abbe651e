// One frozen copy made (freeze.ts says when): recorded first, copied (TEMPLATE, else pg_dump | psql within the disk
// budget), stamped, shut to connections, and recorded ready with the signature that lets later forks reuse it.
import { PgxError } from '../lib/errors.js';
import * as frozen from '../registry/frozen.js';
import * as catalog from '../server/catalog.js';
import type { DatabaseActivity } from '../server/catalog.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { withRoomFor } from './disk-budget.js';
import type { EngineContext } from './context.js';
import { copyByDump } from './dump-restore.js';
import { activitySignature, settledActivity, unchangedAcross } from './freeze-signature.js';
import { dropFrozen } from './freeze-gc.js';

/**
 * One frozen copy of `parent` as it is now (the caller holds its freeze lock): recorded, copied (a TEMPLATE copy when
 * nobody is connected to it, else pg_dump | psql, which leaves the parent's sessions and transactions alone), stamped,
 * frozen (connections refused), and recorded ready with the signature that lets later forks reuse it.
 */
export async function freezeSessionState(
  e: EngineContext,
  parent: string,
): Promise<{ name: string; method: 'template-copy' | 'dump-restore'; signature: string | null }> {
  const reg = e.registry;
  const nonce = catalog.newNonce();
  const name = catalog.frozenCopyName(nonce);
  await frozen.insertMaking(reg, { name, project: e.config.project, parent, nonce }); // record first
  const takenAt = new Date().toISOString();
  let method: 'template-copy' | 'dump-restore' = 'dump-restore';
  let own = 0;
  let before: DatabaseActivity | null = null;
  try {
    before = await catalog.databaseActivity(reg, parent);
    if (!before) throw new PgxError('BRANCH_FAILED', `"${parent}" no longer exists.`, 'See `pgx agent ls`.');
    if (before.backends === '') {
      try {
        await cloneDatabase(e, name, parent, await planClone(e, parent));
        method = 'template-copy';
      } catch (err) {
        if (catalog.sqlstateOf(err) !== catalog.SQLSTATE.OBJECT_IN_USE) throw err; // someone connected meanwhile
      }
    }
    if (method === 'dump-restore') {
      // The disk budget (disk-budget.ts) before the empty database: a refusal leaves only the record, dropped below.
      await withRoomFor(
        e,
        { from: parent, way: 'dump-restore', what: `the frozen copy "${name}" of "${parent}"` },
        async () => {
          await catalog.createEmptyDatabase(reg, name);
          own = (await copyByDump(e, parent, name)) === 'kept' ? 1 : 2; // each pg_dump is one session on the parent
        },
      );
    }
    await catalog.writeStamp(reg, name, {
      kind: 'frozen',
      project: e.config.project,
      parent,
      nonce,
      taken_at: takenAt,
    });
    await catalog.allowConnections(reg, name, false);
  } catch (err) {
    await dropFrozen(e, { name, nonce }).catch(() => {});
    throw err;
  }
  const after = await settledActivity(e, parent, before!, own);
  const signature = unchangedAcross(before, after, own) ? activitySignature(after) : null;
  await frozen.markReady(reg, name, { signature, method, bytes: await catalog.databaseSize(reg, name) });
  return { name, method, signature };
}
