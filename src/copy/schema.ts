// The schema half of the Node copy: @supabase/pg-delta reads the source (under the copy's snapshot) and the EMPTY
// copy, plans the DDL that makes the one into the other with scope 'database' (the default 'cluster' scope plans DROP
// ROLE / ALTER ROLE for every role the source lacks: never), and applies it in two parts around the rows: what the
// rows go into first, then what would slow their loading or reject them (indexes, keys, foreign keys, triggers, row
// security, NOT VALID checks) and everything that depends on those, each part in the plan's order (decision 481).
import type { Client, Pool } from 'pg';
// Subpaths, not the package's barrel (which reaches its optional SQL-reordering peer, @supabase/pg-topo).
import { apply } from '@supabase/pg-delta/apply';
import {
  buildFactBase,
  encodeId,
  type DependencyEdge,
  type Fact,
  type FactBase,
  type StableId,
} from '@supabase/pg-delta/core';
import { extract } from '@supabase/pg-delta/extract';
import { plan, type Action, type Plan } from '@supabase/pg-delta/plan';
import { PgxError } from '../lib/errors.js';
import type { Db, StatementGate } from '../server/db.js';

/** A pg Pool as pg-delta uses one (connect, query, release), over one client we already hold. */
export function poolOf(client: Client, db: Db, gate?: StatementGate, afterBegin?: string): Pool {
  const wrapped = {
    async query(text: string, params?: unknown[]) {
      await gate?.before(text, db);
      const r = await client.query(text, params as unknown[]);
      // pg-delta's extract opens its own REPEATABLE READ transaction: it joins the copy's snapshot right there.
      if (afterBegin && /^BEGIN ISOLATION LEVEL REPEATABLE READ/i.test(text)) await client.query(afterBegin);
      return r;
    },
    release() {},
  };
  return { connect: async () => wrapped } as unknown as Pool;
}

/** An object kind the library does not model (and the copy would lack), as extract reports it. */
export interface Unmodeled {
  kind: string;
  count: number;
  samples: string[];
}

export interface SourceSchema {
  facts: FactBase;
  unmodeled: Unmodeled[];
  /** Every role the schema names: owners, grantees, default privileges' roles, policies' roles. */
  roles: string[];
  /** The roles that own something. */
  owners: string[];
}

export async function readSchema(pool: Pool): Promise<SourceSchema> {
  const r = await extract(pool);
  const unmodeled = r.diagnostics
    .filter((d) => d.code === 'unmodeled_kind')
    .map((d) => {
      const c = (d.context ?? {}) as { kind?: string; count?: number; samples?: unknown[] };
      return { kind: String(c.kind), count: Number(c.count ?? 1), samples: (c.samples ?? []).map(String) };
    });
  const roles = new Set<string>();
  const owners = new Set<string>();
  for (const e of r.factBase.edges) {
    if (e.to.kind !== 'role') continue;
    roles.add((e.to as { name: string }).name);
    if (e.kind === 'owner') owners.add((e.to as { name: string }).name);
  }
  for (const f of r.factBase.facts()) for (const role of rolesOf(f)) roles.add(role);
  return { facts: r.factBase, unmodeled, roles: [...roles].sort(), owners: [...owners].sort() };
}

/** The roles a fact itself names (not through an edge): an ACL's grantee, a default privilege's role and grantee. */
function rolesOf(f: Fact): string[] {
  const id = f.id as { kind: string; grantee?: string; role?: string };
  if (id.kind === 'acl') return id.grantee && id.grantee !== 'PUBLIC' ? [id.grantee] : [];
  if (id.kind === 'defaultPrivilege') return [id.role, id.grantee].filter((r): r is string => !!r && r !== 'PUBLIC');
  return [];
}

export interface PlanOptions {
  /** The copying role: what it creates is its own (no ALTER … OWNER TO it). */
  self: string;
  /** Roles that exist on the copy's server (the plan may name them). */
  present: string[];
  /** Keep owners and privileges ('kept'), or make every object the copying role's with no GRANT ('dropped'). */
  privileges: 'kept' | 'dropped';
}

/**
 * The source's facts as the copy should get them: with the roles the copy's server lacks (and, 'dropped', every
 * owner and privilege) taken out, and each table made to depend on the types its columns use, so that a domain or
 * an enum of the same database is created before the table and its column keeps its place (the library otherwise
 * adds such a column last).
 */
