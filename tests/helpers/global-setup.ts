import type { TestProject } from 'vitest/node';
import { startTestCluster, type TestCluster } from './cluster.js';

let cluster: TestCluster | undefined;

export async function setup(project: TestProject) {
  cluster = await startTestCluster();
  project.provide('pg', { url: cluster.url, host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, kind: cluster.kind });
  process.stderr.write(`pgx tests: PostgreSQL (${cluster.kind}) on ${cluster.host}:${cluster.port}\n`);
}

export async function teardown() {
  await cluster?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pg: { url: string; host: string; port: number; user: string; password: string; kind: string };
  }
}
