// The hot path: a subagent's PreToolUse and `agent exec` run once per command, dozens of times per subagent, and
// in the steady state the branch is there. So they first try ONE statement on one connection (records.attachActive:
// heartbeat + state + stamp + datallowconn, RETURNING the record) and take the full ensure only when it returns
// nothing. The guarantees are the full ensure's: the command gets the identity's own active, stamped, connectable
// branch, and its idle deadline moves (the TTL counts from the last activity).
import type { Config } from '../project/config.js';
import { identityKey, type Identity } from './identity.js';
import { attachActive, type BranchRecord } from '../registry/records.js';
import { REGISTRY_DB, type RegistryDb } from '../registry/connection.js';
import { formatStamp } from '../server/catalog.js';
import { sqlstateOf, SQLSTATE } from '../server/sqlstate.js';
import { connect, type Db } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import { resolveServer, withLimits, type OpenOptions } from './context.js';

export interface Attached {
  record: BranchRecord;
  /** The admin parameters without this work's limits (what the command connects with). */
  admin: ConnParams;
}

/** The identity's active branch in one round trip, or undefined (no registry, no record, not active, not ours). */
export async function attachFast(config: Config, id: Identity, opts: OpenOptions = {}): Promise<Attached | undefined> {
  const admin = await resolveServer(config, opts);
  const params: ConnParams = { ...withLimits(admin, opts), database: REGISTRY_DB };
  const open = () => connect(params, { gate: opts.gate });
  const key = identityKey(id);
  const attempt = async (db: Db): Promise<BranchRecord | undefined | 'failed'> =>
    attachActive(db as RegistryDb, key, formatStamp({ kind: 'branch', identityKey: key })).catch(
      () => 'failed' as const,
    );
  const fresh = async () => {
    const db = await open();
    return { db, reused: false, release: () => void db.close() };
  };
  let got: { db: Db; reused: boolean; release(healthy: boolean): void };
  try {
    got = opts.reuse ? await opts.reuse.acquire(params, open) : await fresh();
  } catch (err) {
    // No registry yet: the full ensure creates it. Anything else (unreachable, login refused, timed out) is the full
    // ensure's answer too, so it is thrown now rather than waited for a second time.
    if (sqlstateOf(err) === SQLSTATE.INVALID_CATALOG_NAME) return undefined;
    throw err;
  }
  let record = await attempt(got.db);
  if (record === 'failed' && got.reused) {
    // A kept connection may have died since (a server restart): one more try on a new one.
    got.release(false);
    const again = await opts.reuse!.acquire(params, open).catch(() => undefined);
    if (!again) return undefined;
    got = again;
    record = await attempt(got.db);
  }
  got.release(record !== 'failed');
  // A failed statement is the full ensure's to retry and report.
  if (record === 'failed' || !record) return undefined;
  // roles = "per-branch" and a branch made without a role: the full ensure gives it one.
  if (config.roles === 'per-branch' && !record.role) return undefined;
  return { record, admin };
}
