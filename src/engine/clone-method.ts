// How a branch is cloned from its template: STRATEGY WAL_LOG or FILE_COPY, and on PostgreSQL 18+ whether FILE_COPY
// uses `file_copy_method = clone`, which is copy-on-write where the data directory's file system has reflinks (XFS
// with reflink, btrfs, APFS): a 1 GB template then clones in ~0.1 s with ~0 extra disk (measured: shared/measured.md).
//
// Whether reflinks work cannot be read from the server: `clone` is accepted everywhere and silently degrades to a
// copy (copy_file_range on ext4). So the first clone on a PostgreSQL 18 server is a probe: FILE_COPY + clone,
// measured by its duration and, when the data directory is on this machine and readable, by the disk it used. The
// verdict is remembered per server in $PGX_HOME/servers/. Without reflinks (or before a verdict), the size rule:
// WAL_LOG below 64 MB (no checkpoint), FILE_COPY above (measured crossover 25–100 MB).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as catalog from '../server/catalog.js';
import type { CloneStrategy } from '../server/catalog.js';
import type { Db } from '../server/db.js';
import type { EngineContext } from './context.js';
import { withRoomFor, type CopyWay } from './disk-budget.js';

export interface ClonePlan {
  strategy?: CloneStrategy;
  fileCopyMethod?: 'clone';
  /** This clone is the server's reflink probe: measure it and remember the verdict. */
  probe?: boolean;
}

export interface CloneVerdict {
  server: string;
  reflink: boolean;
  /** How the verdict was reached: the disk the probe clone used, or (data directory not visible) its speed. */
  by: 'disk' | 'speed';
  template_bytes: number;
  probe_ms: number;
  disk_delta_bytes: number | null;
  time: string;
}

const MB = 1024 * 1024;
/** With reflinks, FILE_COPY + clone from this size (below it WAL_LOG, which needs no checkpoint, is faster). */
export const COW_FROM_BYTES = 32 * MB;
/** Without, FILE_COPY from this size. */
export const FILE_COPY_FROM_BYTES = 64 * MB;

function verdictFile(home: string, server: string): string {
  return join(home, 'servers', `${createHash('sha256').update(server).digest('hex').slice(0, 24)}.json`);
}

export function rememberedVerdict(home: string, server: string): CloneVerdict | undefined {
  try {
    const v = JSON.parse(readFileSync(verdictFile(home, server), 'utf8')) as CloneVerdict;
    return v.server === server ? v : undefined;
  } catch {
    return undefined;
  }
}

const serverKey = (e: Pick<EngineContext, 'admin'>) => `${e.admin.host}:${e.admin.port}`;

/** Whether this server's clones are known to be copy-on-write (its probe found reflinks): the doctor's disk line. */
export function knownCopyOnWrite(e: Pick<EngineContext, 'admin' | 'config'>): boolean {
  return rememberedVerdict(e.config.home, serverKey(e))?.reflink === true;
}

export async function planClone(
  e: EngineContext,
  template: string,
  fileCopyFromBytes = FILE_COPY_FROM_BYTES,
): Promise<ClonePlan & { bytes: number }> {
  const db = e.registry;
  if (db.serverVersionNum < 150000) return { bytes: 0 };
  const bytes = await catalog.databaseSize(db, template);
  if (db.serverVersionNum >= 180000) {
    const v = rememberedVerdict(e.config.home, serverKey(e));
    if (!v) return { strategy: 'FILE_COPY', fileCopyMethod: 'clone', probe: true, bytes };
    if (v.reflink && bytes >= COW_FROM_BYTES) return { strategy: 'FILE_COPY', fileCopyMethod: 'clone', bytes };
  }
  return { strategy: bytes >= fileCopyFromBytes ? 'FILE_COPY' : 'WAL_LOG', bytes };
}

/** Runs the clone; a probe is measured and its verdict written (best effort: a verdict that cannot be had is retried). */
/**
 * Clones at once per process. The server makes concurrent clones of one template about one after another
 * (20 at once: each took the whole burst's time, p50 7.3 s against 0.28 s alone), so in the broker, which runs a
 * burst's SubagentStarts in one process, they queue here instead: the first branches are ready early and the p50
 * halves, for the same total. A hook process makes one clone, so this never delays it.
 */
export const CLONE_CONCURRENCY = 2;
let cloning = 0;
const waiting: (() => void)[] = [];

