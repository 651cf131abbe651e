// What the schema library never carries, put into the Node copy once its rows are in: partitions' indexes of a
// partitioned index, sequences' values, large objects
// (content, OID, owner, ACL, comment), materialized views' contents (refreshed, or left WITH NO DATA where the
// source's is unpopulated), columns' statistics targets, extended statistics objects (decision 481).
import * as copySql from '../server/copy-catalog.js';
import { quoteIdent, quoteLiteral } from '../server/catalog.js';
import type { Db } from '../server/db.js';

export interface AfterRows {
  sequences: number;
  large_objects: number;
  large_object_bytes: number;
  matviews: number;
  statistics: number;
}

/**
 * `source` is in the copy's snapshot; `target` is the copy. `matviews`: in the order the plan created them.
 * `keepOwners`: 'kept' privileges (owners and ACLs as the source has them).
 */
export async function copyAfterRows(
  source: Db,
  target: Db,
  o: { self: string; keepOwners: boolean; matviews: { schema: string; name: string }[]; present: Set<string> },
): Promise<AfterRows> {
  const owned = (owner: string) => o.keepOwners && owner !== o.self && o.present.has(owner);
  // Partitions' indexes of a partitioned index (those a key's recursion did not make already), made and attached.
  const parts = await copySql.partitionIndexes(source);
  const made = await copySql.existingIndexes(
    target,
    parts.map((p) => p.qname),
  );
  for (const p of parts) {
    if (made.has(p.qname)) continue;
    await target.query(p.def);
    await target.query(copySql.attachIndex(p.parent, p.qname));
  }
  // Extended statistics and statistics targets: planner settings, no data.
  const stats = await copySql.extendedStatistics(source);
  for (const s of stats) {
    await target.query(s.def);
    if (owned(s.owner)) await target.query(`ALTER STATISTICS ${s.qname} OWNER TO ${quoteIdent(s.owner)}`);
    if (s.comment !== null) await target.query(`COMMENT ON STATISTICS ${s.qname} IS ${quoteLiteral(s.comment)}`);
  }
  for (const stmt of await copySql.statisticsTargets(source)) await target.query(stmt);

  // Materialized views: created WITH DATA before any row was copied (so empty), refreshed now, in creation order.
  const populated = new Map(
    (await copySql.materializedViews(source)).map((m) => [`${m.schema}.${m.name}`, m.populated]),
  );
  for (const m of o.matviews)
    await target.query(copySql.refreshMaterializedView(m, populated.get(`${m.schema}.${m.name}`) ?? true));

  const seqs = await copySql.sequenceValues(source, await copySql.sequencesOf(source));
  await copySql.setSequences(target, seqs);

  let loBytes = 0;
  const los = await copySql.largeObjects(source);
  for (const lo of los) {
    await copySql.createLargeObject(target, lo.oid);
    for (let off = 0; off < Number(lo.bytes); off += copySql.LARGE_OBJECT_PIECE) {
      const piece = await copySql.readLargeObject(source, lo.oid, off);
      await copySql.writeLargeObject(target, lo.oid, off, piece);
      loBytes += piece.length;
    }
    const acl = lo.acl?.filter((a) => a.grantee === '' || o.present.has(a.grantee)) ?? null;
    const meta = { ...lo, acl, owner: owned(lo.owner) ? lo.owner : o.self };
    for (const stmt of copySql.largeObjectMeta(meta, o.self, o.keepOwners)) await target.query(stmt);
  }
  return {
    sequences: seqs.length,
    large_objects: los.length,
    large_object_bytes: loBytes,
    matviews: o.matviews.length,
    statistics: stats.length,
  };
}
