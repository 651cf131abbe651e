// Disk is a budget, not a surprise (issue 29, decisions 410–412): before any copy pgx makes (a branch's clone, a fork,
// a reset, a warm-pool member, a template build, a diff baseline) it knows how much the file system the copy lands on
// can take, and never takes it below [disk] reserve. A copy that would is refused before anything is created
// (DiskBudgetError: the figures and the fix); the warm pool, which copies on speculation, stops at twice the reserve.
//
// Where the files go: the server's data directory, or the tablespace of the database copied (a template copy lands in
// its template's tablespace; WAL, for the copies that write it, in the data directory's pg_wal). Trusted only where
// this machine provably sees it: pgx's own local server (its state file); a server whose postmaster.pid in that
// directory names its port and start time; or, when postmaster.pid is not readable (another OS user's cluster), a
// server reached over a Unix socket or loopback whose data directory exists here. Anything else (a remote server, a
// role that may not read data_directory) is not budgeted: nothing is refused, and the doctor says so.
//
// What statfs can't see: a WAL_LOG copy (and any write) goes through shared buffers, and the pages of a copy that has
// finished may reach its files only at the next checkpoint (measured on a tmpfs: 8 clones of a 23 MB template took
// 12.6 MB each until then). At most shared_buffers is owed that way, so every judgement counts it as used.
//
// Cost: the server's place is looked up once per process (the broker: once), in one statement; before each copy, one
// statement (the size and tablespace of what is copied) and a statfs per file system. Never on an attach or a claim.
import { readFileSync, statSync, statfsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { PgxError } from '../lib/errors.js';
import type { DiskReserve } from '../project/config-values.js';
import * as catalog from '../server/catalog.js';
import type { Db } from '../server/db.js';
import { readState } from '../server/local.js';
import type { EngineContext } from './context.js';

/**
 * How a copy is made, which decides what it writes: `cow` a copy-on-write clone (FILE_COPY with file_copy_method =
 * clone on a server whose probe found reflinks: clone-method.ts), `file-copy` the files once, `wal-log` the pages and
 * as much WAL (which stays in pg_wal until a checkpoint recycles it), `dump-restore` a restore into the data directory
 * (and its WAL).
 */
export type CopyWay = 'cow' | 'file-copy' | 'wal-log' | 'dump-restore';

export interface Copy {
  /** The database copied: its size is the estimate, its tablespace where a template copy lands. */
  from: string;
  way: CopyWay;
  /** What is being made, for the refusal: "branch \"agent_x\" (a clone of the template)". */
  what: string;
}

/**
 * A copy-on-write clone writes the new database's catalog rows and a checkpoint, not its files: counted as at most
 * this much (measured: under 10 MB for a 64 MB template, tests/engine/cow-clone.test.ts).
 */
export const COW_BYTES = 16 * 1024 * 1024;

/**
 * The server's data directory as this machine sees it, how that is known, and what the server may still owe the disk
 * (its shared_buffers); or why it is not visible.
 */
export type Place =
  { dataDir: string; proof: 'local server' | 'postmaster.pid' | 'path'; owed: number } | { dataDir: null; why: string };

/** The config and a connection to the server: an engine's, or the doctor's. */
export type ServerView = Pick<EngineContext, 'config' | 'admin'> & { registry: Db };

const places = new Map<string, Promise<Place>>();

/** Once per process and server: the broker asks the server once, a hook process at its first copy. */
export function placeOf(e: ServerView): Promise<Place> {
  const key = `${e.config.serverUrl ? 'url' : 'local'}:${e.admin.user}@${e.admin.host}:${e.admin.port}`; // what a role may read differs
  let p = places.get(key);
  if (!p) {
    p = findPlace(e).catch((err: unknown): Place => {
      places.delete(key); // a failure (a statement timeout in a hook) is not remembered: the next copy asks again
      return { dataDir: null, why: `the server's data directory could not be read (${(err as Error).message})` };
    });
    places.set(key, p);
  }
  return p;
}

async function findPlace(e: ServerView): Promise<Place> {
  const s = await catalog.serverPlace(e.registry);
  const owed = s.sharedBuffers;
  if (!e.config.serverUrl) {
    const state = readState(e.config.home);
    if (state?.data_dir && state.port === e.admin.port) return { dataDir: state.data_dir, proof: 'local server', owed };
  }
  if (!s.dataDirectory)
    return {
      dataDir: null,
      why: `the role "${e.admin.user}" may not read the server's data_directory (it needs superuser or pg_read_all_settings)`,
    };
  const dir = s.dataDirectory;
  let pid: string[];
  try {
    pid = readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Another OS user's cluster: its directory is private, but reached on this machine and present here, it is this one.
    if ((code === 'EACCES' || code === 'EPERM') && onThisMachine(e.admin.host) && exists(dir))
      return { dataDir: dir, proof: 'path', owed };
    return { dataDir: null, why: `its data directory ${dir} is not on this machine (a remote server)` };
  }
  // postmaster.pid: pid, data directory, start time (epoch seconds), port, …
  const same = pid[1] === dir && Number(pid[3]) === s.port && Math.abs(Number(pid[2]) - s.startedAt) <= 2;
  return same
    ? { dataDir: dir, proof: 'postmaster.pid', owed }
    : { dataDir: null, why: `${dir} on this machine belongs to another server than the one connected to` };
}

function onThisMachine(host: string): boolean {
  return host.startsWith('/') || host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** One file system as statfs sees it: the bytes an unprivileged writer (the server) may still use, and its size. */
export interface FileSystem {
  path: string;
  /** st_dev: paths on the same file system share one budget. */
  dev: number;
  free: number;
  size: number;
}

export function fileSystemAt(path: string): FileSystem | undefined {
  try {
    const s = statfsSync(path);
    return { path, dev: statSync(path).dev, free: s.bavail * s.bsize, size: s.blocks * s.bsize };
  } catch {
    return undefined;
  }
}

/** The reserve on a file system of `size` bytes: the size given, the share given, or the smaller of both. */
export function reserveBytes(reserve: DiskReserve, size: number): number {
  return Math.min(
    reserve.bytes ?? Infinity,
    reserve.percent !== undefined ? Math.ceil((size * reserve.percent) / 100) : Infinity,
  );
}

/** What a copy of `bytes` writes: on the file system it lands on, and (WAL) on the data directory's pg_wal. */
export function bytesWritten(way: CopyWay, bytes: number): { files: number; wal: number } {
  if (way === 'cow') return { files: Math.min(bytes, COW_BYTES), wal: 0 };
  if (way === 'file-copy') return { files: bytes, wal: 0 };
  return { files: bytes, wal: bytes };
}

/** Bytes promised to copies running in this process, per file system: two clones at once must not both count the same room. */
const promised = new Map<number, number>();

export interface Judged {
  fs: FileSystem;
  needed: number;
  /** Promised to other copies of this process that are still running. */
  inFlight: number;
  /** What the server may still write from its buffers (shared_buffers): not free, though statfs says so. */
  owed: number;
  reserve: number;
  /** What must stay free: the reserve, twice it for the warm pool. */
  floor: number;
}

/** The first file system that the demands would take below its floor, if any (pure: the unit tests' subject). */
export function judge(
  demands: { fs: FileSystem; bytes: number }[],
  reserve: DiskReserve,
  inFlight: (dev: number) => number,
  owed: number,
  speculative = false,
): Judged | undefined {
  const byDev = new Map<number, { fs: FileSystem; bytes: number }>();
  for (const d of demands) {
    const had = byDev.get(d.fs.dev);
    byDev.set(d.fs.dev, { fs: had?.fs ?? d.fs, bytes: (had?.bytes ?? 0) + d.bytes });
  }
  for (const { fs, bytes } of byDev.values()) {
    const r = reserveBytes(reserve, fs.size);
    const floor = speculative ? 2 * r : r;
    const held = inFlight(fs.dev);
    if (fs.free - owed - held - bytes < floor) return { fs, needed: bytes, inFlight: held, owed, reserve: r, floor };
  }
  return undefined;
}

export interface DiskFigures {
  what: string;
  /** The file system's path as pgx looked at it (the data directory, or a tablespace's location). */
  path: string;
  free: number;
  needed: number;
  in_flight: number;
  /** What the server may still write from its buffers (shared_buffers), counted as used. */
  owed: number;
  reserve: number;
  /** What had to stay free: the reserve, or twice it for a warm-pool member. */
  floor: number;
  size: number;
}

/** A copy refused: it would take the file system below the reserve. Carries the figures. */
export class DiskBudgetError extends PgxError {
  constructor(
    readonly figures: DiskFigures,
    reserveSetting: string,
    file: string,
  ) {
    const f = figures;
    const pool = f.floor > f.reserve ? `, and the warm pool leaves twice that (${bytesText(f.floor)})` : '';
    const less = [
      f.owed ? `up to ${bytesText(f.owed)} the server may still write from its buffers` : '',
      f.in_flight ? `${bytesText(f.in_flight)} promised to copies already running` : '',
    ].filter(Boolean);
    const busy = less.length ? ` (less ${less.join(' and ')})` : '';
    super(
      'DISK_RESERVE',
      `Not enough disk for ${f.what}: it needs ~${bytesText(f.needed)} on the file system of ${f.path}, which ` +
        `has ${bytesText(f.free)} free of ${bytesText(f.size)}${busy}; pgx keeps ${bytesText(f.reserve)} free ` +
        `there (${reserveSetting})${pool}.`,
      `Free space on that file system (\`pgx agent gc\` drops expired branches and unused templates; \`pgx ` +
        `agent pool drain\` drops the warm pool's members; \`pgx agent ls --all\` shows what pgx holds), or lower ` +
        `[disk] reserve in ${file}; then retry.`,
      { data: { disk: figures } },
    );
  }
}

export function isDiskBudgetError(e: unknown): e is DiskBudgetError {
  return e instanceof DiskBudgetError;
}

export function bytesText(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GB`;
  if (abs >= 1024 ** 2) return `${Math.round(n / 1024 ** 2)} MB`;
  return `${Math.round(n / 1024)} kB`;
}

/** The setting as the refusal and the doctor quote it: `[disk] reserve = "2GB"`, or the default's two parts. */
export function reserveText(r: DiskReserve): string {
  const size =
    r.bytes !== undefined
      ? bytesText(r.bytes)
          .replace(/ /g, '')
          .replace(/\.0(?=[GMk]B)/, '')
      : undefined;
  if (size !== undefined && r.percent !== undefined)
    return `[disk] reserve unset: ${size}, or ${r.percent}% of a smaller file system`;
  return `[disk] reserve = "${size ?? `${r.percent}%`}"`;
}

/**
 * Runs `make` (the copy) once the copy fits above the reserve, the room promised to it meanwhile; refuses it with a
 * DiskBudgetError otherwise, before `make` runs (so nothing is created). `speculative`: the warm pool, which keeps
 * twice the reserve free. Where the file system is not visible, `make` just runs.
 */
export async function withRoomFor<T>(
  e: EngineContext,
  copy: Copy,
  make: () => Promise<T>,
  opts: { speculative?: boolean } = {},
): Promise<T> {
  const held = await roomFor(e, copy, opts.speculative ?? false);
  try {
    return await make();
  } finally {
    for (const [dev, bytes] of held) promised.set(dev, (promised.get(dev) ?? 0) - bytes);
  }
}

async function roomFor(e: EngineContext, copy: Copy, speculative: boolean): Promise<Map<number, number>> {
  const held = new Map<number, number>();
  const place = await placeOf(e);
  if (!place.dataDir) return held;
  const src = await catalog.copySource(e.registry, copy.from);
  if (!src) return held; // the copy itself reports the missing database
  const lands =
    copy.way === 'dump-restore' || src.location === ''
      ? place.dataDir
      : isAbsolute(src.location)
        ? src.location
        : join(place.dataDir, src.location);
  const target = fileSystemAt(lands);
  if (!target) return held; // a tablespace this machine does not see
  const { files, wal } = bytesWritten(copy.way, src.bytes);
  const demands = [{ fs: target, bytes: files }];
  if (wal) {
    const walFs = fileSystemAt(join(place.dataDir, 'pg_wal')) ?? fileSystemAt(place.dataDir);
    if (walFs) demands.push({ fs: walFs, bytes: wal });
  }
  const over = judge(demands, e.config.disk.reserve, (dev) => promised.get(dev) ?? 0, place.owed, speculative);
  if (over) {
    const figures: DiskFigures = {
      what: copy.what,
      path: over.fs.path,
      free: over.fs.free,
      needed: over.needed,
      in_flight: over.inFlight,
      owed: over.owed,
      reserve: over.reserve,
      floor: over.floor,
      size: over.fs.size,
    };
    throw new DiskBudgetError(figures, reserveText(e.config.disk.reserve), e.config.file ?? '.pgx.toml');
  }
  for (const d of demands) {
    held.set(d.fs.dev, (held.get(d.fs.dev) ?? 0) + d.bytes);
    promised.set(d.fs.dev, (promised.get(d.fs.dev) ?? 0) + d.bytes);
  }
  return held;
}

/** The disk as the doctor shows it: the data directory's file system and its reserve, or why it is not visible. */
export type DiskState =
  | { visible: false; why: string }
  | {
      visible: true;
      proof: Extract<Place, { dataDir: string }>['proof'];
      fs: FileSystem;
      owed: number;
      reserve: number;
      reserve_setting: string;
    };

export async function diskState(e: ServerView): Promise<DiskState> {
  const place = await placeOf(e);
  if (place.dataDir === null) return { visible: false, why: place.why };
  const fs = fileSystemAt(place.dataDir);
  if (!fs) return { visible: false, why: `statfs of its data directory ${place.dataDir} failed` };
  return {
    visible: true,
    proof: place.proof,
    fs,
    owed: place.owed,
    reserve: reserveBytes(e.config.disk.reserve, fs.size),
    reserve_setting: reserveText(e.config.disk.reserve),
  };
}