async function oneOfTheClones<T>(fn: () => Promise<T>): Promise<T> {
  if (cloning >= CLONE_CONCURRENCY) await new Promise<void>((res) => waiting.push(res));
  else cloning++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next)
      next(); // the slot passes on
    else cloning--;
  }
}

/**
 * What a clone by this plan writes (disk-budget.ts): copy-on-write only once the probe found reflinks (the probe
 * itself counts as a full copy), and PostgreSQL 15+'s default strategy is WAL_LOG.
 */
export function copyWay(plan: ClonePlan, serverVersionNum: number): CopyWay {
  if (plan.fileCopyMethod === 'clone' && !plan.probe) return 'cow';
  const strategy = plan.strategy ?? (serverVersionNum >= 150000 ? 'WAL_LOG' : 'FILE_COPY');
  return strategy === 'FILE_COPY' ? 'file-copy' : 'wal-log';
}

/**
 * Clones `template` as `name` once the disk budget has room for it (checked in the clone's turn, so the clones ahead
 * of it are on the disk already); a copy that would cross [disk] reserve is refused before anything is created.
 */
export function cloneDatabase(
  e: EngineContext,
  name: string,
  template: string,
  plan: ClonePlan & { bytes: number },
  o: CloneOptions = {},
): Promise<void> {
  const copy = {
    from: template,
    way: copyWay(plan, e.registry.serverVersionNum),
    what: o.what ?? `"${name}" (a copy of "${template}")`,
  };
  return oneOfTheClones(() =>
    withRoomFor(e, copy, () => cloneNow(e, name, template, plan, o.allowConnections), { speculative: o.speculative }),
  );
}

export interface CloneOptions {
  /** What is being made, for a disk-budget refusal. */
  what?: string;
  /** The warm pool's clone: it leaves twice the reserve free (disk-budget.ts). */
  speculative?: boolean;
  /** false: the database refuses connections from its creation (a warm-pool member). */
  allowConnections?: false;
}

async function cloneNow(
  e: EngineContext,
  name: string,
  template: string,
  plan: ClonePlan & { bytes: number },
  allowConnections?: false,
): Promise<void> {
  const db: Db = e.registry;
  if (!plan.probe)
    return catalog.createDatabase(db, name, {
      template,
      strategy: plan.strategy,
      fileCopyMethod: plan.fileCopyMethod,
      allowConnections,
    });
  await probeClone(e, name, template, plan);
  // the probe measures a plain clone; a member refuses connections right after (nobody knows its name yet)
  if (allowConnections === false) await catalog.allowConnections(db, name, false);
}

async function probeClone(
  e: EngineContext,
  name: string,
  template: string,
  plan: ClonePlan & { bytes: number },
): Promise<void> {
  const db: Db = e.registry;
  const dir = await catalog.dataDirectory(db);
  const used = () => {
    try {
      const s = statfsSync(dir!);
      return (s.blocks - s.bfree) * s.bsize;
    } catch {
      return null;
    }
  };
  // FILE_COPY checkpoints first, flushing whatever is dirty (a template just built): flush it before measuring, or
  // the delta would count it. Without the right to, the delta is not trusted (speed decides, or nothing).
  const before = dir && (await catalog.checkpoint(db)) ? used() : null;
  const t0 = performance.now();
  await catalog.createDatabase(db, name, { template, strategy: plan.strategy, fileCopyMethod: plan.fileCopyMethod });
  const ms = performance.now() - t0;
  const after = before !== null ? used() : null;
  const delta = before !== null && after !== null ? after - before : null;
  // By disk: a reflink clone uses a small fraction of the template (the checkpoint and catalog writes still land).
  // By speed, only when the disk is invisible: copies run at most ~1 GB/s here, a clone of 256 MB+ in well under that.
  let verdict: boolean | undefined;
  if (delta !== null && plan.bytes >= 8 * MB) verdict = delta < plan.bytes / 4;
  else if (delta === null && plan.bytes >= 256 * MB) verdict = plan.bytes / MB / (ms / 1000) > 4096;
  if (verdict === undefined) return;
  const v: CloneVerdict = {
    server: serverKey(e),
    reflink: verdict,
    by: delta !== null ? 'disk' : 'speed',
    template_bytes: plan.bytes,
    probe_ms: Math.round(ms),
    disk_delta_bytes: delta,
    time: new Date().toISOString(),
  };
  try {
    const file = verdictFile(e.config.home, v.server);
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify(v, null, 1) + '\n', { mode: 0o600 });
  } catch {
    // not remembered: the next clone probes again
  }
}
