// Template housekeeping: `pgx template ls|drop` (stamped templates only) and `agent gc` dropping templates nobody
// uses (empty ones, or ones whose source is gone or changed) once past the template grace.
import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx, sql } from '../helpers/pgx.js';

const rand = () => Math.random().toString(36).slice(2, 8);

describe('pgx template ls | drop', () => {
  it("lists this project's template with its branches; drop removes it, branches keep working, the next branch rebuilds it", () => {
    const p = makeProject();
    expect(
      runPgx(['agent', 'exec', '--id', 'one', '--keep', '--', 'psql', '-X', '-qc', 'create table t (x int)'], p).status,
    ).toBe(0);
    const ls = jsonOf(runPgx(['template', 'ls', '--json'], p));
    expect(ls.templates).toHaveLength(1);
    const tpl = ls.templates[0];
    expect(tpl).toMatchObject({
      project: p.name,
      source: null,
      state: 'ready',
      method: 'empty',
      branches: 1,
      current: true,
    });
    expect(tpl.bytes).toBeGreaterThan(0);
    expect(runPgx(['template', 'ls'], p).stdout).toContain(tpl.name);

    const drop = jsonOf(runPgx(['template', 'drop', '--json'], p));
    expect(drop.dropped).toEqual([tpl.name]);
    expect(jsonOf(runPgx(['template', 'ls', '--json'], p)).templates).toEqual([]);
    const still = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'one',
        '--keep',
        '--',
        'psql',
        '-X',
        '-Atc',
        "select count(*) from pg_tables where tablename = 't'",
      ],
      p,
    );
    expect(still.stdout.trim(), still.stderr).toBe('1');
    expect(runPgx(['agent', 'exec', '--id', 'two', '--', 'true'], p).status).toBe(0);
    expect(jsonOf(runPgx(['template', 'ls', '--json'], p)).templates.map((t: { name: string }) => t.name)).toEqual([
      tpl.name,
    ]);
  });

  it('refuses a database without the template stamp (exit 6), and a name that does not exist is exit 5', async () => {
    const p = makeProject();
    const foreign = `pgx_tpl_foreign_${rand()}`;
    await sql(`CREATE DATABASE ${foreign}`);
    try {
      const r = runPgx(['template', 'drop', foreign, '--json'], p);
      expect(r.status, r.stdout).toBe(6);
      expect((await sql('select count(*)::int AS n from pg_database where datname = $1', [foreign]))[0].n).toBe(1);
      expect(
        jsonOf(runPgx(['template', 'ls', '--all', '--json'], p)).templates.map((t: { name: string }) => t.name),
      ).not.toContain(foreign);
    } finally {
      await sql(`DROP DATABASE ${foreign}`);
    }
    expect(runPgx(['template', 'drop', 'pgx_tpl_nothing_here'], p).status).toBe(5);
  });
});

describe('agent gc of templates', () => {
  it('drops unused templates that are empty or whose source is gone, keeps in-step ones and ones in use, only past the grace', async () => {
    const src = `gcsrc_${rand()}`;
    const gone = `gcgone_${rand()}`;
    await sql(`CREATE DATABASE ${src}`);
    await sql(`CREATE DATABASE ${gone}`);
    const empty = makeProject();
    const inStep = makeProject({ source: src });
    const orphaned = makeProject({ source: gone });
    const used = makeProject();
    const pooled = makeProject(); // an empty template whose only user is a warm-pool member (no branch record)
    for (const p of [empty, inStep, orphaned]) {
      expect(runPgx(['agent', 'exec', '--id', 'x', '--', 'true'], p).status).toBe(0); // made, then retired…
      expect(runPgx(['agent', 'down', '--id', 'x', '--now'], p).status).toBe(0); // …and dropped: no record left
    }
    expect(runPgx(['agent', 'exec', '--id', 'keep', '--keep', '--', 'true'], used).status).toBe(0);
    const fill = runPgx(['agent', 'pool', 'fill', '--json'], { ...pooled, env: { ...pooled.env, PGX_POOL: '1' } });
    expect(fill.status, fill.stderr).toBe(0);
    expect(jsonOf(fill).created).toHaveLength(1);
    await sql(`DROP DATABASE ${gone}`);
    const names = Object.fromEntries(
      [empty, inStep, orphaned, used, pooled].map((p) => [
        p.name,
        jsonOf(runPgx(['template', 'ls', '--json'], p)).templates[0].name,
      ]),
    );

    // within the grace: nothing of these is dropped
    const early = jsonOf(runPgx(['agent', 'gc', '--json'], empty));
    expect(early.templates_dropped.map((t: { name: string }) => t.name)).not.toContain(names[empty.name]);

    const r = runPgx(['agent', 'gc', '--template-grace', '0s', '--json'], empty);
    expect(r.status, r.stdout).toBe(0);
    const dropped = Object.fromEntries(
      jsonOf(r).templates_dropped.map((t: { name: string; reason: string }) => [t.name, t.reason]),
    );
    expect(dropped[names[empty.name]]).toBe('empty, unused');
    expect(dropped[names[orphaned.name]]).toBe(`source "${gone}" is gone`);
    expect(dropped[names[inStep.name]]).toBeUndefined();
    expect(dropped[names[used.name]]).toBeUndefined();
    expect(dropped[names[pooled.name]]).toBeUndefined();
    expect(jsonOf(runPgx(['template', 'ls', '--json'], pooled)).templates[0]).toMatchObject({
      name: names[pooled.name],
      branches: 1,
    });
    const left = (await sql<{ datname: string }>('select datname from pg_database')).map((d) => d.datname);
    expect(left).toContain(names[inStep.name]);
    expect(left).toContain(names[used.name]);
    expect(left).toContain(names[pooled.name]);
    expect(runPgx(['agent', 'pool', 'drain'], pooled).status).toBe(0);
    expect(left).not.toContain(names[empty.name]);
    expect(runPgx(['agent', 'gc', '--template-grace', 'soon'], empty).status).toBe(2);
    await sql(`DROP DATABASE ${src}`).catch(() => {}); // (its template is a separate database)
  }, 300_000);
});
