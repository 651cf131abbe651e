// Branch roles (least privilege): each branch gets a login role of its own, and the credentials pgx hands a
// branch's commands (exec, the SessionStart env file, `agent up`) are that role's, never the admin's.
//
// The role: LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS, a random password; the only role
// besides the admin with CONNECT on its branch (REVOKE … FROM PUBLIC on branches and on pgx_registry, which are
// pgx's own; the source and the template are never altered); owner of the branch's objects so that migrations run.
// Its name and password are recorded (registry/records.ts) BEFORE it is created, as a branch's name is before its
// database: a crash in between leaves a record that the next ensure completes or gc cleans up. The password lives in
// the registry record, which only the admin may read, so an attach hands it out from the row it already reads (no
// extra round trip); the server only ever sees its SCRAM verifier (never the password, in a statement or a log).
//
// Retire: NOLOGIN, then every session of the role ends, wherever it is (the source included). Revive: LOGIN again.
// Drop: after the database; a role that still owns something elsewhere is reported, left NOLOGIN and stamped, and gc
// drops it once nothing owns anything of it any more (the frozen copy of a branch dropped after a fan-out: decision 453).
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { PgxError } from '../lib/errors.js';
import { REGISTRY_DB } from '../registry/connection.js';
import { rolesLeftBehind } from '../registry/orphans.js';
import { LOCK, withLock } from '../registry/locks.js';
import type { BranchRecord } from '../registry/records.js';
import * as catalog from '../server/catalog.js';
import { connect } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import type { EngineContext } from './context.js';

export type RoleMode = 'per-branch' | 'admin';

export interface ResolvedRoleMode {
  /** What `[agent] roles` says. */
  configured: 'auto' | 'per-branch' | 'admin';
  mode: RoleMode;
  /** Why (auto): what the admin role can do. */
  reason: string;
}

const resolved = new WeakMap<EngineContext, Promise<ResolvedRoleMode>>();

/** The mode this work uses: `auto` asks the server once per engine (on the create path only, never on attach). */
export function roleMode(e: EngineContext): Promise<ResolvedRoleMode> {
  let p = resolved.get(e);
  if (!p) {
    p = resolveRoleMode(e);
    resolved.set(e, p);
    p.catch(() => resolved.delete(e));
  }
  return p;
}

async function resolveRoleMode(e: EngineContext): Promise<ResolvedRoleMode> {
  const configured = e.config.roles;
  if (configured === 'admin') return { configured, mode: 'admin', reason: '[agent] roles = "admin"' };
  const r = await catalog.currentRole(e.registry);
  const can = canCreateRoles(r);
  if (can) return { configured, mode: 'per-branch', reason: can };
  if (configured === 'per-branch') {
    throw new PgxError(
      'BRANCH_FAILED',
      `[agent] roles = "per-branch", but the role "${r?.rolname ?? e.admin.user}" of ${e.config.serverUrlFrom ?? '[server] url'} can't create roles.`,
      `Give it CREATEROLE (as a superuser: ALTER ROLE ${catalog.quoteIdent(r?.rolname ?? e.admin.user)} CREATEROLE), ` +
        `or set [agent] roles = "admin" (or "auto") in ${e.config.file ?? '.pgx.toml'}.`,
    );
  }
  return {
    configured,
    mode: 'admin',
    reason: `"${r?.rolname ?? e.admin.user}" is neither a superuser nor has CREATEROLE`,
  };
}

/** Superuser, or CREATEROLE (PostgreSQL 16+ then gives the creator ADMIN on each role it makes). */
export function canCreateRoles(r: catalog.RoleInfo | undefined): string | undefined {
  if (r?.rolsuper) return `"${r.rolname}" is a superuser`;
  if (r?.rolcreaterole) return `"${r.rolname}" has CREATEROLE`;
  return undefined;
}

const BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh role name and password. The name says nothing about the branch: a pool member's role keeps its name. */
export function newRoleCredentials(): { role: string; password: string } {
  const suffix = Array.from(randomBytes(14), (b) => BASE36[b % 36]).join('');
  return { role: `pgx_role_${suffix}`, password: randomBytes(24).toString('base64url') };
}

/** The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802/7677), as CREATE ROLE … PASSWORD accepts it. */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** Role credentials for a record that has none yet, when this work uses per-branch roles. */
export async function credentialsFor(e: EngineContext): Promise<{ role: string; password: string } | undefined> {
  return (await roleMode(e)).mode === 'per-branch' ? newRoleCredentials() : undefined;
}

function refuseForeignRole(role: string): never {
  throw new PgxError(
    'NOT_PGX_DATABASE',
    `Refusing to use role "${role}": it exists without pgx's role stamp.`,
    'pgx only alters or drops roles it created. Remove the registry record (`pgx agent down --branch <name>`) or that role yourself.',
  );
}

/**
 * Makes `role` the branch's (idempotent: the next ensure after a crash finishes it): created LOGIN and stamped, the
 * only role with CONNECT, and owner of the branch's objects. `login: false` prepares it ahead of time (a pool member).
 */
