// The doctor says why it skipped what it skipped, and does not warn about the state every fresh install is in:
// with an invalid .pgx.toml the server was never tried (so "server not reachable" would be false), and an empty warm
// pool that nothing has filled yet is how a pool starts (the first session fills it), not a fault.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx } from '../helpers/pgx.js';

type Check = { name: string; status: string; detail: string; fix?: string };
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function doctor(p: ReturnType<typeof makeProject>): Record<string, Check> {
  const r = runPgx(['agent', 'doctor', '--json'], p);
  return Object.fromEntries((jsonOf(r).checks as Check[]).map((c) => [c.name, c]));
}

describe('doctor', () => {
  it('an invalid .pgx.toml: the server-dependent checks say the config is why, not the server', () => {
    const p = makeProject();
    dirs.push(p.dir);
    writeFileSync(join(p.dir, '.pgx.toml'), '[project]\nname = "shop\n');
    const d = doctor(p);
    expect(d.config).toMatchObject({ status: 'fail' });
    expect(d.config!.detail).toMatch(/unterminated string at line 2 col 8/);
    for (const name of ['role', 'roles', 'template', 'pool', 'branches', 'orphans', 'guards']) {
      expect(d[name], name).toMatchObject({
        status: 'skip',
        detail: 'not checked: .pgx.toml is invalid, so the server was not tried (see the config check)',
      });
    }
    // an unreachable server (a valid config) still says it is the connection
    const q = makeProject();
    dirs.push(q.dir);
    q.env.PGX_DATABASE_URL = 'postgresql://me@127.0.0.1:1/postgres';
    expect(doctor(q).role).toMatchObject({
      status: 'skip',
      detail: 'not checked: no connection to the server (see the server check)',
    });
  });

  it('right after install, an empty pool nothing has filled yet is ok ("fills at the first session"), not a warning', () => {
    const p = makeProject();
    dirs.push(p.dir);
    p.env.PGX_POOL = '4';
    const pool = doctor(p).pool!;
    expect(pool.status, pool.detail).toBe('ok');
    expect(pool.detail).toMatch(
      /^(empty: never filled yet|0\/4 ready .*: not filled yet; the pool fills at the first session)/,
    );
    // once a branch of the template exists and nothing fills the pool, below target is the warning it was
    expect(runPgx(['agent', 'exec', '--id', 'd', '--', 'true'], p).status).toBe(0);
    const after = doctor(p).pool!;
    expect(after).toMatchObject({ status: 'warn', fix: 'pgx agent pool fill' });
    expect(runPgx(['agent', 'down', '--id', 'd', '--now'], p).status).toBe(0);
    expect(runPgx(['template', 'drop'], p).status).toBe(0); // nothing of this test stays on the server
  });
});