function desiredFacts(src: FactBase, empty: FactBase, o: PlanOptions): FactBase {
  const present = new Set(o.present);
  const keepRole = (r: string | undefined) => o.privileges === 'kept' && (!r || r === 'PUBLIC' || present.has(r));
  const ownerOf = new Map<string, string>();
  for (const e of src.edges) if (e.kind === 'owner') ownerOf.set(encodeId(e.from), (e.to as { name: string }).name);
  const facts = src.facts().filter((f) => {
    const id = f.id as { kind: string; grantee?: string; role?: string; target?: StableId };
    // What the new database was made with (schema public) has an ACL already, which the owner's entry must be in.
    if (id.kind === 'acl') return keepRole(id.grantee) && !(isOwnDefault(f, ownerOf, o.self) && !empty.get(id.target!));
    if (id.kind === 'defaultPrivilege') return keepRole(id.role) && keepRole(id.grantee);
    return true;
  });
  const edges: DependencyEdge[] = [];
  for (const e of src.edges) {
    if (e.kind === 'owner' && !keepRole((e.to as { name: string }).name)) continue;
    edges.push(e);
    const from = e.from as { kind: string; schema?: string; table?: string };
    if (e.kind === 'depends' && from.kind === 'column' && (e.to.kind === 'domain' || e.to.kind === 'type'))
      edges.push({
        from: { kind: 'table', schema: from.schema!, name: from.table! } as StableId,
        to: e.to,
        kind: 'depends',
      });
  }
  return buildFactBase(facts, edges, src.source);
}

/**
 * An owner's own default privileges on its object: the library reads them from acldefault() and would GRANT them
 * explicitly, turning a NULL ACL into an explicit one that means the same. Left out, the copy's ACL stays NULL, as
 * the source's and pg_dump's are. (An object without an owner edge is the copying role's: the edge is implicit.)
 * Not for an object the empty database already has (schema public, whose ACL is explicit from the start): there the
 * entry left out would be an owner without its own privileges (a fork's role could not CREATE in public).
 */
function isOwnDefault(f: Fact, ownerOf: Map<string, string>, self: string): boolean {
  const id = f.id as { grantee?: string; target?: StableId };
  if (!id.target || id.grantee !== (ownerOf.get(encodeId(id.target)) ?? self)) return false;
  const p = f.payload as { privileges?: string[]; grantable?: string[]; _ownerDefault?: string[] };
  const same = (a: string[] = [], b: string[] = []) => a.length === b.length && a.every((x) => b.includes(x));
  return p._ownerDefault !== undefined && same(p.privileges, p._ownerDefault) && !(p.grantable ?? []).length;
}

/** Constraint kinds built after the rows: keys, uniques, exclusions, foreign keys (pg_dump's post-data). */
const AFTER_ROWS_CONSTRAINTS = new Set(['p', 'u', 'x', 'f']);

export interface SchemaPlan {
  plan: Plan;
  beforeRows: Action[];
  afterRows: Action[];
  /** Materialized views, in the order the plan creates them (so one on another is refreshed after it). */
  matviews: { schema: string; name: string }[];
  /** Default privileges: set last, as pg_dump does, so that they shape none of the objects the copy creates. */
  last: Action[];
}

/** Plans the copy's DDL against the empty database's facts, and splits it around the rows. */
export function planCopy(src: SourceSchema, empty: FactBase, o: PlanOptions): SchemaPlan {
  const desired = desiredFacts(src.facts, empty, o);
  // Keys and uniques stay out of CREATE TABLE (the library folds them in): they are built once the rows are in.
  const exclude = new Set(
    desired
      .facts()
      .filter((f) => f.id.kind === 'constraint' && AFTER_ROWS_CONSTRAINTS.has(String(f.payload['type'])))
      .map((f) => encodeId(f.id)),
  );
  const present = o.present.filter((r) => r !== o.self);
  const p = plan(empty, desired, {
    scope: 'database',
    defaultOwner: o.self,
    assumedRoles: [o.self, ...present],
    foldConstraints: { exclude },
  });
  refuseRoleStatements(p.actions);
  const afterFacts = new Set<string>();
  const beforeRows: Action[] = [];
  const afterRows: Action[] = [];
  const last: Action[] = [];
  const matviews: { schema: string; name: string }[] = [];
  for (const a of p.actions) {
    if (a.produces.some((id) => id.kind === 'defaultPrivilege')) {
      last.push(a);
      continue;
    }
    const after =
      a.produces.some((id) => seedsAfterRows(id, desired)) ||
      /\b(ENABLE|FORCE) ROW LEVEL SECURITY\b/.test(a.sql) ||
      [...a.consumes, ...a.produces.flatMap((id) => dependsOn(desired, id))].some((id) => afterFacts.has(encodeId(id)));
    if (after) for (const id of a.produces) afterFacts.add(encodeId(id));
    (after ? afterRows : beforeRows).push(a);
    for (const id of a.produces)
      if (id.kind === 'materializedView') matviews.push(id as { schema: string; name: string });
  }
  return {
    plan: p,
    beforeRows: linkSequencesAfterOwners(beforeRows),
    afterRows: linkSequencesAfterOwners(afterRows),
    matviews,
    last,
  };
}

