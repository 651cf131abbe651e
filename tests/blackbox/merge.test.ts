// `pgx agent merge` and `pgx agent diff --sql` as a user runs them (the wiring; the engine's cases are
// tests/engine/merge.test.ts and diff-sql.test.ts): the dry run, the apply, the refusal's exit code and listing, --json,
// --out; a subagent's own routed command may not merge; a merge killed with SIGKILL mid-transaction leaves the
// session's branch as it was.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pollUntil } from '../helpers/poll.js';
import { jsonOf, LAUNCHER, makeProject, runPgx, sql, withAdmin } from '../helpers/pgx.js';

type P = ReturnType<typeof makeProject>;

/** The session's branch with a table, an open connection held on it, and subagents forked from it. */
async function forked(p: P, agents: string[]) {
  const s = jsonOf<{ branch: string }>(runPgx(['agent', 'up', '--session', 's1', '--json'], p)).branch;
  await sql(
    `CREATE TABLE orders (id int PRIMARY KEY, status text); INSERT INTO orders SELECT g, 'new' FROM generate_series(1, 20) g`,
    [],
    s,
  );
  let release!: () => void;
  const held = withAdmin(
    (c) =>
      new Promise<void>((res) => {
        release = res;
        void c.query('SELECT 1');
      }),
    s,
  );
  await pollUntil(async () => release !== undefined, 5000, 20);
  const branches: Record<string, string> = {};
  for (const a of agents) {
    const r = jsonOf<{ branch: string; fork: { method: string } }>(
      runPgx(['agent', 'up', '--session', 's1', '--agent', a, '--json'], p),
    );
    expect(r.fork.method).toBe('frozen');
    branches[a] = r.branch;
  }
  return { s, branches, release: async () => (release(), await held) };
}

async function stateOf(db: string): Promise<unknown> {
  return sql(
    `SELECT (SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public') AS tables,
            (SELECT string_agg(id || ':' || status, ',' ORDER BY id) FROM orders) AS rows`,
    [],
    db,
  );
}

