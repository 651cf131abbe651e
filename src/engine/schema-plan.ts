// The schema half of a branch as a migration (decisions 500–509): @supabase/pg-delta (pinned 1.0.0-alpha.34) reads
// each database into a fact base, and plans the DDL from one to another. pgx loads it only here, on demand: the CLI's
// `agent diff --sql` and `agent merge` (the hot-path bundles carry a stub: scripts/build.mjs).
//
// Always planned with scope 'database': the default (cluster) scope plans CREATE/ALTER/DROP ROLE for every role one
// side has and the other lacks, and pgx never touches a role it did not make. Both sides are on one server, so their
// roles are the same anyway.
//
// Three-way (merge): the desired state is the parent's facts with the branch's changes since the fork point laid
// over them, fact by fact (each fact is content-addressed: its own hash, its children apart). A fact the branch left
// as the fork point had it is the parent's; one the branch changed is the branch's, when the parent left it alone or
// made the same change; one both changed differently is a conflict. Edges (dependencies, owners) likewise. The
// migration is then planned from the parent as it is to that state: it holds the branch's changes only, and never
// undoes the parent's.
import type { Db } from '../server/db.js';

type PgDelta = {
  extract: typeof import('@supabase/pg-delta/extract').extract;
  plan: typeof import('@supabase/pg-delta/plan').plan;
  FactBase: typeof import('@supabase/pg-delta/core').FactBase;
  encodeId: typeof import('@supabase/pg-delta/core').encodeId;
};
type FactBase = import('@supabase/pg-delta/core').FactBase;
type Fact = import('@supabase/pg-delta/core').Fact;
type Edge = import('@supabase/pg-delta/core').DependencyEdge;

let loaded: Promise<PgDelta> | undefined;
async function pgDelta(): Promise<PgDelta> {
  loaded ??= Promise.all([
    import('@supabase/pg-delta/extract'),
    import('@supabase/pg-delta/plan'),
    import('@supabase/pg-delta/core'),
  ]).then(([x, p, c]) => ({ extract: x.extract, plan: p.plan, FactBase: c.FactBase, encodeId: c.encodeId }));
  return loaded;
}

/** One database's schema as pg-delta reads it, and the kinds it saw but does not model (never silently absent). */
export interface SchemaState {
  facts: FactBase;
  unmodeled: string[];
}

/**
 * Reads a database's schema over pgx's own connection (so the StatementGate sees every statement): pg-delta asks a
 * pool for a client; this one lends the connection and takes it back. One REPEATABLE READ READ ONLY transaction.
 */
export async function readSchema(db: Db): Promise<SchemaState> {
  const pd = await pgDelta();
  const client = {
    query: async (sql: string, params?: unknown[]) => ({ rows: await db.query(sql, params) }),
    release: () => {},
  };
  const pool = { connect: async () => client } as unknown as Parameters<PgDelta['extract']>[0];
  const r = await pd.extract(pool);
  const facts = withoutBranchRoles(pd, r.factBase);
  const unmodeled = r.diagnostics
    .filter((d) => d.code === 'unmodeled_kind')
    .map((d) => d.message)
    .slice(0, 50);
  return { facts, unmodeled };
}

/** pgx's own branch roles (roles.ts newRoleCredentials): each branch's, so every side names another. */
const BRANCH_ROLE = /^pgx_role_[a-z0-9]+$/;

/**
 * Ownership and the privileges of pgx's branch roles are pgx's doing, not the branch's work: each branch's objects are
 * its own role's (roles.ts), so the fork point, the branch and the parent name three roles for one thing. They are
 * left out of every side (no OWNER TO, no GRANT to a branch role or to an object's owner in a migration); a merge
 * hands what it creates to the session's role after, as a clone is (catalog.transferOwnershipInBranch).
 */
function withoutBranchRoles(pd: PgDelta, fb: FactBase): FactBase {
  // An owner's own privileges go with the ownership (the template's objects are the admin's; a branch's, its role's).
  const owners = new Map<string, string>();
  for (const e of fb.edges) if (e.kind === 'owner' && e.to.kind === 'role') owners.set(pd.encodeId(e.from), e.to.name);
  // (pg-delta marks the owner's own row with `_ownerDefault`; an owner it does not extract, pg_database_owner, has no edge)
  const ownersOwn = (f: Fact) =>
    f.id.kind === 'acl' && ('_ownerDefault' in f.payload || owners.get(pd.encodeId(f.id.target)) === f.id.grantee);
  const mentionsBranchRole = (id: Fact['id']): boolean =>
    (id.kind === 'acl' && BRANCH_ROLE.test(id.grantee)) ||
    (id.kind === 'defaultPrivilege' && (BRANCH_ROLE.test(id.role) || BRANCH_ROLE.test(id.grantee)));
  return new pd.FactBase(
    fb.facts().filter((f) => !mentionsBranchRole(f.id) && !ownersOwn(f)),
    fb.edges.filter((e) => e.kind !== 'owner'),
    'liveDb',
  );
}

/** One DDL statement of a migration, with what makes it risky. */
export interface SchemaStep {
  sql: string;
  /** A table rewrite (an ALTER COLUMN TYPE, a volatile default), a drop, data lost (a column or table dropped). */
  risks: ('rewrite' | 'drop' | 'data loss')[];
  /** Cannot run inside a transaction block (a merge refuses it; `diff --sql` says so). */
  outsideTransaction: boolean;
}

