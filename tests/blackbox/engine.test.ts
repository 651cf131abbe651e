// The branch commands' wiring, through the built CLI: flags reach the engine, results print as --json, errors map
// to their exit codes. What the engine does is tested in-process (tests/engine/*).
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';
import { templateName } from '../../src/engine/template.js';

describe('branch commands (CLI wiring)', () => {
  it('up, ls, down and gc print their results as JSON; a second down exits 5', async () => {
    const p = makeProject({ toml: '[agent]\ngrace = "0s"\n' });
    const up = jsonOf(runPgx(['agent', 'up', '--id', 'w', '--json'], p));
    expect(up).toMatchObject({
      branch: `exec_${p.host}_w`,
      fresh: true,
      method: 'clone',
      password_env: 'PGPASSFILE (not printed)',
    });
    // The branch role's credentials (roles = "auto" on a superuser): PGUSER is the role, the password in a passfile.
    expect(up.role).toMatch(/^pgx_role_/);
    expect(up.env).toMatchObject({ PGDATABASE: up.branch, PGUSER: up.role });
    expect(statSync(up.env.PGPASSFILE).mode & 0o777).toBe(0o600);
    expect(readFileSync(up.env.PGPASSFILE, 'utf8')).toContain(`:${up.role}:`);
    expect(JSON.stringify(up)).not.toContain(pgInfo().password);
    const info = pgInfo();
    const c = new pg.Client({
      host: info.host,
      port: info.port,
      user: info.user,
      password: info.password,
      database: up.branch,
    });
    c.on('error', () => {});
    await c.connect();
    expect(jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches).toMatchObject([
      { name: up.branch, id: 'w', state: 'active', kind: 'exec', exists: true, role: up.role },
    ]);
    expect(jsonOf(runPgx(['agent', 'down', '--id', 'w', '--json'], p)).branches).toEqual([
      { name: up.branch, action: 'retired', role: up.role, backends_terminated: 1, backends_remaining: 0 },
    ]);
    await c.end().catch(() => {});
    const gc = runPgx(['agent', 'gc', '--json'], p); // grace 0 s: past its deadline at once
    expect(gc.status, gc.stdout).toBe(0);
    expect(jsonOf(gc).dropped.map((d: { name: string }) => d.name)).toContain(up.branch);
    const again = runPgx(['agent', 'down', '--id', 'w', '--json'], p);
    expect(again.status).toBe(5);
    expect(jsonOf(again).error.code).toBe('NOT_FOUND');
    expect(jsonOf(again).error.message).toContain('No pgx branch matches --id w in project'); // names the value too
    expect(runPgx(['agent', 'down', '--id', 'w', '--agent', 'x'], p).status).toBe(2);
    expect(runPgx(['agent', 'gc', '--limit', 'x'], p).status).toBe(2);
  });

  it('down --branch of a database pgx did not make exits 6 and leaves it alone', async () => {
    const p = makeProject();
    const name = `foreign_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${name}`);
    try {
      const r = runPgx(['agent', 'down', '--branch', name, '--now', '--json'], p);
      expect(r.status).toBe(6);
      expect(jsonOf(r).error.code).toBe('NOT_PGX_DATABASE');
      expect(await sql('SELECT 1 FROM pg_database WHERE datname = $1', [name])).toHaveLength(1);
    } finally {
      await sql(`DROP DATABASE ${name}`);
    }
  });

  it('template refresh prints the template it built; a missing source exits 7', async () => {
    const p = makeProject();
    const r = runPgx(['template', 'refresh', '--json'], p);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(jsonOf(r)).toMatchObject({ template: templateName(p.name, undefined), source: null, method: 'empty' });
    const missing = makeProject({ source: 'no_such_source_db' });
    const m = runPgx(['template', 'refresh', '--json'], missing);
    expect(m.status).toBe(7);
    expect(jsonOf(m).error.code).toBe('TEMPLATE_FAILED');
  });
});
