// Warm-pool records: one row per pre-cloned member, written BEFORE its database is created (as a branch's is), so a
// filler killed at any point leaves a recorded name that provably is pgx's. The claim takes its member with a row
// lock (FOR UPDATE SKIP LOCKED): concurrent claimers each skip the rows the others hold, so no two ever get the same
// member and none waits for another.
import { q } from './records.js';
import type { RegistryDb } from './connection.js';

export type MemberState = 'filling' | 'ready' | 'retired' | 'dropping';

export interface MemberRow {
  name: string;
  project: string;
  template: string;
  generation: string;
  state: MemberState;
  /** The database's comment (its stamp), read in the same statement. */
  comment: string | null;
  /** The member's branch role, prepared NOLOGIN with it (engine/roles.ts); null under roles = "admin". */
  role: string | null;
  role_password: string | null;
}

export interface NewMember {
  name: string;
  project: string;
  template: string;
  generation: string;
  guards: string;
  /** Recorded before the role is created, as the name is before the database. */
  role?: string;
  role_password?: string;
}

export async function insertFilling(db: RegistryDb, m: NewMember): Promise<void> {
  await q(
    db,
    `INSERT INTO pgx_pool (name, project, template, generation, guards, state, role, role_password) VALUES ($1, $2, $3, $4::oid, $5, 'filling', $6, $7)`,
    [m.name, m.project, m.template, m.generation, m.guards, m.role ?? null, m.role_password ?? null],
  );
}

export async function markReady(db: RegistryDb, name: string, bytes: number): Promise<void> {
  await q(db, `UPDATE pgx_pool SET state = 'ready', bytes = $2 WHERE name = $1`, [name, bytes]);
}

/**
 * Inside the claim's transaction: the oldest ready member of the template's CURRENT build (its generation is the
 * template database's oid now) made with these guards, row-locked; members other claimers hold are skipped.
 */
/** `mask`: the [mask] rules' digest; when set, only members of a template masked with those rules are claimable. */
export async function lockClaimable(
  db: RegistryDb,
  template: string,
  guards: string,
  mask: string | null = null,
): Promise<MemberRow | undefined> {
  // Not through q(): inside a transaction a missing table aborts it, so the caller rolls back, creates the schema
  // and retries (engine/pool.ts claimMember).
  const [row] = await db.query<MemberRow>(
    `SELECT p.name, p.project, p.template, p.generation::text AS generation, p.state, shobj_description(d.oid, 'pg_database') AS comment,
            p.role, p.role_password
       FROM pgx_pool p
       JOIN pg_database d ON d.datname = p.name
       JOIN pg_database t ON t.datname = p.template AND t.oid = p.generation
      WHERE p.template = $1 AND p.guards = $2 AND p.state = 'ready'
        AND ($3::text IS NULL OR strpos(shobj_description(t.oid, 'pg_database'), '"mask":"' || $3 || '"') > 0)
      ORDER BY p.created_at, p.name LIMIT 1
        FOR UPDATE OF p SKIP LOCKED`,
    [template, guards, mask],
  );
  return row;
}

export async function deleteMember(db: RegistryDb, name: string): Promise<void> {
  await q(db, 'DELETE FROM pgx_pool WHERE name = $1', [name]);
}

/** A member whose stamp is not what its record says: never claimed again, and gc only forgets it (never drops it). */
export async function markRetired(db: RegistryDb, name: string): Promise<void> {
  await q(db, `UPDATE pgx_pool SET state = 'retired' WHERE name = $1`, [name]);
}

/** A template refresh: the members of older builds can no longer be claimed; gc drops them. */
export async function retireOtherGenerations(db: RegistryDb, template: string, generation: string): Promise<number> {
  const rows = await q(
    db,
    `UPDATE pgx_pool SET state = 'retired' WHERE template = $1 AND generation <> $2::oid AND state = 'ready' RETURNING name`,
    [template, generation],
  );
  return rows.length;
}

/**
 * Takes members out of reach of claims (state 'dropping', committed before any database is dropped, so a crash
 * in between leaves a 'dropping' record the next sweep finishes). Rows a claim holds are skipped. `all`: the ready
 * members of the current build too (drain); otherwise only what is dead: not ready, or of another build.
 */
export async function takeForDrop(
  db: RegistryDb,
  template: string,
  all: boolean,
  limit: number | null = null,
): Promise<MemberRow[]> {
  return q<MemberRow>(
    db,
    `WITH t AS (
       SELECT p.name FROM pgx_pool p LEFT JOIN pg_database tpl ON tpl.datname = p.template
        WHERE p.template = $1 AND ($2 OR p.state <> 'ready' OR tpl.oid IS DISTINCT FROM p.generation)
        ORDER BY p.created_at LIMIT $3
          FOR UPDATE OF p SKIP LOCKED)
     UPDATE pgx_pool p SET state = 'dropping' FROM t WHERE p.name = t.name
     RETURNING p.name, p.project, p.template, p.generation::text AS generation, p.state, p.role, p.role_password,
               (SELECT shobj_description(d.oid, 'pg_database') FROM pg_database d WHERE d.datname = p.name) AS comment`,
    [template, all, limit],
  );
}

