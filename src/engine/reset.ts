// Replacing a branch's contents in place, keeping its name, role and DSN: `pgx agent reset` (back to its parent's
// current state, or the template) and `pgx agent adopt` (the session's branch becomes a copy of a subagent's).
//
// Crash safety (decision 153), the creation's rule applied to a replacement: the copy is made under a pgx-only name
// recorded BEFORE it exists (`swap_nonce` = new:<n2>, the database pgx_new_<n2>), stamped with the record's identity
// and n2, guarded and handed to the branch's role; then the branch's backends are terminated (connections refused
// first) and ONE transaction renames the branch aside to pgx_old_<n1>, the copy into its name, and moves the record's
// nonce to n2 (swap_nonce = old:<n1>). The old database is dropped after, then swap_nonce cleared. So the name holds
// the old database or the new one at every instant (refusing connections only between the termination and the
// swap), and a kill at any step leaves at most a leftover the next reset, ensure or drop of the branch removes:
// pgx_new_<n> only when unstamped or stamped with n, pgx_old_<n> only when stamped with the record's identity and n.
// Anything else under those names is left alone.
import { PgxError } from '../lib/errors.js';
import { inTransaction } from '../registry/connection.js';
import { withIdentityLock } from '../registry/locks.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { clearSwap, commitSwap, forkParent, setLineage, setSwapNonce } from '../registry/lineage.js';
import * as catalog from '../server/catalog.js';
import { cloneDatabase, planClone } from './clone-method.js';
import { isDiskBudgetError } from './disk-budget.js';
import type { EngineContext } from './context.js';
import { copyBranch, type ForkMethod } from './fork.js';
import { busyCopyRefusal } from './busy-copy.js';
import { applyGuards } from './guards.js';
import * as roles from './roles.js';
import { ensureTemplate } from './template.js';

export interface ResetResult {
  name: string;
  /** What it is a copy of now: a database name, or null for the template. */
  from: string | null;
  /** How the copy was made (fork.ts): a template clone, a TEMPLATE copy of `from`, or pg_dump | psql. */
  method: Exclude<ForkMethod, 'unchanged'>;
  /** The branch's lineage after the reset (an adopt leaves a session's as it was). */
  parent: string | null;
  role: string | null;
  backends_terminated: number;
  backends_remaining: number;
  elapsed_ms: number;
}

const oldName = (nonce: string) => `pgx_old_${nonce}`;

/** `pgx agent reset`: back to the branch's parent (its session's branch as it is now; the template if none), or the template. */
export function resetBranch(e: EngineContext, rec: BranchRecord, to: 'parent' | 'template'): Promise<ResetResult> {
  return withIdentityLock(e.registry, rec.identity_key, async () => {
    const cur = await lockedRecord(e, rec);
    if (to === 'template' || !cur.parent) return replaceContents(e, cur, null, { parent: null });
    const other = `pgx agent reset --branch ${cur.name} --to template`;
    await assertCopyable(e, cur.parent, `its parent "${cur.parent}"`, other);
    return replaceContents(e, cur, cur.parent, { parent: cur.parent }, { what: `its parent "${cur.parent}"`, other });
  });
}

/** `pgx agent adopt`: the session's branch becomes a copy of the subagent's (its own lineage unchanged). */
export function adoptBranch(e: EngineContext, session: BranchRecord, agent: BranchRecord): Promise<ResetResult> {
  return withIdentityLock(e.registry, session.identity_key, async () => {
    const cur = await lockedRecord(e, session);
    await assertCopyable(e, agent.name, `the subagent's branch "${agent.name}"`, 'See `pgx agent ls`.');
    return replaceContents(
      e,
      cur,
      agent.name,
      { parent: cur.parent ?? null, keepForkedAt: true },
      { what: `the subagent's branch "${agent.name}"` },
    );
  });
}

