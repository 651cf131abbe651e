// Advisory locks, all session-level (released by unlock, or by the server when the holder's connection ends: a
// crashed pgx never leaves one behind), all on the registry connection.
//
// The key space: one signed 64-bit key per lock, `class << 56 | 56 bits of a sha256`. The class keeps the kinds
// apart (an identity can never collide with a template), and 56 bits make an accidental collision between two
// identities (which would only serialise them) negligible. pgx takes no other advisory locks; an application using
// advisory locks in `pgx_registry` (nobody should) would only ever collide on these classes.
import { createHash } from 'node:crypto';
import type { Db } from '../server/db.js';
import { SQLSTATE, sqlstateOf } from '../server/sqlstate.js';

declare const registryBrand: unique symbol;
/**
 * A connection to `pgx_registry`, obtainable only from openRegistry (connection.ts, which re-exports it). Declared
 * here, with the locks that take only it: connection.ts imports the locks, and this module imports nothing back.
 */
export type RegistryDb = Db & { readonly [registryBrand]: true };

export const LOCK_CLASS = {
  /** Creating the registry's table (one fixed key). */
  schema: 1,
  /** One per branch identity: held by ensure, retire, drop; try-locked by gc and SessionEnd. */
  identity: 2,
  /** One per template name: held while the template is built or refreshed. */
  template: 3,
  /** One per template name: held by the one process filling (or sweeping) that template's warm pool. */
  pool: 4,
  /**
   * One per branch identity: held SHARED by every `agent exec --id` while its command runs (its lease); the one
   * ending last finds it free (exclusive try-lock) and retires the branch. The server drops a dead exec's lease.
   */
  lease: 5,
  /** One per source database name: held by `pgx source import` and `sync` while they make and swap in a copy. */
  source: 6,
  /**
   * One per parent database name: held by the one process making a frozen copy of it (engine/freeze.ts), and briefly
   * by every fork that decides which frozen copy it clones. Single flight across hooks, the broker and the CLI.
   */
  freeze: 7,
  /** One per frozen copy: held SHARED by each fork cloning it; the one dropping it takes it exclusively (try). */
  frozen: 8,
} as const;

/** A lock key: the class in the top byte, then the first 56 bits of `hex` (a sha256 in hex). */
export function lockKey(cls: number, hex: string): string {
  return ((BigInt(cls) << 56n) | BigInt('0x' + hex.slice(0, 14).padEnd(14, '0'))).toString();
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export const LOCK = {
  schema: lockKey(LOCK_CLASS.schema, '0'),
  /** `identityKey` is already a sha256 in hex. */
  identity: (identityKey: string) => lockKey(LOCK_CLASS.identity, identityKey),
  template: (templateName: string) => lockKey(LOCK_CLASS.template, sha(templateName)),
  pool: (templateName: string) => lockKey(LOCK_CLASS.pool, sha(templateName)),
  lease: (identityKey: string) => lockKey(LOCK_CLASS.lease, identityKey),
  source: (database: string) => lockKey(LOCK_CLASS.source, sha(database)),
  freeze: (parent: string) => lockKey(LOCK_CLASS.freeze, sha(parent)),
  frozen: (copy: string) => lockKey(LOCK_CLASS.frozen, sha(copy)),
};

/** Holds `key` while fn runs; waits for it. */
export async function withLock<T>(db: RegistryDb, key: string, fn: () => Promise<T>): Promise<T> {
  await db.query('SELECT pg_advisory_lock($1::bigint)', [key]);
  try {
    return await fn();
  } finally {
    await unlock(db, key);
  }
}

/** Holds `key` while fn runs, or returns undefined at once when another session holds it. */
export async function withTryLock<T>(db: RegistryDb, key: string, fn: () => Promise<T>): Promise<T | undefined> {
  const [row] = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key]);
  if (!row!.ok) return undefined;
  try {
    return await fn();
  } finally {
    await unlock(db, key);
  }
}

async function unlock(db: RegistryDb, key: string): Promise<void> {
  // A failed unlock means the connection is gone, and the server released the lock with it.
  await db.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {});
}

export function withIdentityLock<T>(db: RegistryDb, identityKey: string, fn: () => Promise<T>): Promise<T> {
  return withLock(db, LOCK.identity(identityKey), fn);
}

/** gc and SessionEnd: a branch whose identity is locked is being ensured right now; they pass it by. */
export function tryIdentityLock<T>(db: RegistryDb, identityKey: string, fn: () => Promise<T>): Promise<T | undefined> {
  return withTryLock(db, LOCK.identity(identityKey), fn);
}

export function withTemplateLock<T>(db: RegistryDb, templateName: string, fn: () => Promise<T>): Promise<T> {
  return withLock(db, LOCK.template(templateName), fn);
}