export async function prepareBranchRole(
  e: EngineContext,
  database: string,
  role: string,
  password: string,
  o: { login?: boolean; refusesConnections?: boolean } = {},
): Promise<void> {
  const reg = e.registry;
  const login = o.login ?? true;
  const info = await catalog.branchRoleInfo(reg, role);
  if (info.exists && !info.stamped) refuseForeignRole(role);
  if (!info.exists) {
    const admin = await catalog.currentRole(reg);
    await catalog.createBranchRole(reg, role, scramVerifier(password), { login, grantToAdmin: !admin?.rolsuper });
  } else if (info.canLogin !== login) {
    await catalog.setRoleLogin(reg, role, login);
  }
  await catalog.grantBranchAccess(reg, database, role);
  // Registries made before roles. Only when still needed, and one process at a time: concurrent GRANT/REVOKE on one
  // database fail with "tuple concurrently updated" (20 SubagentStarts at once did, in CI).
  if (await catalog.publicCanConnect(reg, REGISTRY_DB))
    await withLock(reg, LOCK.schema, () => catalog.revokePublicConnect(reg, REGISTRY_DB));
  // A pool member refuses connections until claimed: opened for the transfer only, once PUBLIC has lost CONNECT
  // (so only the admin can connect meanwhile; the role is NOLOGIN).
  if (o.refusesConnections) await catalog.allowConnections(reg, database, true);
  const branch = await connect({ ...e.admin, database }, { gate: e.gate });
  try {
    await catalog.transferOwnershipInBranch(branch, role);
  } finally {
    await branch.close();
    if (o.refusesConnections) await catalog.allowConnections(reg, database, false);
  }
}

export interface RoleRetired {
  sessions_terminated: number;
  sessions_remaining: number;
}

/** NOLOGIN, then every session of the role ends, wherever it is. A role without pgx's stamp is not touched. */
export async function retireBranchRole(e: EngineContext, role: string, waitMs?: number): Promise<RoleRetired> {
  const info = await catalog.branchRoleInfo(e.registry, role);
  if (!info.exists) return { sessions_terminated: 0, sessions_remaining: 0 };
  if (!info.stamped) refuseForeignRole(role);
  if (info.canLogin) await catalog.setRoleLogin(e.registry, role, false);
  const t = await catalog.terminateRoleBackends(e.registry, role, waitMs);
  return { sessions_terminated: t.terminated, sessions_remaining: t.remaining };
}

/** Inside the claim's transaction: the member's role becomes a branch's and logs in (it must carry pgx's stamp). */
export async function claimMemberRole(e: EngineContext, role: string): Promise<void> {
  const info = await catalog.branchRoleInfo(e.registry, role);
  if (!info.stamped) refuseForeignRole(role);
  if (!info.canLogin) await catalog.setRoleLogin(e.registry, role, true);
}

/** A revived branch's role logs in again (recreated if it is gone). */
export async function reviveBranchRole(e: EngineContext, rec: BranchRecord): Promise<void> {
  if (!rec.role || !rec.role_password) return;
  const info = await catalog.branchRoleInfo(e.registry, rec.role);
  if (info.exists && !info.stamped) refuseForeignRole(rec.role);
  if (!info.exists) return prepareBranchRole(e, rec.name, rec.role, rec.role_password);
  if (!info.canLogin) await catalog.setRoleLogin(e.registry, rec.role, true);
}

export type RoleDropped =
  { role: string; action: 'dropped' | 'absent' } | { role: string; action: 'left'; reason: string };

/** After the branch's database is gone. A role still owning something elsewhere is left (NOLOGIN) and reported. */
export async function dropBranchRole(e: EngineContext, role: string): Promise<RoleDropped> {
  const info = await catalog.branchRoleInfo(e.registry, role);
  if (!info.exists) return { role, action: 'absent' };
  if (!info.stamped) refuseForeignRole(role);
  if (info.canLogin) await catalog.setRoleLogin(e.registry, role, false);
  await catalog.terminateRoleBackends(e.registry, role);
  const r = await catalog.dropBranchRole(e.registry, role);
  return r.dropped ? { role, action: 'dropped' } : { role, action: 'left', reason: r.reason };
}

/**
 * gc: drops the branch roles pgx made that no record names and that own nothing any more, at most `limit`. A branch
 * dropped while a frozen copy of it still held objects its role owned (`down --now` after a fan-out, or gc dropping a
 * branch SessionEnd retired) left the role; gc drops the copy later, and the role with it here. A role that owns
 * something again by the time of its drop (PostgreSQL refuses) is left for the next gc; one owning something outside
 * pgx's databases is never listed (the doctor names it, with the statements that clean it up).
 */
export async function dropRolesLeftBehind(e: EngineContext, limit = 1000): Promise<string[]> {
  const dropped: string[] = [];
  for (const role of await rolesLeftBehind(e.registry, limit))
    if ((await dropBranchRole(e, role)).action === 'dropped') dropped.push(role);
  return dropped;
}

/** What a branch's commands connect with: its role when it has one, else the admin's (roles = "admin"). */
export function branchConn(admin: ConnParams, rec: Pick<BranchRecord, 'name' | 'role' | 'role_password'>): ConnParams {
  const { statementTimeoutMs: _s, connectDeadlineAt: _d, connectWaitMs: _w, ...p } = admin;
  if (!rec.role) return { ...p, database: rec.name };
  return { ...p, user: rec.role, password: rec.role_password ?? undefined, database: rec.name };
}
