import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx, sql } from '../helpers/pgx.js';

describe('agent exec', () => {
  it('isolates two exec ids: a table made in one is absent in the other', () => {
    const p = makeProject();
    const a = runPgx(['agent', 'exec', '--id', 'a', '--keep', '--', 'psql', '-X', '-q', '-c', 'create table only_a(x int)'], p);
    expect(a.status, a.stderr).toBe(0);
    const b = runPgx(['agent', 'exec', '--id', 'b', '--keep', '--', 'psql', '-X', '-Atc', "select count(*) from pg_tables where tablename = 'only_a'"], p);
    expect(b.status, b.stderr).toBe(0);
    expect(b.stdout.trim()).toBe('0');
    const a2 = runPgx(['agent', 'exec', '--id', 'a', '--', 'psql', '-X', '-Atc', "select current_database() || ' ' || count(*) from pg_tables where tablename = 'only_a'"], p);
    expect(a2.stdout.trim()).toMatch(/^exec_testhost_a 1$/);
  });

  it('passes the exit status through, and 128+n for a signal', () => {
    const p = makeProject();
    expect(runPgx(['agent', 'exec', '--id', 's', '--', 'sh', '-c', 'exit 7'], p).status).toBe(7);
    expect(runPgx(['agent', 'exec', '--id', 's', '--', 'sh', '-c', 'kill -TERM $$'], p).status).toBe(143);
  });

  it('--json reports one line on stderr after the child; --keep attaches next time', async () => {
    const p = makeProject();
    const first = runPgx(['agent', 'exec', '--id', 'k', '--keep', '--json', '--', 'true'], p);
    const r1 = JSON.parse(first.stderr.trim().split('\n').pop()!);
    expect(r1).toMatchObject({ id: 'k', branch: 'exec_testhost_k', fresh: true, method: 'clone', status: 0 });
    const second = runPgx(['agent', 'exec', '--id', 'k', '--keep', '--json', '--', 'true'], p);
    const r2 = JSON.parse(second.stderr.trim().split('\n').pop()!);
    expect(r2).toMatchObject({ branch: 'exec_testhost_k', fresh: false, method: 'attach' });
    const ls = jsonOf(runPgx(['agent', 'ls', '--json'], p));
    expect(ls.branches.map((b: any) => [b.name, b.state])).toEqual([['exec_testhost_k', 'active']]);
    expect((await sql('select 1 from pg_database where datname = $1', ['exec_testhost_k'])).length).toBe(1);
  });
});