const QUOTED = '"(?:[^"]|"")*"';
const OWNED_BY = new RegExp(
  `^ALTER SEQUENCE (?:${QUOTED}\\.)?${QUOTED} OWNED BY (${QUOTED}\\.${QUOTED})\\.${QUOTED}\\s*$`,
);

/**
 * The library sets a partitioned table's owner after its partitions, and may link a sequence to it (OWNED BY) first;
 * PostgreSQL refuses to link a sequence and a table of different owners (a fork of a branch whose objects are its
 * role's). Each link is moved to just after its table's `ALTER TABLE … OWNER TO` when that comes later.
 */
function linkSequencesAfterOwners(actions: Action[]): Action[] {
  const out = [...actions];
  for (let i = 0; i < out.length; i++) {
    const table = OWNED_BY.exec(out[i]!.sql)?.[1];
    if (!table) continue;
    const owner = out.findIndex((a, j) => j > i && a.sql.startsWith(`ALTER TABLE ${table} OWNER TO `));
    if (owner < 0) continue;
    const [link] = out.splice(i, 1);
    out.splice(owner, 0, link!); // the owner's action is now at owner - 1: the link goes right after it
    i--;
  }
  return out;
}

/** An index, a trigger, a policy, a rule, a key or foreign key, or a check not yet valid (pg_dump's post-data). */
function seedsAfterRows(id: StableId, facts: FactBase): boolean {
  if (['index', 'trigger', 'policy', 'rule'].includes(id.kind)) return true;
  if (id.kind !== 'constraint') return false;
  const f = facts.get(id);
  return AFTER_ROWS_CONSTRAINTS.has(String(f?.payload['type'])) || f?.payload['validated'] === false;
}

/** What a fact depends on (pg_depend, as extracted) and its parent: a view grouped by a key depends on that key. */
function dependsOn(facts: FactBase, id: StableId): StableId[] {
  const f = facts.get(id);
  return [...facts.outgoingEdges(id).map((e) => e.to), ...(f?.parent ? [f.parent] : [])];
}

/**
 * The plan may change what the new database was made with (schema public's owner and ACL, as pg_dump's restore does),
 * all of it pgx's; but a role is the server's: a statement that would create, alter or drop one, or a membership,
 * means the plan is not what pgx asked for, and is refused before anything runs (scope 'database' plans none).
 */
function refuseRoleStatements(actions: Action[]): void {
  const bad = actions.find(
    (a) =>
      [...a.produces, ...a.destroys, ...a.releases].some((id) => id.kind === 'role' || id.kind === 'membership') ||
      /^\s*(CREATE|ALTER|DROP)\s+(ROLE|USER|GROUP)\b/i.test(a.sql),
  );
  if (bad)
    throw new PgxError(
      'TEMPLATE_FAILED',
      `The copy's schema plan holds a statement pgx never runs in a copy: ${bad.sql.slice(0, 120)}`,
      'Nothing was changed. Install pg_dump of at least the server version (pgx then copies with it), and report this.',
    );
}

/** Applies one part of the plan on the copy, in the plan's order and transactions; a failure says which statement. */
export async function applyPart(p: Plan, actions: Action[], pool: Pool, extraPreamble: Plan['preamble'] = []) {
  if (!actions.length) return;
  const report = await apply({ ...p, actions, preamble: [...p.preamble, ...extraPreamble] }, pool, {
    fingerprintGate: false,
  });
  if (report.status !== 'applied') {
    const err = report.error;
    throw new PgxError(
      'TEMPLATE_FAILED',
      `The copy's schema could not be created: ${err?.message ?? 'unknown error'} (at: ${(err?.sql ?? '').slice(0, 160)})`,
      'Nothing of the copy is kept. Install pg_dump of at least the server version (pgx then copies with it), or ' +
        'report the statement.',
    );
  }
}