/** Templates that have members to sweep (not ready, or of another build): gc visits each. */
export async function templatesToSweep(db: RegistryDb): Promise<string[]> {
  const rows = await q<{ template: string }>(
    db,
    `SELECT DISTINCT p.template FROM pgx_pool p LEFT JOIN pg_database tpl ON tpl.datname = p.template
      WHERE p.state <> 'ready' OR tpl.oid IS DISTINCT FROM p.generation ORDER BY 1`,
  );
  return rows.map((r) => r.template);
}

export interface MemberCounts {
  ready: number;
  filling: number;
  /** Retired, being dropped, or of another template build: waiting for gc. */
  stale: number;
  ready_bytes: number;
  oldest_ready_at: Date | null;
}

export async function countMembers(db: RegistryDb, template: string, guards: string): Promise<MemberCounts> {
  const [r] = await q<{ ready: number; filling: number; stale: number; ready_bytes: string; oldest: Date | null }>(
    db,
    `SELECT count(*) FILTER (WHERE live AND p.state = 'ready')::int AS ready,
            count(*) FILTER (WHERE p.state = 'filling')::int AS filling,
            count(*) FILTER (WHERE NOT live AND p.state <> 'filling')::int AS stale,
            COALESCE(sum(p.bytes) FILTER (WHERE live AND p.state = 'ready'), 0)::text AS ready_bytes,
            min(p.created_at) FILTER (WHERE live AND p.state = 'ready') AS oldest
       FROM (SELECT p.*, (p.state IN ('ready','filling') AND tpl.oid IS NOT DISTINCT FROM p.generation AND p.guards = $2) AS live
               FROM pgx_pool p LEFT JOIN pg_database tpl ON tpl.datname = p.template WHERE p.template = $1) p`,
    [template, guards],
  );
  return {
    ready: r!.ready,
    filling: r!.filling,
    stale: r!.stale,
    ready_bytes: Number(r!.ready_bytes),
    oldest_ready_at: r!.oldest,
  };
}

/**
 * The template's recent peak of concurrent subagents: the active (or being created) subagent branches right now,
 * remembered for 24 hours unless exceeded. The filler records it each time it runs (after every claim).
 */
export async function recordDemand(db: RegistryDb, template: string): Promise<number> {
  const [r] = await q<{ peak: number }>(
    db,
    `WITH cur AS (SELECT count(*)::int AS n FROM pgx_branch WHERE template = $1 AND kind = 'subagent' AND state IN ('creating','active'))
     INSERT INTO pgx_pool_demand AS d (template, peak, peak_at) SELECT $1, n, now() FROM cur
     ON CONFLICT (template) DO UPDATE SET
       peak    = CASE WHEN d.peak_at < now() - interval '24 hours' OR EXCLUDED.peak >= d.peak THEN EXCLUDED.peak ELSE d.peak END,
       peak_at = CASE WHEN d.peak_at < now() - interval '24 hours' OR EXCLUDED.peak >= d.peak THEN now() ELSE d.peak_at END
     RETURNING d.peak`,
    [template],
  );
  return r!.peak;
}

export async function recentPeak(db: RegistryDb, template: string): Promise<number> {
  const [r] = await q<{ peak: number }>(
    db,
    `SELECT peak FROM pgx_pool_demand WHERE template = $1 AND peak_at >= now() - interval '24 hours'`,
    [template],
  );
  return r?.peak ?? 0;
}

/** Milliseconds since the newest branch of this template was recorded (a claim or a clone), or null: none. */
export async function msSinceLastBranch(db: RegistryDb, template: string): Promise<number | null> {
  const [r] = await q<{ ms: number | null }>(
    db,
    `SELECT (extract(epoch FROM now() - max(created_at)) * 1000)::float8 AS ms FROM pgx_branch WHERE template = $1`,
    [template],
  );
  return r?.ms ?? null;
}

/** The doctor's read: has this registry a pool table at all (an older one may not; nothing is created). */
export async function poolTableExists(db: RegistryDb): Promise<boolean> {
  const [t] = await db.query<{ exists: boolean }>("SELECT to_regclass('pgx_pool') IS NOT NULL AS exists");
  return t!.exists;
}

/** Every member name the pool records, whatever its state (the doctor's "stamped without a record"). */
export async function recordedMemberNames(db: RegistryDb): Promise<Set<string>> {
  return new Set((await db.query<{ name: string }>('SELECT name FROM pgx_pool')).map((r) => r.name));
}
