// The engine's read-only view, for `pgx agent doctor` (decision 301): every fact the doctor's checks read about the
// server, the registry, templates, the pool, roles and guards, and nothing that writes. The doctor imports this
// module and no registry/, server/catalog or other engine module; the hot path never loads it (api.ts does not import
// it). The fix statements (fixStatement) are text the doctor prints, never run.
import { execFileSync } from 'node:child_process';
import type { ConnParams } from '../server/conn-params.js';
import { findClientTool } from '../server/client-tools.js';
import type { RegistryDb } from '../registry/connection.js';
import { poolTableExists, recordedMemberNames } from '../registry/pool.js';
import type { Config } from '../project/config.js';
import type { Db } from '../server/db.js';
import { poolStatus, type PoolStatus } from './pool.js';
import { diskState, type DiskState } from './disk-budget.js';
import { knownCopyOnWrite } from './clone-method.js';

export type { RegistryDb } from '../registry/connection.js';
export type { BranchRecord } from '../registry/records.js';
export type { SourceRecord } from '../registry/sources.js';
export type { PoolStatus } from './pool.js';
export type { DiskState } from './disk-budget.js';
export { bytesText } from './disk-budget.js';

// The registry if it exists (never created), and reads of it that change nothing.
export { connectRegistryIfExists as registryIfItExists } from '../registry/connection.js';
export { findRecords as branchRecords } from '../registry/records.js';
export { orphanDatabases as stampedWithoutRecord, recordedRoles } from '../registry/orphans.js';
export { findSourceReadOnly as importRecordOf, copiesOfReadOnly as copiesLeftBehind } from '../registry/sources.js';
export { msSinceLastBranch } from '../registry/pool.js';
export { listFrozenReadOnly as frozenCopies, type FrozenRow } from '../registry/frozen.js';
export { keptCopiesReadOnly as forkPointsKept } from '../registry/fork-points.js';
export { forkMissesReadOnly as forkMisses, type ForkMissRow } from '../registry/fork-misses.js';
export { missFix, missReason, FALLBACK_SETTING } from './fork-miss.js';

// The server's catalogs, read.
export {
  serverVersion,
  currentRole,
  databaseInfo,
  databaseSettings,
  isOwnBranch,
  stampedDatabases,
  stampedRoles,
  roleDependentDatabases,
} from '../server/catalog.js';
/** Text only: the statements a doctor fix suggests (the doctor prints them; nothing here runs them). */
export { fixStatement } from '../server/catalog.js';

// The engine's own rules and names, read.
export { GUARD_MIN_VERSION } from './guards.js';
export { templateName, parseTemplateStamp } from './template.js';
export { fingerprintAt, schemaFingerprint } from './fingerprint.js';
export { canCreateRoles } from './roles.js';

/** A client program as pgx would find it (server/client-tools.ts: PGX_PG_BINDIR, PATH, the local server's binaries). */
export interface ClientTool {
  tool: 'psql' | 'pg_dump' | 'pg_restore';
  path: string | null;
  /** Its major version (`<tool> --version`), null when not found or it would not say. */
  major: number | null;
}

/** Where pgx finds psql, pg_dump and pg_restore, and their majors. Runs each found one with --version; changes nothing. */
export function clientTools(home: string): ClientTool[] {
  return (['psql', 'pg_dump', 'pg_restore'] as const).map((tool) => {
    let path: string | null = null;
    try {
      path = findClientTool(tool, home, tool);
    } catch {
      return { tool, path: null, major: null };
    }
    try {
      const out = execFileSync(path, ['--version'], {
        encoding: 'utf8',
        timeout: 10_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const m = /\)\s+(\d+)/.exec(out) ?? /\s(\d+)(?:\.\d+)?/.exec(out);
      return { tool, path, major: m ? Number(m[1]) : null };
    } catch {
      return { tool, path, major: null };
    }
  });
}

/** The warm pool as recorded: its status and the member names the registry holds; undefined: never recorded. */
export async function inspectPool(
  config: Config,
  admin: ConnParams,
  registry: RegistryDb | null,
): Promise<{ status: PoolStatus; recorded: Set<string> } | undefined> {
  if (!registry || !(await poolTableExists(registry))) return undefined;
  const status = await poolStatus({ config, admin, registry });
  return { status, recorded: await recordedMemberNames(registry) };
}

/**
 * The disk budget as it stands (engine/disk-budget.ts): the data directory's file system, its reserve, and whether
 * clones there are copy-on-write; or why pgx can't see it.
 */
export async function inspectDisk(config: Config, admin: ConnParams, db: Db): Promise<DiskState & { cow: boolean }> {
  return { ...(await diskState({ config, admin, registry: db })), cow: knownCopyOnWrite({ config, admin }) };
}
