// The registry connection: to the pgx-owned database `pgx_registry` on the server itself, so several hosts using one
// server share the branch records. The advisory locks (locks.ts) are taken on this connection and no other: a lock
// only excludes holders connected to the same database, so the type says which connection it is.
import { connect, type ConnectOptions } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import { createDatabaseIfMissing, revokePublicConnect, writeStamp } from '../server/catalog.js';
import { sqlstateOf, SQLSTATE } from '../server/sqlstate.js';
import { LOCK, withLock, type RegistryDb } from './locks.js';

export const REGISTRY_DB = 'pgx_registry';

export type { RegistryDb };

const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS pgx_branch (
  name          text PRIMARY KEY,
  identity_key  text NOT NULL UNIQUE,
  kind          text NOT NULL CHECK (kind IN ('session','subagent','exec')),
  project       text NOT NULL,
  host          text NOT NULL,
  session_id    text,
  agent_id      text,
  exec_id       text,
  source        text,
  template      text,
  state         text NOT NULL CHECK (state IN ('creating','active','retiring')),
  method        text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  deadline      timestamptz NOT NULL,
  deadline_kind text NOT NULL CHECK (deadline_kind IN ('creating','idle','grace')),
  idle_ttl_ms   bigint NOT NULL,
  grace_ms      bigint NOT NULL,
  role          text,
  role_password text
);
-- The nonce of the branch's creation (catalog.isOwnBranch); exec leases (engine/exec-lease.ts) retire a branch with
-- retire_after_exec when the last of them ends. Added in place to registries made before them.
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS nonce text;
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS retire_after_exec boolean NOT NULL DEFAULT false;
-- Registries made before branch roles: the columns are added on first use (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS role text, ADD COLUMN IF NOT EXISTS role_password text;
-- Lineage (engine/fork.ts): the database a branch was forked from (NULL: the template) and when. The baseline the
-- fork's "unchanged" check compares against: the branch's statistics mark and the template build at activation.
-- swap_nonce: a reset's or adopt's replacement in flight (engine/reset.ts), recorded before it is created.
-- changes: the summary of what a subagent's branch changed, recorded at its SubagentStop (engine/handoff.ts).
-- Added in place to older registries (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS parent text, ADD COLUMN IF NOT EXISTS forked_at timestamptz,
  ADD COLUMN IF NOT EXISTS base_mark text, ADD COLUMN IF NOT EXISTS base_template oid, ADD COLUMN IF NOT EXISTS swap_nonce text,
  ADD COLUMN IF NOT EXISTS changes jsonb;
-- The fork point a merge reads (engine/fork-point.ts): the frozen copy a fork cloned (NULL: base_template, the template
-- build, when it is one); merged_into / merged_at: pgx agent merge applied its changes there (the fork point is let go
-- once the branch is merged and no longer active). Added in place to older registries (records.ts retries on 42703).
ALTER TABLE pgx_branch ADD COLUMN IF NOT EXISTS fork_point text, ADD COLUMN IF NOT EXISTS merged_into text,
  ADD COLUMN IF NOT EXISTS merged_at timestamptz;
CREATE INDEX IF NOT EXISTS pgx_branch_deadline ON pgx_branch (deadline);
CREATE INDEX IF NOT EXISTS pgx_branch_project ON pgx_branch (project, session_id);
CREATE TABLE IF NOT EXISTS pgx_template_build (
  name        text PRIMARY KEY,
  template    text NOT NULL,
  project     text NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS pgx_pool (
  name        text PRIMARY KEY,
  project     text NOT NULL,
  template    text NOT NULL,
  generation  oid NOT NULL,
  guards      text NOT NULL,
  state       text NOT NULL CHECK (state IN ('filling','ready','retired','dropping')),
  bytes       bigint,
  created_at  timestamptz NOT NULL DEFAULT now(),
  role          text,
  role_password text
);
ALTER TABLE pgx_pool ADD COLUMN IF NOT EXISTS role text, ADD COLUMN IF NOT EXISTS role_password text;
CREATE INDEX IF NOT EXISTS pgx_pool_template ON pgx_pool (template, state);
-- Imported sources (pgx source import/sync): where each copy came from, never its password. Added in place to
-- registries made before imports were remembered (records.ts retries on 42P01).
CREATE TABLE IF NOT EXISTS pgx_source (
  database          text PRIMARY KEY,
  project           text NOT NULL,
  nonce             text NOT NULL,
  origin_kind       text NOT NULL CHECK (origin_kind IN ('url','env','file')),
  origin            text NOT NULL,
  origin_env        text,
  origin_env_file   text,
  format            text NOT NULL,
  origin_fingerprint text,
  imported_at       timestamptz NOT NULL DEFAULT now()
);
-- A copy's pgx-only name is recorded BEFORE its database is created (as a template build's is), and an old copy set
-- aside by a sync is recorded in the same transaction as the swap: so every copy pgx made is provably its own.
CREATE TABLE IF NOT EXISTS pgx_source_copy (
  name        text PRIMARY KEY,
  database    text NOT NULL,
  project     text NOT NULL,
  nonce       text NOT NULL,
  state       text NOT NULL CHECK (state IN ('new','old')),
  started_at  timestamptz NOT NULL DEFAULT now()
);
-- Frozen copies of a branch (engine/freeze.ts): one copy per state of a session's branch, shared by the subagents that
-- fork from it. Recorded BEFORE its database is created (pgx_frz_<nonce>), as a branch's creation is. ticket: the
-- sequence value drawn before its copy began (a subagent whose own ticket is lower arrived before it, so it holds
-- everything that subagent's parent had committed); signature: the parent's activity read after the copy, when it
-- proves nothing ran on the parent while the copy was made (NULL: not reusable by later arrivals).
CREATE SEQUENCE IF NOT EXISTS pgx_frozen_ticket;
CREATE TABLE IF NOT EXISTS pgx_frozen (
  name        text PRIMARY KEY,
  project     text NOT NULL,
  parent      text NOT NULL,
  nonce       text NOT NULL,
  state       text NOT NULL CHECK (state IN ('making','ready')),
  ticket      bigint NOT NULL,
  signature   text,
  method      text,
  bytes       bigint,
  started_at  timestamptz NOT NULL DEFAULT now(),
  ready_at    timestamptz
);
CREATE INDEX IF NOT EXISTS pgx_frozen_parent ON pgx_frozen (parent, state);
-- Each project's masking salt (src/mask/salt.ts): on the server with its copies, never in git; made on first use.
CREATE TABLE IF NOT EXISTS pgx_mask_salt (
  project     text PRIMARY KEY,
  salt        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
-- Subagents that did not get their session's state (engine/fork-miss.ts, decision 485): one row per subagent, written
-- when its fork of the session's branch could not be made in time; the parent hears it (the handoff inbox names the
-- branch and the time), the doctor lists it. resolved_at: a later try made the fork after all.
CREATE TABLE IF NOT EXISTS pgx_fork_miss (
  identity_key text PRIMARY KEY,
  project      text NOT NULL,
  session_id   text,
  agent_id     text,
  branch       text NOT NULL,
  parent       text NOT NULL,
  reason       text NOT NULL CHECK (reason IN ('client-tools','copy-failed','timeout')),
  cause        text,
  backends     int,
  waited_ms    int,
  fallback     text NOT NULL CHECK (fallback IN ('wait','template')),
  at           text NOT NULL,
  last_at      timestamptz NOT NULL DEFAULT now(),
  misses       int NOT NULL DEFAULT 1,
  resolved_at  timestamptz
);
CREATE INDEX IF NOT EXISTS pgx_fork_miss_project ON pgx_fork_miss (project, last_at);
CREATE TABLE IF NOT EXISTS pgx_pool_demand (
  template    text PRIMARY KEY,
  peak        int NOT NULL,
  peak_at     timestamptz NOT NULL DEFAULT now()
);
`;

/** Opens the registry database, creating (and stamping) it and its table on first use. */
export async function openRegistry(admin: ConnParams, opts: ConnectOptions = {}): Promise<RegistryDb> {
  try {
    return (await connect({ ...admin, database: REGISTRY_DB }, opts)) as RegistryDb;
  } catch (e) {
    if (sqlstateOf(e) !== SQLSTATE.INVALID_CATALOG_NAME) throw e;
  }
  const boot = await connect(admin, opts);
  try {
    // Another process may create it first; that one stamps it.
    // Nobody but the admin connects to it: it holds the branch roles' passwords.
    if (await createDatabaseIfMissing(boot, REGISTRY_DB)) {
      await writeStamp(boot, REGISTRY_DB, { kind: 'registry' });
      await revokePublicConnect(boot, REGISTRY_DB);
    }
  } finally {
    await boot.close();
  }
  const db = (await connect({ ...admin, database: REGISTRY_DB }, opts)) as RegistryDb;
  await ensureSchema(db);
  return db;
}

export async function ensureSchema(db: RegistryDb): Promise<void> {
  // Serialised: concurrent CREATE TABLE IF NOT EXISTS can still collide on the catalog's unique index.
  await withLock(db, LOCK.schema, () => db.query(SCHEMA_SQL));
}

/** The registry if it exists, without creating it (doctor reports; it changes nothing). */
export async function connectRegistryIfExists(admin: ConnParams): Promise<RegistryDb | null> {
  try {
    return (await connect({ ...admin, database: REGISTRY_DB })) as RegistryDb;
  } catch (e) {
    if (sqlstateOf(e) === SQLSTATE.INVALID_CATALOG_NAME) return null; // no branch was ever made on this server
    throw e;
  }
}

/**
 * Runs fn inside one transaction on the registry connection. Database renames, comments and ALLOW_CONNECTIONS are
 * transactional (only creating and dropping a database are not), so a pool claim commits whole or not at all.
 */
export async function inTransaction<T>(db: RegistryDb, fn: () => Promise<T>): Promise<T> {
  await db.query('BEGIN');
  try {
    const r = await fn();
    await db.query('COMMIT');
    return r;
  } catch (e) {
    await db.query('ROLLBACK').catch(() => {}); // a dead connection rolled back with it
    throw e;
  }
}
