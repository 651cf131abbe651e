// Forks: a new branch made as a copy of another branch (its session's, by default for a subagent) instead of the
// template, so a subagent sees the migration its parent just ran. One level deep: a fork's parent is never a fork.
//
// Which way (decision 151):
// - Unchanged parent: a session branch nobody has connected to since it was made holds exactly the template build it
//   came from, so the fork takes the warm pool's O(1) claim (or a template clone), as a template branch would.
//   "Unchanged" is proven in ONE registry round trip (registry/lineage.ts forkParent): no backend on it now, its statistics mark
//   (cumulative session count, its counters' and the cluster's last reset) equal to the one recorded when it went
//   active, and that build still the template's. A change needs a session on the database; a session's counters are
//   flushed at the latest when it exits, and it leaves pg_stat_activity only after that flush; so with nobody
//   connected, an equal count means no session since. A crash restart discards every counter (the count restarts
//   at 0 and could climb back to the baseline) but moves pg_stat_archiver's reset time, which the mark holds.
//   Anything unknown (no stats, a counter reset, a template rebuilt, a reset or adopt) counts as changed: the cost
//   of a wrong "changed" is a copy, of a wrong "unchanged" the parent's work missing.
// - Changed parent, nobody connected: a TEMPLATE copy of the parent (catalog.createDatabase, a file-level copy; the
//   parent's new connections wait for it, ~0.3 s for 22 MB).
// - Changed parent with connections (an open psql, a dev server): a TEMPLATE copy would wait 5 s and fail (55006),
//   so pg_dump | psql (dump-restore.ts) or the Node copy (src/copy/; which one: copy-method.ts), either of which reads
//   one snapshot and leaves the parent's sessions alone (its DDL on a table waits for the copy's ACCESS SHARE lock,
//   about as long as the copy).
// Either copy keeps owners and GRANTs as the parent has them; the branch role's ownership transfer then makes the
// copy its own, as after a template clone.
import { PgxError } from '../lib/errors.js';
import { identityKey, type Identity } from './identity.js';
import * as records from '../registry/records.js';
import type { BranchRecord } from '../registry/records.js';
import { forkParent, setLineage, type ForkParent } from '../registry/lineage.js';
import * as catalog from '../server/catalog.js';
import { cloneDatabase, planClone } from './clone-method.js';
import type { EngineContext } from './context.js';
import type { CopyMethod } from './copy-method.js';
import { withRoomFor } from './disk-budget.js';

/** What a new branch starts as: the template, its session's branch, or a named branch of this project. */
export type ForkRequest =
  { kind: 'template' } | { kind: 'session'; sessionId?: string } | { kind: 'branch'; ref: string };

/** `frozen`: a clone of the parent's frozen copy (freeze.ts), shared with the other forks of the same parent state. */
export type ForkMethod = 'template' | 'unchanged' | 'template-copy' | CopyMethod | 'frozen';

export interface ForkPlan {
  /** The lineage recorded: the parent's database name, null for the template. */
  parent: string | null;
  /** A database to copy; null: the template (the warm pool's claim, or a clone). */
  copyFrom: string | null;
  /** Why the fork asked for is not made (the branch gets the template): one sentence for the agent. */
  note?: string;
}

/** The request a new branch of this identity gets when the caller names none: `[agent] fork` for a subagent. */
export function defaultRequest(e: EngineContext, id: Identity): ForkRequest {
  return id.agentId !== undefined && e.config.fork === 'session' && e.config.sessionBranch
    ? { kind: 'session', sessionId: id.sessionId }
    : { kind: 'template' };
}

/**
 * Decides where a new branch comes from (one round trip for the session case). Never throws for a parent that is
 * gone, not pgx's, or not ready: the branch gets the template and `note` says why. A named parent (`--from <id>`)
 * that is a fork itself, or the branch itself, is a usage error.
 */