/** Under the lock: the record as it is now, and its database provably pgx's (exit 5 / 6 otherwise). */
async function lockedRecord(e: EngineContext, rec: BranchRecord): Promise<BranchRecord> {
  const cur = await records.findByName(e.registry, rec.name);
  if (!cur || cur.identity_key !== rec.identity_key)
    throw new PgxError('NOT_FOUND', `The branch "${rec.name}" is gone.`, 'See `pgx agent ls`.');
  if (cur.state === 'creating')
    throw new PgxError(
      'BRANCH_FAILED',
      `The branch "${cur.name}" is still being made.`,
      'Retry when it is ready (`pgx agent ls`).',
    );
  const info = await catalog.databaseInfo(e.registry, cur.name);
  if (!info.exists)
    throw new PgxError(
      'NOT_FOUND',
      `The branch "${cur.name}" has a record but no database.`,
      `\`pgx agent down --branch ${cur.name} --now\` forgets it.`,
    );
  if (!catalog.isOwnBranch(info, cur) || cur.nonce === null) {
    throw new PgxError(
      'NOT_PGX_DATABASE',
      `Database "${cur.name}" is not the one pgx made for this branch; pgx will not replace it.`,
      `\`pgx agent forget --branch ${cur.name}\` forgets pgx's record of it (the database is left alone).`,
    );
  }
  return finishSwap(e, cur);
}

/** A copy's source must be a branch pgx made (its record's stamp), existing now. */
async function assertCopyable(e: EngineContext, name: string, what: string, hint: string): Promise<void> {
  const p = await forkParent(e.registry, { name });
  if (!p || !p.db_exists) throw new PgxError('BRANCH_FAILED', `Cannot copy ${what}: it does not exist.`, hint);
  const info = {
    exists: true,
    comment: p.comment,
    stamp: catalog.parseStamp(p.comment),
    allowConn: true,
    isTemplate: false,
  };
  if (!catalog.isOwnBranch(info, p))
    throw new PgxError('NOT_PGX_DATABASE', `Cannot copy ${what}: it is not a database pgx made.`, hint);
}

