import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, runPgx } from '../helpers/pgx.js';

/** A project (a package.json) with no .pgx.toml yet, and a HOME of its own beside it. */
function emptyDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-init-'));
  writeFileSync(join(dir, 'package.json'), '{}\n');
  const home = mkdtempSync(join(tmpdir(), 'pgx-init-home-'));
  // No PGX_DATABASE_URL: init must not need a server, and the written file decides.
  return {
    dir,
    cwd: dir,
    home,
    env: { PATH: process.env.PATH, HOME: home, PGX_HOME: join(dir, '.pgx-home') } as NodeJS.ProcessEnv,
  };
}

describe('pgx init', () => {
  it('writes a commented .pgx.toml from the flags, prints the next command, and the file validates', () => {
    const p = emptyDir();
    // --no-check: db.internal is not a server here (the try and its warning: tests/blackbox/url-intake.test.ts)
    const r = runPgx(
      [
        'init',
        '--json',
        '--no-check',
        '--name',
        'demo',
        '--source',
        'app_dev',
        '--url',
        'postgresql://me@db.internal:5433/postgres',
      ],
      p,
    );
    expect(r.status, r.stderr).toBe(0);
    const v = jsonOf(r);
    expect(v).toEqual({
      path: join(p.dir, '.pgx.toml'),
      project: 'demo',
      server_url: 'postgresql://me@db.internal:5433/postgres',
      server_check: null,
      source: 'app_dev',
      overwritten: false,
      import: null,
      next: 'pgx agent install claude',
    });
    const text = readFileSync(join(p.dir, '.pgx.toml'), 'utf8');
    expect(text).toMatch(/^# pgx:/);
    expect(text).toContain('name = "demo"');
    expect(text).toContain('source = "app_dev"');
    expect(text).toContain('url = "postgresql://me@db.internal:5433/postgres"');
    // The written file is what every other command reads: doctor's config check accepts it.
    const d = jsonOf(runPgx(['agent', 'doctor', '--json'], p));
    const config = d.checks.find((c: { name: string }) => c.name === 'config');
    expect(config.status, config.detail).toBe('ok');
    expect(config.detail).toContain('project "demo", source "app_dev", server from [server] url');
  });

  it('with no flags: the directory name, the embedded server (url commented out), human output ends with the next step', () => {
    const p = emptyDir();
    const r = runPgx(['init'], p);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').pop()).toBe('next: pgx agent install claude');
    const text = readFileSync(join(p.dir, '.pgx.toml'), 'utf8');
    expect(text).toContain(`name = "${basename(p.dir).replace(/[^A-Za-z0-9_.-]/g, '_')}"`);
    expect(text).toMatch(/^# url = /m);
    expect(text).not.toMatch(/^url = /m);
  });

  it('refuses to overwrite without --force (exit 2, file untouched); --force overwrites', () => {
    const p = emptyDir();
    writeFileSync(join(p.dir, '.pgx.toml'), '[project]\nname = "mine"\n');
    const r = runPgx(['init', '--name', 'other'], p);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('already exists');
    expect(r.stderr).toContain('--force');
    expect(readFileSync(join(p.dir, '.pgx.toml'), 'utf8')).toBe('[project]\nname = "mine"\n');
    const j = runPgx(['init', '--json'], p);
    expect(j.status).toBe(2);
    expect(jsonOf(j).error.code).toBe('USAGE');
    const f = runPgx(['init', '--force', '--json', '--name', 'other'], p);
    expect(f.status, f.stdout).toBe(0);
    expect(jsonOf(f).overwritten).toBe(true);
    expect(readFileSync(join(p.dir, '.pgx.toml'), 'utf8')).toContain('name = "other"');
  });

  it('a flag that would make an invalid file: exit 2, nothing written', () => {
    const p = emptyDir();
    const r = runPgx(['init', '--url', 'mysql://x@y/z'], p);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--url: unsupported scheme 'mysql'");
    expect(existsSync(join(p.dir, '.pgx.toml'))).toBe(false);
    expect(runPgx(['init', '--name', '.hidden'], p).status).toBe(2);
    expect(existsSync(join(p.dir, '.pgx.toml'))).toBe(false);
  });

  it('a URL with a password: written as given, warned about on stderr, never echoed on stdout', () => {
    const p = emptyDir();
    const r = runPgx(['init', '--json', '--url', 'postgresql://me:s3cret@127.0.0.1:5432/postgres'], p);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('s3cret');
    expect(jsonOf(r).server_url).toBe('postgresql://me@127.0.0.1:5432/postgres');
    expect(r.stderr).toMatch(/holds a password/);
  });
});

describe('init with a password in --url', () => {
  it('writes the file 0600, and an unparseable --url writes nothing', async () => {
    const { mkdtempSync, statSync, existsSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { runPgx } = await import('../helpers/pgx.js');
    const dir = mkdtempSync(join(tmpdir(), 'pgx-init-pw-'));
    writeFileSync(join(dir, 'package.json'), '{}\n');
    const env = { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), 'pgx-init-home-')) };
    const r = runPgx(['init', '--url', 'postgresql://me:s3cret@127.0.0.1:5432/postgres', '--json'], { cwd: dir, env });
    expect(r.status, r.stderr).toBe(0);
    expect(statSync(join(dir, '.pgx.toml')).mode & 0o777).toBe(0o600);
    const dir2 = mkdtempSync(join(tmpdir(), 'pgx-init-bad-'));
    writeFileSync(join(dir2, 'package.json'), '{}\n');
    const bad = runPgx(['init', '--url', 'postgres://u:pw@[bad/x'], { cwd: dir2, env });
    expect(bad.status).not.toBe(0);
    expect(existsSync(join(dir2, '.pgx.toml'))).toBe(false);
    expect(bad.stderr + bad.stdout).not.toContain('pw@');
  });
});

