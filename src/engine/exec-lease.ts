// Exec leases: every `agent exec --id X` holds one on X's branch while its command runs (a shared advisory lock on
// its registry connection, taken inside ensure's identity lock), so concurrent execs of one id share the branch and
// the first to finish no longer retires it under the others. When an exec's command ends (normally, by a signal, or
// because it could not start), it lets its lease go under the identity lock and, if no other lease is held and the
// branch is marked to be retired after its execs (made or revived by an exec without --keep), retires it. An exec
// killed outright loses its lease with its connection and retires nothing: the branch ages out by its idle TTL.
import * as records from '../registry/records.js';
import { noLeaseHeld, releaseLease, withIdentityLock } from '../registry/locks.js';
import type { EngineContext } from './context.js';
import { retireLocked, type DownResult } from './branch-retire.js';

export interface LeaseEnd {
  /** What happened to the branch: retired (this was the last lease), or why not. */
  outcome: 'retired' | 'kept' | 'other-leases' | 'not-active' | 'gone';
  result?: DownResult;
}

export async function endLease(e: EngineContext, branch: { name: string; identity_key: string }): Promise<LeaseEnd> {
  const reg = e.registry;
  const key = branch.identity_key;
  return withIdentityLock(reg, key, async () => {
    await releaseLease(reg, key);
    const cur = await records.findByName(reg, branch.name);
    if (!cur || cur.identity_key !== key) return { outcome: 'gone' };
    if (!cur.retire_after_exec) return { outcome: 'kept' };
    if (cur.state !== 'active') return { outcome: 'not-active' };
    if (!(await noLeaseHeld(reg, key))) return { outcome: 'other-leases' };
    const result = await retireLocked(e, cur);
    return { outcome: result.action === 'retired' ? 'retired' : 'not-active', result };
  });
}
