// One frozen copy made (freeze.ts says when): recorded first, copied (TEMPLATE, else pg_dump | psql or the Node copy
// within the disk budget: copy-method.ts), stamped, shut to connections, and recorded ready with the signature that
// lets later forks reuse it.
import { PgxError } from '../lib/errors.js';
import * as frozen from '../registry/frozen.js';
import * as catalog from '../server/catalog.js';
import type { DatabaseActivity } from '../server/catalog.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { withRoomFor } from './disk-budget.js';
import type { EngineContext } from './context.js';
import type { CopyMethod } from './copy-method.js';
import { activitySignature, settledActivity, unchangedAcross } from './freeze-signature.js';
import { dropFrozen } from './freeze-gc.js';

/**
 * One frozen copy of `parent` as it is now (the caller holds its freeze lock): recorded, copied (a TEMPLATE copy when
 * nobody is connected to it, else pg_dump | psql or the Node copy, which leave the parent's sessions and transactions
 * alone), stamped,
 * frozen (connections refused), and recorded ready with the signature that lets later forks reuse it.
 */
export async function freezeSessionState(
  e: EngineContext,
  parent: string,
): Promise<{ name: string; method: 'template-copy' | CopyMethod; signature: string | null }> {
  const reg = e.registry;
  const nonce = catalog.newNonce();
  const name = catalog.frozenCopyName(nonce);
  await frozen.insertMaking(reg, { name, project: e.config.project, parent, nonce }); // record first
  const takenAt = new Date().toISOString();
  let method: 'template-copy' | CopyMethod | undefined;
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
    if (method === undefined) {
      // The disk budget (disk-budget.ts) before the empty database: a refusal leaves only the record, dropped below.
      await withRoomFor(
        e,
        { from: parent, way: 'dump-restore', what: `the frozen copy "${name}" of "${parent}"` },
        async () => {
          await catalog.createEmptyDatabase(reg, name);
          const { copyDatabase } = await import('./copy-method.js'); // on demand: dist/copy.cjs in the hot-path bundles
          const copy = await copyDatabase(e, parent, name);
          method = copy.method;
          own = copy.sourceSessions; // the copy's own sessions on the parent, which the signature allows for
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
  await frozen.markReady(reg, name, { signature, method: method!, bytes: await catalog.databaseSize(reg, name) });
  return { name, method: method!, signature };
}