describe('agent merge, as a user runs it', () => {
  it('--dry-run, the apply, the refusal (exit 9, each conflict listed, nothing applied), --json; diff --sql --out', async () => {
    const p = makeProject();
    const { s, branches, release } = await forked(p, ['a1', 'a2']);
    try {
      await sql(
        `CREATE TABLE notes (k int PRIMARY KEY); INSERT INTO notes VALUES (1); UPDATE orders SET status = 'x' WHERE id = 1`,
        [],
        branches.a1!,
      );
      await sql(`UPDATE orders SET status = 'theirs' WHERE id = 2`, [], branches.a2!);
      await sql(`UPDATE orders SET status = 'mine' WHERE id = 2`, [], s);

      const out = join(p.dir, 'a1.sql');
      const file = runPgx(['agent', 'diff', '--agent', 'a1', '--sql', '--out', out], p);
      expect(file.status, file.stderr + file.stdout).toBe(0);
      expect(file.stdout).toMatch(/1 schema statement\(s\), 2 row\(s\) in 2 table\(s\) → /);
      expect(readFileSync(out, 'utf8')).toMatch(/^CREATE TABLE "public"\."notes"/m);
      expect(runPgx(['agent', 'diff', '--agent', 'a1', '--out', out], p).status).toBe(2); // --out needs --sql

      const dry = runPgx(['agent', 'merge', '--agent', 'a1', '--dry-run'], p);
      expect(dry.status, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/^check: no conflict/m);
      expect(await stateOf(s)).toEqual([{ tables: 'orders', rows: expect.stringMatching(/^1:new,2:mine,/) }]);
      const merged = runPgx(['agent', 'merge', '--agent', 'a1'], p);
      expect(merged.status, merged.stderr + merged.stdout).toBe(0);
      expect(merged.stdout).toMatch(
        /^merged agent_\S+ into agent_\S+: 1 schema statement\(s\), 2 row\(s\), one transaction$/m,
      );
      expect(await stateOf(s)).toEqual([{ tables: 'notes,orders', rows: expect.stringMatching(/^1:x,2:mine,/) }]);

      const before = await stateOf(s);
      const refused = runPgx(['agent', 'merge', '--agent', 'a2'], p);
      expect(refused.status).toBe(9);
      expect(refused.stdout).toMatch(
        /public\.orders \(2\): both updated this row\n {4}fork point: .*"status":"new".*\n {4}branch: .*"status":"theirs".*\n {4}parent: .*"status":"mine"/,
      );
      expect(refused.stderr).toMatch(/^error: Not merged: 1 change\(s\) of .* Nothing was applied\.$/m);
      expect(await stateOf(s)).toEqual(before);
      const json = jsonOf(runPgx(['agent', 'merge', '--agent', 'a2', '--json'], p));
      expect(json).toMatchObject({ error: { code: 'MERGE_CONFLICT', conflicts: { rows: [{ key: '(2)' }] } } });
      const dryConflict = runPgx(['agent', 'merge', '--agent', 'a2', '--dry-run'], p);
      expect(dryConflict.status).toBe(9);
      expect(dryConflict.stdout).toMatch(/check: 1 conflict\(s\); a merge would be refused \(exit 9\)/);

      const ls = jsonOf<{ branches: { agent_id: string; merged_into: string | null }[] }>(
        runPgx(['agent', 'ls', '--json'], p),
      );
      expect(ls.branches.find((b) => b.agent_id === 'a1')!.merged_into).toBe(s);
      expect(ls.branches.find((b) => b.agent_id === 'a2')!.merged_into).toBeNull();
      expect(runPgx(['agent', 'ls'], p).stdout).toMatch(/merged into /);
    } finally {
      await release();
      runPgx(['agent', 'down', '--project', '--now', '--yes'], p);
    }
  });

  it("a subagent's own routed command may not merge (exit 6); the session can", async () => {
    const p = makeProject();
    const { branches, release } = await forked(p, ['a1']);
    try {
      await sql(`INSERT INTO orders VALUES (99, 'sub')`, [], branches.a1!);
      const inside = runPgx(
        [
          'agent',
          'exec',
          '--session',
          's1',
          '--agent',
          'a1',
          '--',
          process.execPath,
          LAUNCHER,
          'agent',
          'merge',
          '--agent',
          'a1',
        ],
        p,
      );
      expect(inside.status).toBe(6);
      expect(inside.stderr).toMatch(/refused `pgx agent merge` here: this runs inside subagent a1's routed command/);
      expect(runPgx(['agent', 'merge', '--agent', 'a1'], p).status).toBe(0);
    } finally {
      await release();
      runPgx(['agent', 'down', '--project', '--now', '--yes'], p);
    }
  });

  it('SIGKILL mid-transaction: the session branch is as it was, and no session of the merge is left', async () => {
    const p = makeProject();
    const { s, branches, release } = await forked(p, ['a1']);
    try {
      // a migration that takes a while in the middle: a CHECK whose validation sleeps per row
      await sql(
        `CREATE TABLE extra (id int PRIMARY KEY); INSERT INTO extra VALUES (1);
         CREATE FUNCTION slow_ok(int) RETURNS boolean LANGUAGE sql AS 'SELECT pg_sleep(0.5) IS NOT NULL';
         ALTER TABLE orders ADD CONSTRAINT slow CHECK (slow_ok(id)); UPDATE orders SET status = 'sub' WHERE id < 5`,
        [],
        branches.a1!,
      );
      const before = await stateOf(s);
      const child = spawn(process.execPath, [LAUNCHER, 'agent', 'merge', '--agent', 'a1'], {
        cwd: p.cwd,
        env: p.env,
        stdio: 'ignore',
      });
      const midway = await pollUntil(
        async () =>
          (
            await sql(
              `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE '%slow_ok%'`,
              [s],
            )
          ).length > 0,
        60_000,
        50,
      );
      expect(midway).toBe(true);
      child.kill('SIGKILL');
      await new Promise((res) => child.on('exit', res));
      const gone = await pollUntil(
        async () =>
          (await sql(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'pgx'`, [s])).length ===
          0,
        30_000,
        50,
      );
      expect(gone).toBe(true);
      expect(await stateOf(s)).toEqual(before);
      expect(await sql(`SELECT count(*)::int AS n FROM pg_constraint WHERE conname = 'slow'`, [], s)).toEqual([
        { n: 0 },
      ]);
    } finally {
      await release();
      runPgx(['agent', 'down', '--project', '--now', '--yes'], p);
    }
  });
});
