// Which side of a Node copy failed to connect (src/copy/node-copy.ts): a login refused by pgx's own server, or no
// answer from it, is said as the copy's target's, never as the origin's; the origin's failure stays the origin's for
// the import to word (engine/dump-errors.ts originConnectFailure). Real servers: the test server, and a port nobody
// listens on.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isTargetSideFailure, nodeCopy } from '../../src/copy/node-copy.js';
import { PgxError } from '../../src/lib/errors.js';
import type { ConnParams } from '../../src/server/conn-params.js';
import { pgInfo, sql } from '../helpers/pgx.js';

const rand = () => Math.random().toString(36).slice(2, 8);

/** A loopback port with nobody listening on it (bound, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const port = (s.address() as { port: number }).port;
  await new Promise((res) => s.close(res));
  return port;
}

const params = (database: string, over: Partial<ConnParams> = {}): ConnParams =>
  ({
    host: pgInfo().host,
    port: pgInfo().port,
    user: pgInfo().user,
    password: pgInfo().password,
    database,
    ...over,
  }) as ConnParams;

describe('a Node copy that can not connect names the side that failed', () => {
  it("the target's refused login and the target's silence are the target's; the origin's silence is not marked", async () => {
    const src = `sides_src_${rand()}`;
    const dst = `sides_dst_${rand()}`;
    await sql(`CREATE DATABASE ${src}`);
    await sql(`CREATE TABLE t (x int); INSERT INTO t VALUES (1)`, [], src);
    await sql(`CREATE DATABASE ${dst}`);
    try {
      const refused = await nodeCopy(params(src), params(dst, { password: 'not-the-password' })).catch((e) => e);
      expect(refused).toBeInstanceOf(PgxError);
      expect(refused.code).toBe('SERVER_AUTH');
      expect(isTargetSideFailure(refused)).toBe(true);
      expect(refused.message).toContain(`the copy's target, database "${dst}" on pgx's own server`);
      expect(refused.message).not.toContain('not-the-password');

      const silent = await nodeCopy(params(src), params(dst, { port: await deadPort() })).catch((e) => e);
      expect(silent.code).toBe('SERVER_UNREACHABLE');
      expect(isTargetSideFailure(silent)).toBe(true);

      const origin = await nodeCopy(params(src, { port: await deadPort() }), params(dst)).catch((e) => e);
      expect(origin.code).toBe('SERVER_UNREACHABLE');
      expect(isTargetSideFailure(origin)).toBe(false);
      expect(origin.message).not.toContain("copy's target");
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${src} WITH (FORCE)`);
      await sql(`DROP DATABASE IF EXISTS ${dst} WITH (FORCE)`);
    }
  });
});