export async function planFork(e: EngineContext, id: Identity, req: ForkRequest): Promise<ForkPlan> {
  if (req.kind === 'template') return { parent: null, copyFrom: null };
  const reg = e.registry;
  let p: ForkParent | undefined;
  let what: string;
  if (req.kind === 'session') {
    if (req.sessionId === undefined) return { parent: null, copyFrom: null, note: 'there is no session to fork from' };
    what = "the session's branch";
    p = await forkParent(reg, {
      identityKey: identityKey({ project: id.project, host: id.host, sessionId: req.sessionId }),
    });
  } else {
    what = `branch "${req.ref}"`;
    const byId = (await records.findRecords(reg, { project: e.config.project, execId: req.ref })).find(
      (r) => r.kind === 'exec',
    );
    p = await forkParent(reg, { name: byId?.name ?? req.ref });
    if (p && p.identity_key === identityKey(id))
      throw new PgxError(
        'USAGE',
        `--from ${req.ref} names the branch being made.`,
        'Fork from another branch, the session, or the template.',
      );
    if (p?.parent)
      throw new PgxError(
        'USAGE',
        `--from ${req.ref}: "${p.name}" is itself a fork of "${p.parent}"; branches stay one level deep.`,
        `Fork from "${p.parent}" instead, or from the template.`,
      );
    if (!p)
      throw new PgxError('NOT_FOUND', `--from ${req.ref}: no pgx branch has that id or name.`, 'See `pgx agent ls`.');
  }
  if (!p || !p.db_exists) return { parent: null, copyFrom: null, note: `${what} does not exist` };
  if (
    !catalog.isOwnBranch(
      { exists: true, comment: p.comment, stamp: catalog.parseStamp(p.comment), allowConn: true, isTemplate: false },
      p,
    )
  ) {
    return { parent: null, copyFrom: null, note: `${what} "${p.name}" is not a database pgx made` };
  }
  if (p.state === 'creating') return { parent: null, copyFrom: null, note: `${what} "${p.name}" is still being made` };
  return { parent: p.name, copyFrom: isUnchanged(p) ? null : p.name };
}

/** No session on it now, none since it went active, and still the current template build's contents. */
export function isUnchanged(p: ForkParent): boolean {
  return (
    p.track_counts &&
    p.backends === 0 &&
    p.mark !== null &&
    p.base_mark !== null &&
    p.mark === p.base_mark &&
    p.base_template !== null &&
    p.base_template === p.template_oid
  );
}

/**
 * Copies `from` into the new database `into` (which must not exist): a TEMPLATE copy when nobody is connected to
 * `from`, else (or when someone connected in between: 55006) pg_dump | psql or the Node copy into an empty database.
 */
export async function copyBranch(
  e: EngineContext,
  from: string,
  into: string,
  what = `"${into}" (a copy of "${from}")`,
): Promise<'template-copy' | CopyMethod> {
  const reg = e.registry;
  if ((await catalog.countBackends(reg, from)) === 0) {
    try {
      await cloneDatabase(e, into, from, await planClone(e, from), { what });
      return 'template-copy';
    } catch (err) {
      if (catalog.sqlstateOf(err) !== catalog.SQLSTATE.OBJECT_IN_USE) throw err;
    }
  }
  // The disk budget (disk-budget.ts) before the empty database: a refusal leaves nothing to drop.
  return withRoomFor(e, { from, way: 'dump-restore', what }, async () => {
    await catalog.createEmptyDatabase(reg, into);
    const { copyDatabase } = await import('./copy-method.js'); // on demand: dist/copy.cjs in the hot-path bundles
    return (await copyDatabase(e, from, into)).method;
  });
}

/** The lineage a record gets (record first, before any database is made for it). */
export function recordLineage(e: EngineContext, rec: BranchRecord, parent: string | null): Promise<BranchRecord> {
  return setLineage(e.registry, rec.name, parent);
}
