// `pgx registry drop`: the last database pgx leaves on a server, pgx_registry (the branch records, and the branch
// roles' passwords), removed once no project uses it any more (issue 30: nothing removed it). "Uses" means a database
// of pgx's on that server: a branch, a template (or its build), a warm-pool member, an imported source. While one is
// left, the registry is kept and the result names the projects, so the user hears why (decision 422). pgx drops it
// only when its stamp says pgx created it. It never creates the registry to look (Engine.open would).
import { PgxError } from '../lib/errors.js';
import { connect, type Db } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import {
  databaseInfo,
  dropDatabase,
  stampedDatabasesOf,
  terminateBackends,
  type StampedDatabase,
} from '../server/catalog.js';
import { connectRegistryIfExists, REGISTRY_DB } from '../registry/connection.js';
import { findByName } from '../registry/records.js';
import { localStatus } from '../server/local.js';
import type { Config } from '../project/config.js';
import { resolveServer } from './context.js';

export interface RegistryDropResult {
  database: typeof REGISTRY_DB;
  existed: boolean;
  dropped: boolean;
  dry_run: boolean;
  /** The projects whose databases are still on the server, and those databases: the registry stays for them. */
  in_use: { project: string; databases: string[] }[];
}

const PGX_KINDS = ['branch', 'template', 'building', 'pool', 'importing', 'source'] as const;

/** pgx's databases on the server (all but the registry), by project: a branch's project is in its registry record. */
async function inUse(db: Db, admin: ConnParams): Promise<RegistryDropResult['in_use']> {
  const left = await stampedDatabasesOf(db, [...PGX_KINDS]);
  if (!left.length) return [];
  const reg = await connectRegistryIfExists(admin).catch(() => null);
  const projectOf = async (d: StampedDatabase): Promise<string> => {
    if ('project' in d.stamp) return d.stamp.project;
    const rec = reg ? await findByName(reg, d.name).catch(() => undefined) : undefined;
    return rec?.project ?? '(a branch with no record)';
  };
  const by = new Map<string, string[]>();
  try {
    for (const d of left) {
      const p = await projectOf(d);
      by.set(p, [...(by.get(p) ?? []), d.name]);
    }
  } finally {
    await reg?.close();
  }
  return [...by]
    .map(([project, databases]) => ({ project, databases }))
    .sort((a, b) => a.project.localeCompare(b.project));
}

export async function dropRegistryIfUnused(
  admin: ConnParams,
  o: { dryRun?: boolean } = {},
): Promise<RegistryDropResult> {
  const result = (
    existed: boolean,
    dropped: boolean,
    in_use: RegistryDropResult['in_use'] = [],
  ): RegistryDropResult => ({ database: REGISTRY_DB, existed, dropped, dry_run: o.dryRun === true, in_use });
  const db = await connect(admin);
  try {
    const info = await databaseInfo(db, REGISTRY_DB);
    if (!info.exists) return result(false, false);
    if (info.stamp?.kind !== 'registry') {
      throw new PgxError(
        'NOT_PGX_DATABASE',
        `${REGISTRY_DB} on this server carries no pgx stamp: pgx did not create it, and does not drop it.`,
        `Look at it (\`psql -c "\\l+ ${REGISTRY_DB}"\`) and drop it yourself if it is yours to drop.`,
      );
    }
    const used = await inUse(db, admin);
    if (used.length || o.dryRun) return result(true, false, used);
    // Its connections (a broker's kept ones, a hook's) end first; then, looked at again, in case a branch was made
    // meanwhile: a record without its registry would be a database pgx can no longer account for.
    await terminateBackends(db, REGISTRY_DB);
    const again = await inUse(db, admin);
    if (again.length) return result(true, false, again);
    await dropDatabase(db, REGISTRY_DB);
    return result(true, true);
  } finally {
    await db.close();
  }
}

/** On the project's server: [server] url / PGX_DATABASE_URL, or the local server when it exists (never made to look). */
export async function dropRegistry(config: Config, o: { dryRun?: boolean } = {}): Promise<RegistryDropResult> {
  if (!config.serverUrl && !localStatus(config.home).initialized)
    return { database: REGISTRY_DB, existed: false, dropped: false, dry_run: o.dryRun === true, in_use: [] };
  return dropRegistryIfUnused(await resolveServer(config, { quiet: true }), o);
}