describe('init never makes a directory a project by accident (decision 421)', () => {
  it('refuses in $HOME, in / and in a directory with no project marker, writing nothing and naming the way forward; --here means it', () => {
    const p = emptyDir();
    const bare = mkdtempSync(join(tmpdir(), 'pgx-init-bare-'));
    const sub = join(p.dir, 'src');
    mkdirSync(sub);
    for (const [cwd, says] of [
      [p.home, `${p.home} is your home directory ($HOME)`],
      ['/', '/ is the root directory'],
      [bare, `${bare} has no project marker (.pgx.toml, .git,`],
    ] as const) {
      const r = runPgx(['init', '--json'], { cwd, env: p.env });
      expect(r.status, r.stderr).toBe(2);
      expect(jsonOf(r).error).toMatchObject({
        code: 'NOT_A_PROJECT',
        message: expect.stringContaining(says),
        hint: expect.stringContaining('pgx init --here'),
      });
      expect(existsSync(join(cwd, '.pgx.toml'))).toBe(false);
    }
    // a directory inside a project: the hint names the project
    const inSub = runPgx(['init'], { cwd: sub, env: p.env });
    expect(inSub.status).toBe(2);
    expect(inSub.stderr).toContain(
      `The project looks like ${p.dir} (it has package.json): \`pgx init --cwd ${p.dir}\``,
    );
    expect(existsSync(join(sub, '.pgx.toml'))).toBe(false);
    // --here: the user means it
    const here = runPgx(['init', '--here', '--json'], { cwd: bare, env: p.env });
    expect(here.status, here.stderr).toBe(0);
    expect(existsSync(join(bare, '.pgx.toml'))).toBe(true);
    for (const marker of ['.git', 'go.mod', 'Cargo.toml', 'pyproject.toml', 'Gemfile', 'pom.xml']) {
      const d = mkdtempSync(join(tmpdir(), 'pgx-init-marked-'));
      mkdirSync(join(d, marker)); // a directory or a file: either marks it
      expect(runPgx(['init'], { cwd: d, env: p.env }).status, marker).toBe(0);
    }
  });
});
