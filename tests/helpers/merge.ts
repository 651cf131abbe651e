// Helpers for the merge tests (tests/engine/merge*.test.ts, diff-sql.test.ts): a branch's own connection, a session
// whose branch holds a connection (so its subagents fork through a frozen copy), and the roundtrip check: a migration
// applied to a copy of the fork point, compared with the branch by `agent diff`'s own compare (engine/diff-compare.ts).
import pg from 'pg';
import { compare } from '../../src/engine/diff-compare.js';
import { DIFF_BOUNDS } from '../../src/engine/diff.js';
import { connect } from '../../src/server/db.js';
import type { ConnParams } from '../../src/server/conn-params.js';
import { pgInfo, sql } from './pgx.js';
import { parseUrl } from '../../src/server/conn-params.js';

export function clientOf(c: ConnParams): pg.Client {
  const cl = new pg.Client({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database });
  cl.on('error', () => {});
  return cl;
}

/** Runs statements on the branch with its own credentials, on a connection of its own, closed after. */
export async function asBranch<R = Record<string, unknown>>(c: ConnParams, text: string): Promise<R[]> {
  const cl = clientOf(c);
  await cl.connect();
  try {
    const r = await cl.query(text);
    return ((Array.isArray(r) ? r[r.length - 1] : r) as pg.QueryResult).rows as R[];
  } finally {
    await cl.end();
  }
}

/** A connection held open on the branch (the parent's psql), until `close`. */
export async function holdConnection(c: ConnParams): Promise<{ close(): Promise<void> }> {
  const cl = clientOf(c);
  await cl.connect();
  await cl.query('SELECT 1');
  return { close: () => cl.end() };
}

export function admin(database: string): ConnParams {
  return { ...parseUrl(pgInfo().url, 'test', {}), database };
}

/**
 * Applies `migration` to a new copy of `forkPoint` (made as the admin, dropped after) and compares the result with
 * `branch` the way `pgx agent diff` does; returns that diff.
 */
export async function roundtrip(forkPoint: string, branch: string, migration: string) {
  const copy = `pgx_rt_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${copy} TEMPLATE ${forkPoint}`);
  try {
    await sql(migration, [], copy);
    const [a, b] = await Promise.all([connect(admin(copy)), connect(admin(branch))]);
    try {
      return await compare(a, b, DIFF_BOUNDS, performance.now());
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await sql(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
  }
}
