// File-system primitives every layer uses: the one atomic write, a command's lookup on PATH, a pid's liveness, and
// the cross-process lock by mkdir (the local server's start-up). Node built-ins only.
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Write-then-rename (the text fsync'ed first), so a reader never sees half a file, and a failed write leaves the
 * old file and no temporary one. pgx's own files (`mode` given, default 0o644): the mode is applied before the
 * rename and a missing parent is made 0o700. A user's file (`throughLinks`: a settings file a dotfile manager may
 * symlink): written through to the link's target, so the link survives, keeping the target's mode; a missing parent
 * is made with the umask's mode.
 */
export function writeFileAtomic(path: string, text: string, opts: number | { throughLinks: true } = 0o644): void {
  let target = path;
  let mode: number | undefined = typeof opts === 'number' ? opts : undefined;
  if (typeof opts !== 'number') {
    try {
      target = realpathSync(path);
      mode = statSync(target).mode & 0o7777;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      // A dangling symlink: write to where it points, so the link becomes valid.
      try {
        target = resolve(dirname(path), readlinkSync(path));
      } catch {
        target = path;
      }
    }
    mkdirSync(dirname(target), { recursive: true });
  } else {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  }
  const tmp = `${target}.tmp-${process.pid}-${Date.now()}`;
  let renamed = false;
  try {
    const fd = openSync(tmp, 'w', mode ?? 0o666);
    try {
      writeFileSync(fd, text, 'utf8');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (mode !== undefined) chmodSync(tmp, mode); // openSync's mode is filtered by the umask
    renameSync(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        // nothing to clean up
      }
    }
  }
}

/**
 * The first executable file `name` on PATH, resolved through links to the file it is, as a shell's lookup finds it;
 * `absoluteOnly`: skip relative PATH entries (they depend on the caller's working directory).
 */
export function executableOnPath(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: { absoluteOnly?: boolean } = {},
): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || (opts.absoluteOnly && !isAbsolute(dir))) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return realpathSync(file);
    } catch {
      // not there, or not executable: a shell goes on to the next entry too
    }
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** False only when the process is known to be gone (ESRCH); EPERM means it exists under another user. */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

interface LockOwner {
  pid: number;
  nonce: string;
}

const OWNER_FILE = 'owner';

function readOwner(lockDir: string): LockOwner | undefined {
  try {
    const o = JSON.parse(readFileSync(join(lockDir, OWNER_FILE), 'utf8')) as LockOwner;
    return typeof o.pid === 'number' && typeof o.nonce === 'string' ? o : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Abandoned: its owner process is gone; or, with no readable owner file (the owner died between mkdir and writing
 * it, or an older pgx made the lock), the directory is older than ownerlessStaleMs.
 */
function abandoned(lockDir: string, ownerlessStaleMs: number): boolean {
  const owner = readOwner(lockDir);
  if (owner) return !pidAlive(owner.pid);
  try {
    return Date.now() - statSync(lockDir).mtimeMs > ownerlessStaleMs;
  } catch {
    return false; // gone already: the next mkdir will tell
  }
}

/**
 * Remove an abandoned lock. Breakers serialise on a second mkdir, and re-check under it, so two waiters that both saw
 * the same dead owner cannot remove the lock that one of them (or a third process) has taken since.
 */
function breakIfAbandoned(lockDir: string, ownerlessStaleMs: number): void {
  const guard = `${lockDir}.break`;
  try {
    mkdirSync(guard);
  } catch {
    // Another waiter is breaking it (a few syscalls); a guard this old was left by a breaker that died.
    try {
      if (Date.now() - statSync(guard).mtimeMs > 10_000) rmSync(guard, { recursive: true, force: true });
    } catch {
      // gone in between
    }
    return;
  }
  try {
    if (abandoned(lockDir, ownerlessStaleMs)) rmSync(lockDir, { recursive: true, force: true });
  } finally {
    rmSync(guard, { recursive: true, force: true });
  }
}

/**
 * A cross-process lock by mkdir (atomic on every local file system), with an owner file (pid + random nonce) inside.
 * The lock is taken over only when its owner is dead, never for being old: a live holder may legitimately keep it
 * for minutes (initdb is bounded at 120 s, pg_ctl start at 60 s). A directory with no readable owner file is taken
 * over once older than staleMs. On release the directory is removed only if it still holds our nonce, so a holder
 * never removes a lock that has since passed to another process.
 */
export async function withFileLock<T>(
  lockDir: string,
  fn: () => Promise<T>,
  staleMs = 30_000,
  waitMs = 120_000,
): Promise<T> {
  mkdirSync(dirname(lockDir), { recursive: true, mode: 0o700 });
  const me: LockOwner = { pid: process.pid, nonce: randomBytes(12).toString('hex') };
  const start = Date.now();
  for (;;) {
    try {
      mkdirSync(lockDir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      breakIfAbandoned(lockDir, staleMs);
      if (Date.now() - start > waitMs) {
        const holder = readOwner(lockDir);
        throw new Error(
          `timed out waiting for the lock ${lockDir}${holder ? ` (held by pid ${holder.pid}; remove the directory if that is not a pgx process)` : ''}`,
        );
      }
      await sleep(50 + Math.random() * 100);
      continue;
    }
    try {
      writeFileAtomic(join(lockDir, OWNER_FILE), JSON.stringify(me), 0o600);
    } catch (e) {
      rmSync(lockDir, { recursive: true, force: true });
      throw e;
    }
    break;
  }
  try {
    return await fn();
  } finally {
    if (readOwner(lockDir)?.nonce === me.nonce) rmSync(lockDir, { recursive: true, force: true });
  }
}
