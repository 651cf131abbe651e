import { mkdirSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname } from 'node:path';

/** Write-then-rename, so a reader never sees half a file; mode applied before the rename. */
export function writeFileAtomic(path: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A cross-process lock by mkdir (atomic on every local file system). A lock older than staleMs is taken over:
 * its holder died (pg_ctl start is bounded at 60 s).
 */
export async function withFileLock<T>(lockDir: string, fn: () => Promise<T>, staleMs = 90_000, waitMs = 120_000): Promise<T> {
  mkdirSync(dirname(lockDir), { recursive: true, mode: 0o700 });
  const start = Date.now();
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lockDir).mtimeMs > staleMs) rmSync(lockDir, { recursive: true, force: true });
      } catch {
        // it went away in between: try again
      }
      if (Date.now() - start > waitMs) throw new Error(`timed out waiting for the lock ${lockDir}`);
      await sleep(50 + Math.random() * 100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
