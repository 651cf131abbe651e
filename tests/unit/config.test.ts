import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/project/config.js';
import { parseDuration, parseSize } from '../../src/project/config-values.js';
import { PgxError } from '../../src/lib/errors.js';

function project(toml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-cfg-'));
  if (toml !== undefined) writeFileSync(join(dir, '.pgx.toml'), toml);
  return dir;
}

describe('config', () => {
  it('defaults: directory name, embedded server, 2h idle, 10m grace, guards on', () => {
    const dir = project('');
    const c = loadConfig({ cwd: dir, env: {} });
    expect(c.project).toBe(basename(dir));
    expect(c.serverUrl).toBeUndefined();
    expect(c.idleTtlMs).toBe(7_200_000);
    expect(c.graceMs).toBe(600_000);
    expect(c.guards).toEqual({
      enabled: true,
      settings: {
        client_connection_check_interval: 5000,
        idle_in_transaction_session_timeout: 900_000,
        statement_timeout: 3_600_000,
      },
    });
  });

  it('is found upward from a subdirectory; env overrides url and host', () => {
    const dir = project('[project]\nname = "shop"\nsource = "shop_dev"\n[server]\nurl = "postgres://a@h/db"\n');
    const sub = join(dir, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    const c = loadConfig({
      cwd: sub,
      env: { PGX_DATABASE_URL: 'postgresql://b@h2/db', PGX_HOST: 'CI-Runner.example.com' },
    });
    expect(c.projectDir).toBe(dir);
    expect(c.project).toBe('shop');
    expect(c.source).toBe('shop_dev');
    expect(c.serverUrl).toBe('postgresql://b@h2/db');
    expect(c.host).toBe('cirunner');
  });

  it("in a Claude Code worktree (<root>/.claude/worktrees/<name>, a linked worktree): the main checkout's .pgx.toml, else its own", () => {
    // Claude Code resolves a worktree's settings.local.json (pgx's `--cwd <root>` rule) to the main checkout's: pgx
    // reads the main checkout's config, so the rewrite's --cwd and an unnamed project's name are the main checkout's.
    const root = project('[project]\nsource = "shop_dev"\n');
    const worktree = (name: string, gitFile = true) => {
      const w = join(root, '.claude', 'worktrees', name);
      mkdirSync(join(w, 'app'), { recursive: true });
      if (gitFile) writeFileSync(join(w, '.git'), `gitdir: ${join(root, '.git', 'worktrees', name)}\n`);
      else mkdirSync(join(w, '.git'));
      writeFileSync(join(w, '.pgx.toml'), '[project]\nsource = "other_db"\n');
      return w;
    };
    const w = worktree('sess1');
    for (const cwd of [w, join(w, 'app')]) {
      const c = loadConfig({ cwd, env: {} });
      expect(c).toMatchObject({
        projectDir: root,
        file: join(root, '.pgx.toml'),
        project: basename(root),
        source: 'shop_dev',
      });
    }
    // A subproject's config maps to the same subproject of the main checkout.
    writeFileSync(join(w, 'app', '.pgx.toml'), '[project]\nname = "wt_app"\n');
    mkdirSync(join(root, 'app'));
    writeFileSync(join(root, 'app', '.pgx.toml'), '[project]\nname = "app"\n');
    expect(loadConfig({ cwd: join(w, 'app'), env: {} })).toMatchObject({
      projectDir: join(root, 'app'),
      project: 'app',
    });
    // Not a linked worktree (a .git directory: a clone of its own): its own file.
    const clone = worktree('clone', false);
    expect(loadConfig({ cwd: clone, env: {} })).toMatchObject({
      projectDir: clone,
      project: 'clone',
      source: 'other_db',
    });
    // The main checkout has no .pgx.toml (e.g. it is on a branch without one): the worktree's own.
    const bare = project();
    const w2 = join(bare, '.claude', 'worktrees', 'x');
    mkdirSync(w2, { recursive: true });
    writeFileSync(join(w2, '.git'), 'gitdir: elsewhere\n');
    writeFileSync(join(w2, '.pgx.toml'), '[project]\nname = "wt"\n');
    expect(loadConfig({ cwd: w2, env: {} })).toMatchObject({ projectDir: w2, project: 'wt' });
  });

  it('roles: auto by default, per-branch and admin accepted, anything else an error naming the key', () => {
    expect(loadConfig({ cwd: project(''), env: {} }).roles).toBe('auto');
    expect(loadConfig({ cwd: project('[agent]\nroles = "per-branch"\n'), env: {} }).roles).toBe('per-branch');
    expect(loadConfig({ cwd: project('[agent]\nroles = "admin"\n'), env: {} }).roles).toBe('admin');
    expect(() => loadConfig({ cwd: project('[agent]\nroles = "none"\n'), env: {} })).toThrow(/agent\.roles/);
  });

  it('PGX_DATABASE_URL_FILE: the URL read from the file (PGX_DATABASE_URL still wins); an unreadable one is an error', () => {
    const dir = project('[server]\nurl = "postgres://a@h/db"\n');
    const file = join(dir, 'url');
    writeFileSync(file, 'postgresql://f@h3/db\n', { mode: 0o600 });
    expect(loadConfig({ cwd: dir, env: { PGX_DATABASE_URL_FILE: file } }).serverUrl).toBe('postgresql://f@h3/db');
    expect(
      loadConfig({ cwd: dir, env: { PGX_DATABASE_URL_FILE: file, PGX_DATABASE_URL: 'postgresql://b@h2/db' } })
        .serverUrl,
    ).toBe('postgresql://b@h2/db');
    expect(() => loadConfig({ cwd: dir, env: { PGX_DATABASE_URL_FILE: join(dir, 'nope') } })).toThrow(PgxError);
  });

  it('warm pool: defaults 4 / 16 / 2GB; sizes with units; PGX_POOL overrides; bad values are errors', () => {
    expect(loadConfig({ cwd: project(''), env: {} }).pool).toEqual({ size: 4, max: 16, maxBytes: 2 * 1024 ** 3 });
    const c = loadConfig({ cwd: project('[agent]\npool = 2\npool_max = 8\npool_max_bytes = "512MB"\n'), env: {} });
    expect(c.pool).toEqual({ size: 2, max: 8, maxBytes: 512 * 1024 ** 2 });
    expect(loadConfig({ cwd: project('[agent]\npool = 2\n'), env: { PGX_POOL: '0' } }).pool.size).toBe(0);
    expect(parseSize(1000)).toBe(1000);
    expect(parseSize('1.5 kB')).toBe(1536);
    expect(() => parseSize('lots')).toThrow(/not a size/);
    expect(() => loadConfig({ cwd: project('[agent]\npool = 1.5\n'), env: {} })).toThrow(/agent\.pool/);
    expect(() => loadConfig({ cwd: project('[agent]\npool_max_bytes = "2 parsecs"\n'), env: {} })).toThrow(
      /agent\.pool_max_bytes/,
    );
    expect(() => loadConfig({ cwd: project(''), env: { PGX_POOL: '-1' } })).toThrow(/PGX_POOL/);
  });

  it('guards can be set or disabled one by one', () => {
    const c = loadConfig({
      cwd: project(
        '[guards]\nstatement_timeout = "30s"\nclient_connection_check_interval = "off"\nidle_in_transaction_session_timeout = false\n',
      ),
      env: {},
    });
    expect(c.guards.settings).toEqual({
      client_connection_check_interval: null,
      idle_in_transaction_session_timeout: null,
      statement_timeout: 30_000,
    });
  });

  it('reports every unknown key and bad value at once, with the file and the key path', () => {
    const dir = project('[project]\nnmae = "x"\n[agent]\nidle_ttl = "soon"\n[guardz]\nx = 1\n');
    let err: unknown;
    try {
      loadConfig({ cwd: dir, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PgxError);
    const e = err as PgxError;
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.exitCode).toBe(3);
    expect(e.message).toContain(join(dir, '.pgx.toml'));
    expect(e.message).toMatch(/project: unknown key\(s\) "nmae"/);
    expect(e.message).toMatch(/agent\.idle_ttl: "soon" is not a duration/);
    expect(e.message).toMatch(/unknown key\(s\) "guardz"/);
    // the hint names the example with its path, so it can be opened
    expect(e.hint).toContain(join(import.meta.dirname, '../../.pgx.toml.example'));
    // and each key it means, in the file it means
    expect(e.hint).toMatch(
      new RegExp(
        `^Fix or remove \\[project\\] nmae; \\[agent\\] idle_ttl; \\[guardz\\] in ${join(dir, '.pgx.toml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`,
      ),
    );
  });

  it('an unknown key: its line, and "did you mean" the near one (idle_tl → idle_ttl), or the table it belongs under', () => {
    const dir = project('[project]\nname = "x"\nidle_ttl = "3h"\n[agent]\nidle_tl = "2h"\n[gards]\n');
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(
      /agent: unknown key\(s\) "idle_tl" \(line 5; did you mean "idle_ttl"\?\)/,
    );
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(
      /project: unknown key\(s\) "idle_ttl" \(line 3; it belongs under \[agent\]\)/,
    );
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(
      /\(top level\): unknown key\(s\) "gards" \(line 6; did you mean "guards"\?\)/,
    );
  });

  it('rejects TOML syntax errors saying what is wrong, where, with a hint', () => {
    expect(() => loadConfig({ cwd: project('[project\n'), env: {} })).toThrow(
      /\.pgx\.toml:1:\d+: not valid TOML: illegal character in key\./,
    );
    try {
      loadConfig({ cwd: project('[project]\nname = "a"\n[agent\n'), env: {} });
    } catch (e) {
      expect((e as PgxError).hint).toMatch(/^Fix the syntax at line 3 of \S+\.pgx\.toml \(/);
    }
    expect(() => loadConfig({ cwd: project('[project]\nname = "a"\nname = "b"\n'), env: {} })).toThrow(
      /:3:\d+: not valid TOML: trying to redefine an already defined table or value/,
    );
  });

  it('parses durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration(90)).toBe(90_000);
    expect(() => parseDuration('-1s')).toThrow();
  });
});

describe('.pgx.toml.example', () => {
  it('validates, and every value in it is the default', async () => {
    const { readFileSync } = await import('node:fs');
    const example = readFileSync(join(import.meta.dirname, '../../.pgx.toml.example'), 'utf8');
    const fromExample = loadConfig({ cwd: project(example), env: {} });
    const fromEmpty = loadConfig({ cwd: project(''), env: {} });
    const strip = (c: ReturnType<typeof loadConfig>) => ({ ...c, projectDir: '', file: '', project: '' });
    expect(strip(fromExample)).toEqual(strip(fromEmpty));
  });
});

describe('secrets in config errors', () => {
  it('a TOML syntax error names the position, never the text of the line (it may hold a password)', () => {
    const dir = project('[server]\nurl = "postgresql://admin:S3cretPW@db.example:5432/postgres\n');
    let msg = '';
    try {
      loadConfig({ cwd: dir, env: {} });
    } catch (e) {
      msg = `${(e as PgxError).message} ${(e as PgxError).hint}`;
    }
    expect(msg).toMatch(
      /\.pgx\.toml:2:7: not valid TOML: unterminated string at line 2 col 7 \(no closing " on that line\)/,
    );
    expect(msg).not.toContain('S3cretPW');
  });

  it('an unterminated string says so, where it opened (not "control characters are not allowed")', async () => {
    const { validateConfigText } = await import('../../src/project/config-schema.js');
    const msg = (text: string) => {
      try {
        validateConfigText(text, '/p/.pgx.toml');
        return '';
      } catch (e) {
        return `${(e as PgxError).message}\n${(e as PgxError).hint}`;
      }
    };
    expect(msg('[project]\nname = "shop\nsource = "shop_dev"\n')).toMatch(
      /^\/p\/\.pgx\.toml:2:8: not valid TOML: unterminated string at line 2 col 8 \(no closing " on that line\)\.\nClose the string with "/,
    );
    expect(msg("[agent]\ngrace = '10m\n")).toMatch(/unterminated string at line 2 col 9 \(no closing ' on that line\)/);
    expect(msg('[project]\r\nname = "shop\r\n')).toMatch(/unterminated string at line 2 col 8/);
    expect(msg('[project]\nname = """shop\n')).toMatch(/unterminated string at line 2 col 8 \(no closing """\)/);
    // a real control character inside a closed string is still reported as such
    expect(msg('[project]\nname = "sh\u0001op"\n')).toMatch(/control characters are not allowed in strings/);
    expect(msg('[project]\nname = "shop"\n')).toBe('');
  });

  it('describeError masks credentials in any message', async () => {
    const { describeError, redactSecrets } = await import('../../src/lib/errors.js');
    expect(redactSecrets('connect postgresql://bob:hunter2@h:5/db failed; password=hunter2 x')).toBe(
      'connect postgresql://bob:***@h:5/db failed; password=*** x',
    );
    expect(JSON.stringify(describeError(new Error('url "postgres://u:p4ss@x/y" bad')))).not.toContain('p4ss');
  });
});

/** The CONFIG_INVALID error loadConfig throws for this .pgx.toml (fails the test when it is accepted). */
function refused(toml: string): PgxError {
  try {
    const c = loadConfig({ cwd: project(toml), env: {} });
    throw new Error(
      `accepted: ${JSON.stringify({ guards: c.guards, idle: c.idleTtlMs, grace: c.graceMs, source: c.source })}`,
    );
  } catch (e) {
    if (!(e instanceof PgxError)) throw e;
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.exitCode).toBe(3);
    return e;
  }
}

describe('values PostgreSQL would refuse are refused up front (exit 3, naming the key)', () => {
  it('guards above INT_MAX milliseconds (PostgreSQL would fail every branch with "invalid value")', () => {
    expect(refused('[guards]\nidle_in_transaction_session_timeout = "30d"\n').message).toMatch(
      /guards\.idle_in_transaction_session_timeout: "30d" is too long: at most 2147483647ms/,
    );
    expect(refused('[guards]\nstatement_timeout = "597h"\n').message).toMatch(/guards\.statement_timeout:/);
    expect(refused('[guards]\nclient_connection_check_interval = 2147484\n').message).toMatch(
      /guards\.client_connection_check_interval:/,
    );
    // the largest value PostgreSQL takes is accepted
    expect(
      loadConfig({ cwd: project('[guards]\nstatement_timeout = "2147483647ms"\n'), env: {} }).guards.settings
        .statement_timeout,
    ).toBe(2_147_483_647);
  });

  it('agent timings a deadline cannot hold, NaN/inf, and an idle_ttl under a second', () => {
    expect(refused('[agent]\nidle_ttl = 1e300\n').message).toMatch(/agent\.idle_ttl: 1e\+300 is too long/);
    expect(refused('[agent]\nidle_ttl = "99999999999d"\n').message).toMatch(
      /agent\.idle_ttl: "99999999999d" is too long: at most 36500d/,
    );
    expect(refused('[agent]\ngrace = "9999999999h"\n').message).toMatch(/agent\.grace:/);
    expect(refused('[agent]\nidle_ttl = nan\n').message).toMatch(/agent\.idle_ttl:/);
    expect(refused('[agent]\ngrace = inf\n').message).toMatch(/agent\.grace:/);
    expect(refused('[agent]\nidle_ttl = "0s"\n').message).toMatch(/agent\.idle_ttl: "0s" is too short/);
    expect(loadConfig({ cwd: project('[agent]\nidle_ttl = "36500d"\ngrace = 0\n'), env: {} })).toMatchObject({
      idleTtlMs: 36500 * 86_400_000,
      graceMs: 0,
    });
  });

  it('[project] source naming the registry, a template or the maintenance database', () => {
    for (const name of ['pgx_registry', 'template0', 'template1', 'postgres', 'pgx_tpl_shop_1a2b3c4d']) {
      const e = refused(`[project]\nsource = "${name}"\n`);
      expect(e.message).toContain('project.source:');
      expect(e.message).toContain(`"${name}"`);
      expect(e.message).toMatch(/not application data/);
    }
    expect(loadConfig({ cwd: project('[project]\nsource = "postgres_app"\n'), env: {} }).source).toBe('postgres_app');
  });
});