/** The template's lock within `waitMs` (polled try-locks), or undefined when it stayed busy that long. */
export async function withTemplateLockWithin<T>(
  db: RegistryDb,
  templateName: string,
  waitMs: number,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  const until = Date.now() + waitMs;
  for (;;) {
    const [row] = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [
      LOCK.template(templateName),
    ]);
    if (row!.ok) break;
    if (Date.now() >= until) return undefined;
    await new Promise((res) => setTimeout(res, 50));
  }
  try {
    return await fn();
  } finally {
    await unlock(db, LOCK.template(templateName));
  }
}

export function withSourceLock<T>(db: RegistryDb, database: string, fn: () => Promise<T>): Promise<T> {
  return withLock(db, LOCK.source(database), fn);
}

/** The pool filler is single-flight: a second one finds the lock held and leaves at once. */
export function tryPoolLock<T>(db: RegistryDb, templateName: string, fn: () => Promise<T>): Promise<T | undefined> {
  return withTryLock(db, LOCK.pool(templateName), fn);
}

/** Is the template's pool lock held by some session (a filler running)? Read from pg_locks; takes nothing. */
export async function poolLockHeld(db: RegistryDb, templateName: string): Promise<boolean> {
  const k = BigInt(LOCK.pool(templateName));
  const [r] = await db.query<{ held: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND classid = $1::oid AND objid = $2::oid AND objsubid = 1) AS held`,
    [((k >> 32n) & 0xffffffffn).toString(), (k & 0xffffffffn).toString()],
  );
  return r!.held;
}

/** An exec's lease on a branch: held (shared with the other execs of it) until released or the connection ends. */
export async function takeLease(db: RegistryDb, identityKey: string): Promise<void> {
  await db.query('SELECT pg_advisory_lock_shared($1::bigint)', [LOCK.lease(identityKey)]);
}

export async function releaseLease(db: RegistryDb, identityKey: string): Promise<void> {
  await db.query('SELECT pg_advisory_unlock_shared($1::bigint)', [LOCK.lease(identityKey)]);
}

/** True when no exec holds a lease on the identity's branch (checked by briefly taking the lease exclusively). */
export async function noLeaseHeld(db: RegistryDb, identityKey: string): Promise<boolean> {
  return (await withTryLock(db, LOCK.lease(identityKey), async () => true)) === true;
}

/**
 * The parent's freeze lock, waited for at most `waitMs` (the server's lock_timeout: its own queue, no polling); undefined
 * when it stayed held that long. No bound: waits.
 */
export async function withFreezeLock<T>(
  db: RegistryDb,
  parent: string,
  waitMs: number | undefined,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  const key = LOCK.freeze(parent);
  if (waitMs === undefined) return withLock(db, key, fn);
  await db.query(`SET lock_timeout = ${Math.max(1, Math.floor(waitMs))}`);
  try {
    await db.query('SELECT pg_advisory_lock($1::bigint)', [key]);
  } catch (e) {
    if (sqlstateOf(e) === SQLSTATE.LOCK_NOT_AVAILABLE) return undefined;
    throw e;
  } finally {
    await db.query('RESET lock_timeout').catch(() => {});
  }
  try {
    return await fn();
  } finally {
    await unlock(db, key);
  }
}

/** gc: the parent's freeze lock only if nobody is making or choosing a frozen copy of it. */
export function tryFreezeLock<T>(db: RegistryDb, parent: string, fn: () => Promise<T>): Promise<T | undefined> {
  return withTryLock(db, LOCK.freeze(parent), fn);
}

/** A fork cloning a frozen copy holds it shared, so that nobody drops it under the clone. */
export async function takeFrozenLease(db: RegistryDb, copy: string): Promise<void> {
  await db.query('SELECT pg_advisory_lock_shared($1::bigint)', [LOCK.frozen(copy)]);
}

export async function releaseFrozenLease(db: RegistryDb, copy: string): Promise<void> {
  await db.query('SELECT pg_advisory_unlock_shared($1::bigint)', [LOCK.frozen(copy)]).catch(() => {});
}

/** Runs fn only when no fork is cloning the frozen copy (its lease taken exclusively, try-only). */
export function whenFrozenUnused<T>(db: RegistryDb, copy: string, fn: () => Promise<T>): Promise<T | undefined> {
  return withTryLock(db, LOCK.frozen(copy), fn);
}

/**
 * A merge or `diff --sql` reading a frozen copy (its fork point) holds it exclusively while connections to it are let
 * in: a fork waits to clone it until the read is over (a session on it would make the clone fail).
 */
export function withFrozenExclusive<T>(db: RegistryDb, copy: string, fn: () => Promise<T>): Promise<T> {
  return withLock(db, LOCK.frozen(copy), fn);
}
