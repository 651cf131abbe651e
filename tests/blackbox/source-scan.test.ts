// The CLI's side of masking (decision 460), spawned: `pgx source scan --json` lists the personal columns without
// copying anything; `pgx source import` refuses with each column and a [mask] block on stderr, exit 6 (refused);
// with the rules it imports masked and says so; the doctor's mask line, and its warning once the rules change.
import { appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';
import { checksum, fillPersonalSource, RULES_TOML } from '../helpers/personal-source.js';

const ORIGIN = `scan_origin_${Math.random().toString(36).slice(2, 8)}`;
const made: string[] = [ORIGIN];
const dirs: string[] = [];
const url = `postgresql://${pgInfo().user}:${encodeURIComponent(pgInfo().password)}@${pgInfo().host}:${pgInfo().port}/${ORIGIN}`;

beforeAll(async () => {
  await sql(`CREATE DATABASE ${ORIGIN}`);
  await fillPersonalSource(ORIGIN, 100);
}, 60_000);
afterAll(async () => {
  for (const d of made) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function project(toml: string) {
  const source = `scan_copy_${Math.random().toString(36).slice(2, 8)}`;
  const p = makeProject({ source, toml });
  dirs.push(p.dir);
  made.push(source);
  return { ...p, source, env: { ...p.env, ORIGIN_URL: url } };
}

describe('pgx source scan, and import refusing and masking', () => {
  it('scan lists each personal column with why; import refuses naming them; with the rules it imports masked; the doctor reports it', async () => {
    const sum = await checksum(ORIGIN);
    const bare = project('');
    const scan = jsonOf(runPgx(['source', 'scan', '--from-env', 'ORIGIN_URL', '--json'], bare));
    expect(scan.would_refuse).toBe(true);
    expect(scan.unruled.map((f: { key: string }) => f.key).sort()).toEqual([
      'public.customers.api_token',
      'public.customers.birth_date',
      'public.customers.email',
      'public.customers.full_name',
      'public.customers.last_ip',
      'public.customers.phone',
      'public.customers.profile',
      'public.orders.card_number',
      'public.orders.customer_email',
    ]);
    expect(scan.block).toMatch(/^\[mask\]\n"public\.customers\.email"\s+= "email"/);
    const refused = runPgx(['source', 'import', '--from-env', 'ORIGIN_URL'], bare);
    expect(refused.status).toBe(6);
    expect(refused.stderr).toMatch(/look like personal data and have no \[mask\] rule/);
    expect(refused.stderr).toContain('public.orders.card_number (text)');
    expect(refused.stderr).toContain('[mask]\n"public.customers.email"');
    expect((await sql(`SELECT count(*)::int AS n FROM pg_database WHERE datname = $1`, [bare.source]))[0].n).toBe(0);

    const p = project(RULES_TOML);
    const imported = runPgx(['source', 'import', '--from-env', 'ORIGIN_URL'], p);
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/masked 9 column\(s\) in 2 table\(s\) before the copy was finished/);
    expect(imported.stderr).toMatch(/masking: 1\/2 table\(s\)/);
    const ruled = jsonOf(runPgx(['source', 'scan', '--json'], p));
    expect(ruled).toMatchObject({ would_refuse: false, unruled: [], problems: [] });
    let doctor = jsonOf(runPgx(['agent', 'doctor', '--json'], p));
    expect(doctor.checks.find((c: { name: string }) => c.name === 'mask')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(
        /^9 \[mask\] rule\(s\), 9 masking; "scan_copy_\w+" masked at its import, the template with the same rules/,
      ),
    });
    // A new rule: the copy and the template predate it.
    appendFileSync(join(p.dir, '.pgx.toml'), '"public.customers.plan" = "keep"\n');
    doctor = jsonOf(runPgx(['agent', 'doctor', '--json'], p));
    expect(doctor.checks.find((c: { name: string }) => c.name === 'mask')).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/^pgx source sync/),
    });
    const refresh = runPgx(['template', 'refresh'], p);
    expect(refresh.status).toBe(6);
    expect(refresh.stderr).toMatch(/rules in .* changed since "scan_copy_\w+" was imported/);
    const synced = runPgx(['source', 'sync'], p);
    expect(synced.status, synced.stderr).toBe(0);
    doctor = jsonOf(runPgx(['agent', 'doctor', '--json'], p));
    expect(doctor.checks.find((c: { name: string }) => c.name === 'mask').status).toBe('ok');
    expect(await checksum(ORIGIN)).toBe(sum);
    runPgx(['template', 'drop'], p);
  }, 180_000);

  it("a routed exec on the user's own database with rules: the hot-path bundle masks the template it builds (dist/mask.cjs)", async () => {
    const own = `scan_own_${Math.random().toString(36).slice(2, 8)}`;
    made.push(own);
    await sql(`CREATE DATABASE ${own} TEMPLATE ${ORIGIN}`);
    const p = makeProject({ source: own, toml: RULES_TOML });
    dirs.push(p.dir);
    const r = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'masked',
        '--',
        'psql',
        '-X',
        '-At',
        '-c',
        'SELECT email FROM customers ORDER BY id LIMIT 1',
      ],
      p,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^u[0-9a-f]{16}@example\.com$/);
    expect((await sql(`SELECT email FROM customers ORDER BY id LIMIT 1`, [], own))[0].email).not.toMatch(
      /example\.com/,
    );
    const mask = () =>
      jsonOf(runPgx(['agent', 'doctor', '--json'], p)).checks.find((c: { name: string }) => c.name === 'mask');
    expect(mask()).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/the template is a masked copy of your database, the template with the same rules/),
    });
    appendFileSync(join(p.dir, '.pgx.toml'), '"public.customers.plan" = "keep"\n');
    expect(mask()).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/the template predates them \(masked with other rules\)/),
      fix: expect.stringMatching(/^pgx template refresh/),
    });
    runPgx(['agent', 'down', '--id', 'masked', '--now'], p);
    runPgx(['template', 'drop'], p);
  }, 120_000);
});
