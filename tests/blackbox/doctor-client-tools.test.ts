// The doctor's client-tools check (doctor/client-tools-check.ts, decision 488): psql, pg_dump and pg_restore found or
// not, their majors against the server's, and, where one is missing or too old, what still works, what does not and how
// to get them, as a warning that is the user's call: "setup done" stays reachable on a machine with none of them. The
// programs are planted (small scripts that answer --version) or hidden (a PATH without them), so the test means the
// same on every machine, with PostgreSQL installed or not.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, jsonOf, makeProject, runPgx, sql } from '../helpers/pgx.js';

type Check = { name: string; status: string; detail: string; fix?: string; decide?: boolean };

const serverMajor = async () =>
  Number((await sql<{ v: string }>(`SELECT current_setting('server_version_num') AS v`))[0]!.v.slice(0, -4));

/** A directory of stand-in programs that answer `--version` with `major`, and a PATH with node and pgx only besides. */
function planted(dir: string, tools: Record<string, number>): NodeJS.ProcessEnv {
  const bin = join(dir, 'fake-pg-bin');
  mkdirSync(bin);
  for (const [tool, major] of Object.entries(tools)) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} (PostgreSQL) ${major}.3"\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  return { PGX_PG_BINDIR: bin, PATH: plainPath(dir) };
}

/** A PATH with node, pgx and a shell's basics, and no PostgreSQL program. */
function plainPath(dir: string): string {
  const bin = join(dir, 'plain-bin');
  mkdirSync(bin, { recursive: true });
  for (const [name, target] of [
    ['node', process.execPath],
    ['pgx', LAUNCHER],
    ['sh', '/bin/sh'],
  ] as const)
    symlinkSync(target, join(bin, name));
  return bin;
}

function doctor(p: ReturnType<typeof makeProject>, env: NodeJS.ProcessEnv): { checks: Check[]; setup_done: boolean } {
  return jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: { ...p.env, ...env } }));
}

describe('pgx agent doctor: client programs', () => {
  it("none of them: a warning that is the user's call, saying what works, what does not, and how to get them", async () => {
    const p = makeProject();
    const d = doctor(p, { PATH: plainPath(p.dir), PGX_PG_BINDIR: undefined });
    const c = d.checks.find((x) => x.name === 'client-tools')!;
    expect(c).toMatchObject({ status: 'warn', decide: true });
    expect(c.detail).toMatch(/^not found: psql, pg_dump, pg_restore \(looked in PGX_PG_BINDIR, on PATH/);
    expect(c.detail).toContain('importing a plain SQL dump');
    expect(c.detail).toContain('`pgx local psql`');
    expect(c.detail).toContain('forks and resets of a session branch (connected or not: the Node copy)');
    expect(c.detail).toContain('`pgx source import --from <url>` and `sync`');
    expect(c.detail).toContain('Everything else does: branches, clones');
    expect(c.detail).toContain('`pgx local sql`');
    expect(c.fix).toContain(`version ${await serverMajor()} or newer`);
    expect(c.fix).toContain('apt-get install postgresql-client');
    expect(c.fix).toContain('without root: README, "Client programs"');
  });

  it("all of them, of the server's major: ok, with each one's major", async () => {
    const p = makeProject();
    const m = await serverMajor();
    const d = doctor(p, planted(p.dir, { psql: m, pg_dump: m, pg_restore: m }));
    expect(d.checks.find((x) => x.name === 'client-tools')).toEqual({
      name: 'client-tools',
      status: 'ok',
      detail: `psql ${m}, pg_dump ${m}, pg_restore ${m} (server ${m})`,
    });
  });

  it('one older than the server, one missing: both named, and what each leaves out', async () => {
    const p = makeProject();
    const m = await serverMajor();
    const d = doctor(p, planted(p.dir, { psql: m, pg_dump: m - 3 }));
    const c = d.checks.find((x) => x.name === 'client-tools')!;
    expect(c).toMatchObject({ status: 'warn', decide: true });
    expect(c.detail).toContain('not found: pg_restore');
    expect(c.detail).toContain(
      `older than the server: pg_dump ${m - 3} (server ${m}) (pg_dump refuses a newer server)`,
    );
    expect(c.detail).toContain(`found: psql ${m}, pg_dump ${m - 3}`);
    expect(c.detail).toContain('`pgx source import` of a custom or directory dump');
  });

  it('"setup done" stays reachable without them: installed hooks, no client program, the doctor says the setup is done', () => {
    const p = makeProject();
    const env: NodeJS.ProcessEnv = { ...p.env, PATH: plainPath(p.dir) };
    delete env.PGX_PG_BINDIR;
    for (const step of [
      ['agent', 'install', 'claude'],
      ['template', 'refresh'],
    ]) {
      const r = runPgx(step, { cwd: p.dir, env });
      expect(r.status, r.stderr).toBe(0);
    }
    const text = spawnSync(process.execPath, [LAUNCHER, 'agent', 'doctor'], { cwd: p.dir, env, encoding: 'utf8' });
    const last = text.stdout.trim().split('\n').at(-1)!;
    const strayRoles = /^warn\s+roles\s.*left without a branch/m.test(text.stdout); // another file's, on the shared server
    if (!strayRoles) {
      expect(text.status, text.stdout).toBe(0);
      expect(last).toMatch(
        /^setup done \(0 fail, \d+ warn, \d+ ok\); \d+ warnings are choices only you can make: .*client-tools/,
      );
    }
    expect(text.stdout).toMatch(/^warn\s+client-tools\s+not found: psql, pg_dump, pg_restore .*→ your call: /m);
    expect(runPgx(['template', 'drop'], { cwd: p.dir, env }).status).toBe(0);
  });
});