async function replaceContents(
  e: EngineContext,
  cur: BranchRecord,
  from: string | null,
  lineage: { parent: string | null; keepForkedAt?: boolean },
  copying?: { what: string; other?: string },
): Promise<ResetResult> {
  const t0 = performance.now();
  const reg = e.registry;
  const n2 = catalog.newNonce();
  const n1 = cur.nonce!;
  const tmp = catalog.creationName(n2);
  cur = await setSwapNonce(reg, cur.name, `new:${n2}`); // record first
  let method: ResetResult['method'];
  let baseTemplate: string | null = null;
  try {
    if (from === null) {
      const template = await ensureTemplate(e);
      baseTemplate = (await catalog.databaseOid(reg, template)) ?? null;
      await cloneDatabase(e, tmp, template, await planClone(e, template), {
        what: `the reset of "${cur.name}" (a clone of the template "${template}")`,
      });
      method = 'template';
    } else {
      method = await copyBranch(e, from, tmp, `the reset of "${cur.name}" (a copy of "${from}")`);
    }
    await catalog.writeStamp(reg, tmp, { kind: 'branch', identityKey: cur.identity_key, nonce: n2 });
  } catch (err) {
    await dropSwapLeftovers(e, cur).catch(() => {});
    await clearSwap(reg, cur.name).catch(() => {});
    if (isDiskBudgetError(err)) throw err; // its own code and figures; the branch is unchanged
    // A source with connections: who, and what works (busy-copy.ts), not the copy's own words.
    const busy =
      from !== null && copying ? await busyCopyRefusal(e, from, copying.what, cur.name, err, copying.other) : undefined;
    if (busy) throw busy;
    throw new PgxError(
      'BRANCH_FAILED',
      `Could not copy ${from ? `"${from}"` : 'the template'} for "${cur.name}": ${(err as Error).message}`,
      err instanceof PgxError ? err.hint : 'Check the server (`pgx agent doctor`); the branch is unchanged.',
      { cause: err },
    );
  }
  try {
    await applyGuards(reg, tmp, e.config);
    if (cur.role && cur.role_password)
      await roles.prepareBranchRole(e, tmp, cur.role, cur.role_password, { login: cur.state === 'active' });
    if (cur.state !== 'active') await catalog.allowConnections(reg, tmp, false); // a retiring branch stays refusing
  } catch (err) {
    await finishSwap(e, cur).catch(() => {});
    throw err;
  }
  // The branch's sessions end right before the swap (a rename needs nobody connected); new ones are refused until then.
  await catalog.allowConnections(reg, cur.name, false);
  let t = await catalog.terminateBackends(reg, cur.name);
  const swap = () =>
    inTransaction(reg, async () => {
      // Re-checked inside the transaction that renames it: the name must still hold this record's database.
      if (!catalog.isOwnBranch(await catalog.databaseInfo(reg, cur.name), cur))
        throw new PgxError(
          'NOT_PGX_DATABASE',
          `Database "${cur.name}" changed hands during the reset; pgx left it alone.`,
          'See `pgx agent doctor`.',
        );
      await catalog.renameDatabase(reg, cur.name, oldName(n1));
      await catalog.renameDatabase(reg, tmp, cur.name);
      const r = await commitSwap(
        reg,
        cur.name,
        n2,
        `old:${n1}`,
        { template: baseTemplate },
        !lineage.keepForkedAt && lineage.parent !== null,
      );
      return lineage.parent === r.parent ? r : setLineage(reg, cur.name, lineage.parent);
    });
  let done: BranchRecord;
  try {
    done = await swap().catch(async (err: unknown) => {
      if (catalog.sqlstateOf(err) !== catalog.SQLSTATE.OBJECT_IN_USE) throw err;
      // A session that was connecting while connections were turned off: once more.
      const again = await catalog.terminateBackends(reg, cur.name);
      t = {
        backends_terminated: t.backends_terminated + again.backends_terminated,
        backends_remaining: again.backends_remaining,
      };
      return swap();
    });
  } catch (err) {
    // The branch is as it was: it takes connections again, and the copy goes.
    if (
      cur.state === 'active' &&
      catalog.isOwnBranch(
        await catalog.databaseInfo(reg, cur.name).catch(() => ({ exists: false }) as catalog.DatabaseInfo),
        cur,
      )
    ) {
      await catalog.allowConnections(reg, cur.name, true).catch(() => {});
    }
    await finishSwap(e, cur).catch(() => {});
    throw err;
  }
  done = await finishSwap(e, done);
  return {
    name: done.name,
    from,
    method,
    parent: done.parent ?? null,
    role: done.role,
    backends_terminated: t.backends_terminated,
    backends_remaining: t.backends_remaining,
    elapsed_ms: Math.round(performance.now() - t0),
  };
}

/** Removes what a reset killed at any step left (see the top of this file) and clears swap_nonce. */
export async function finishSwap(e: EngineContext, rec: BranchRecord): Promise<BranchRecord> {
  if (!rec.swap_nonce) return rec;
  await dropSwapLeftovers(e, rec);
  return clearSwap(e.registry, rec.name);
}

/** The swap's leftover database, if it is there and provably this record's. */
export async function dropSwapLeftovers(
  e: EngineContext,
  rec: Pick<BranchRecord, 'identity_key' | 'swap_nonce'>,
): Promise<void> {
  const m = /^(new|old):([a-z0-9]{16})$/.exec(rec.swap_nonce ?? '');
  if (!m) return;
  const [, phase, nonce] = m as unknown as [string, 'new' | 'old', string];
  const name = phase === 'new' ? catalog.creationName(nonce) : oldName(nonce);
  const info = await catalog.databaseInfo(e.registry, name);
  if (!info.exists) return;
  const ours =
    catalog.isOwnBranch(info, { identity_key: rec.identity_key, nonce }) || (phase === 'new' && info.comment === null);
  if (ours) await catalog.dropDatabase(e.registry, name);
}