export interface SchemaMigration {
  /** Session settings the statements assume (pg-delta's preamble: search_path, check_function_bodies). */
  settings: { name: string; value: string }[];
  steps: SchemaStep[];
}

/** The DDL that takes `from` to `to`. */
export async function schemaMigration(from: FactBase, to: FactBase): Promise<SchemaMigration> {
  const pd = await pgDelta();
  const plan = pd.plan(from, to, { scope: 'database' });
  return {
    settings: plan.preamble,
    steps: plan.actions.map((a) => ({
      sql: a.sql.trim().replace(/;+\s*$/, ''),
      risks: [
        ...(a.rewriteRisk ? (['rewrite'] as const) : []),
        ...(a.verb === 'drop' ? (['drop'] as const) : []),
        ...(a.dataLoss === 'destructive' ? (['data loss'] as const) : []),
      ],
      outsideTransaction: a.transactionality === 'nonTransactional',
    })),
  };
}

/** An object both sides changed since the fork point: its three versions (null: absent there). */
export interface SchemaConflict {
  object: string;
  fork_point: string | null;
  branch: string | null;
  parent: string | null;
}

/** The parent's schema with the branch's changes since the fork point laid over it, and what both changed. */
export async function mergedSchema(
  base: FactBase,
  branch: FactBase,
  parent: FactBase,
): Promise<{ desired: FactBase; conflicts: SchemaConflict[] }> {
  const pd = await pgDelta();
  const byId = (fb: FactBase) => new Map(fb.facts().map((f) => [pd.encodeId(f.id), f]));
  const [b, s, p] = [byId(base), byId(branch), byId(parent)];
  const hash = (fb: FactBase, f: Fact | undefined) => (f ? fb.hashOf(f.id) : null);
  const facts: Fact[] = [];
  const conflicts: SchemaConflict[] = [];
  const branchChanged = new Set<string>();
  for (const id of new Set([...b.keys(), ...s.keys(), ...p.keys()])) {
    const [hb, hs, hp] = [hash(base, b.get(id)), hash(branch, s.get(id)), hash(parent, p.get(id))];
    let take = p.get(id);
    if (hs !== hb) {
      branchChanged.add(id);
      if (hp === hb || hp === hs) take = s.get(id);
      else conflicts.push(versions(id, b.get(id), s.get(id), p.get(id)));
    }
    if (take) facts.push(take);
  }
  // A fact whose parent one side dropped goes with it; when the other side changed it (a column the branch added to a
  // table the parent dropped, or the other way round), both sides wrote the same object, one by dropping it.
  let kept = new Set(facts.map((f) => pd.encodeId(f.id)));
  for (let orphans = true; orphans;) {
    orphans = false;
    for (const f of facts) {
      const id = pd.encodeId(f.id);
      if (!f.parent || kept.has(pd.encodeId(f.parent)) || !kept.has(id)) continue;
      kept.delete(id);
      orphans = true;
      const changedHere =
        hash(base, b.get(id)) !== hash(branch, s.get(id)) || hash(base, b.get(id)) !== hash(parent, p.get(id));
      if (changedHere) {
        const parentId = pd.encodeId(f.parent);
        conflicts.push({
          ...versions(id, b.get(id), s.get(id), p.get(id)),
          object: `${id} (in ${parentId}, dropped by one side)`,
        });
      }
    }
    kept = new Set(facts.filter((f) => kept.has(pd.encodeId(f.id))).map((f) => pd.encodeId(f.id)));
  }
  facts.splice(0, facts.length, ...facts.filter((f) => kept.has(pd.encodeId(f.id))));
  const edgeKey = (e: Edge) => `${pd.encodeId(e.from)}|${pd.encodeId(e.to)}|${e.kind}`;
  const edgesOf = (fb: FactBase) => new Map(fb.edges.map((e) => [edgeKey(e), e]));
  const [eb, es, ep] = [edgesOf(base), edgesOf(branch), edgesOf(parent)];
  const edges: Edge[] = [];
  for (const [k, e] of new Map([...eb, ...es, ...ep])) {
    const inS = es.has(k);
    if (inS !== eb.has(k) ? inS : ep.has(k)) edges.push(e);
  }
  // The branch's new objects that depend on one the parent dropped (a view over a column the parent dropped).
  for (const e of edges) {
    const from = pd.encodeId(e.from);
    const to = pd.encodeId(e.to);
    if (e.kind === 'depends' && branchChanged.has(from) && kept.has(from) && !kept.has(to) && b.has(to))
      conflicts.push({
        object: `${from} (depends on ${to})`,
        fork_point: show(b.get(to)),
        branch: show(s.get(to)),
        parent: null,
      });
  }
  // With conflicts there is no one desired state: the parent's stands in (nothing is planned from it).
  if (conflicts.length) return { desired: parent, conflicts: dedupe(conflicts) };
  return { desired: new pd.FactBase(facts, edges, 'liveDb'), conflicts: [] };
}

function versions(id: string, b?: Fact, s?: Fact, p?: Fact): SchemaConflict {
  return { object: id, fork_point: show(b), branch: show(s), parent: show(p) };
}

/** A fact's payload as one line (its definition as pg-delta read it), capped. */
function show(f: Fact | undefined): string | null {
  if (!f) return null;
  const text = JSON.stringify(f.payload, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return text.length > 300 ? `${text.slice(0, 297)}…` : text;
}

function dedupe(list: SchemaConflict[]): SchemaConflict[] {
  const seen = new Set<string>();
  return list.filter((c) => (seen.has(c.object) ? false : (seen.add(c.object), true)));
}
