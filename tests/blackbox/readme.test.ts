// The README's shell blocks run as written: the first screen's two commands (the demo on the embedded default;
// the tests — this suite itself, so only its text is checked), the install block (run by package-install.test.ts,
// which reads it from here: installBlock) and the "in your project" block.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, REPO, jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';
import { installBlock, readme, shBlocks } from '../helpers/readme.js';
import { lacking } from '../helpers/client-programs.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));

describe('README', () => {
  it('first screen: the demo command and the test command', () => {
    expect(shBlocks[0]).toEqual(['npm ci && npm run demo', 'npm test']);
    expect(readme.indexOf('npm run demo')).toBeLessThan(readme.indexOf('pgx agent install claude'));
  });

  it('then the install block: the one package-install.test.ts runs as an ordinary user, naming the real tarball', () => {
    const tarball = `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
    expect(shBlocks[1]).toBe(installBlock());
    expect(installBlock()).toEqual(['npm ci && npm pack', `npm install -g --prefix ~/.local ./${tarball}`]);
    // the first install path in the README: nothing before it installs pgx (the published name comes after, marked)
    const first = readme.indexOf('```sh\nnpm ci && npm pack');
    expect(readme.slice(0, first)).not.toMatch(/npm install -g|npx -p/);
    expect(readme.slice(first)).toMatch(
      /Once published \(not yet: the name answers E404 today\), the\s+install will be `npm install -g --prefix ~\/\.local @pgx-agent\/cli`/,
    );
    expect(readme).not.toMatch(/works offline/);
  });

  it('`npm run demo` (twice) tells the story in a PGX_HOME and temp dir of its own, and leaves nothing: no server, file, socket directory or process (decision 422)', () => {
    const home = mkdtempSync(join(tmpdir(), 'pgx-demo-home-'));
    // TMPDIR: the file's temp dir (tests/helpers/file-hygiene.ts), where the hooks' broker puts its socket directory.
    const env = { PATH: process.env.PATH, HOME: home, PGX_HOME: join(home, '.pgx'), TMPDIR: tmpdir() };
    const pgx = (...args: string[]) => execFileSync(process.execPath, [LAUNCHER, ...args], { env, encoding: 'utf8' });
    try {
      for (let run = 0; run < 2; run++) {
        const r = spawnSync('npm', ['run', 'demo'], { cwd: REPO, env, encoding: 'utf8', timeout: 240_000 });
        expect(r.status, r.stderr + r.stdout).toBe(0);
        expect(r.stderr).toMatch(/initialising the local PostgreSQL/); // its own server, each run: progress on its start
        expect(r.stderr).not.toMatch(/install-scripts|npm warn/);
        // piped: no colour codes, no job-control noise ("line N: … Killed"); each branch labelled by how it was made,
        // in the same order as the summary's "(clone / claim / …)"
        expect(r.stdout + r.stderr).not.toMatch(/\u001b\[|Killed|line \d+:/);
        const labels = [
          ...r.stdout.matchAll(
            /^# SubagentStart \S+ → its own branch, (cloned from the template now|claimed from the warm pool)/gm,
          ),
        ].map((m) => (m[1]!.startsWith('cloned') ? 'clone' : 'claim'));
        expect(labels.length).toBe(3);
        expect(r.stdout).toContain(`(${labels.join(' / ')};`);
        // two conflicting migrations (plan text vs plan integer): each agent sees only its own; the source neither
        expect(r.stdout).toMatch(/_a1billin: id integer, email text, plan text\n/);
        expect(r.stdout).toMatch(/_a2reward: id integer, email text, plan integer\n/);
        expect(r.stdout).toMatch(/# the source is untouched\S*\ndemo_src_\d+: id integer, email text\n/);
        expect(r.stdout).toMatch(/^0 rows committed by the killed agent$/m);
        expect(r.stdout.match(/^agent_\S+ .*retiring\s+in (\d+h )?\d+m/gm)?.length).toBe(3); // changed: kept 24h (keep_changed)
        expect(r.stdout).toMatch(/^3 branches made, \d+ \/ \d+ \/ \d+ ms each/m);
        expect(r.stdout).toMatch(/^3 of 3 retired at SubagentStop/m);
        const folder = /its PGX_HOME and (\S+) are deleted on exit/.exec(r.stdout)?.[1];
        expect(folder).toMatch(/pgx-demo-/);
        expect(existsSync(folder!)).toBe(false); // its PGX_HOME (hook log, handoffs), its server's state, its socket directory
        // as root its server's data lived under /var/lib/pgx, named after its PGX_HOME: gone too
        expect(
          existsSync(
            join(
              '/var/lib/pgx',
              `local-${createHash('sha256').update(join(folder!, 'pgx-home')).digest('hex').slice(0, 10)}`,
            ),
          ),
        ).toBe(false);
      }
      // nothing of the caller's was touched or made: no ~/.pgx, no server, no socket directory in its temp dir
      expect(existsSync(join(home, '.pgx'))).toBe(false);
      expect(JSON.parse(pgx('local', 'status', '--json')).initialized).toBe(false);
      expect(readdirSync(tmpdir()).filter((f) => /^pgx-\d+$/.test(f))).toEqual([]);
    } finally {
      spawnSync(process.execPath, [LAUNCHER, 'local', 'down', '--purge', '--yes'], { env });
      rmSync(home, { recursive: true, force: true });
    }
  }, 600_000);

  it('names every Claude Code version pgx is verified on: the pinned and the newest of scripts/install-claude-code.sh, as the built-in list', async () => {
    const script = readFileSync(join(REPO, 'scripts/install-claude-code.sh'), 'utf8');
    const pinned = /^PINNED="([\d.]+)"/m.exec(script)![1]!;
    const newest = /^NEWEST="([\d.]+)"/m.exec(script)![1]!;
    const { VERIFIED_CLAUDE_CODE_VERSIONS } = await import('../../src/hooks/claude/claude-version.js');
    expect([...VERIFIED_CLAUDE_CODE_VERSIONS]).toEqual(expect.arrayContaining([pinned, newest]));
    const verified = readme.split('\n').findIndex((l) => /Verified on Claude Code/.test(l));
    const sentence = readme
      .split('\n')
      .slice(verified, verified + 3)
      .join(' ')
      .replace(/\s+/g, ' ');
    expect(sentence).toContain(`${pinned} (the pinned version)`);
    expect(sentence).toContain(`${newest} (the newest)`);
  });

  it("after the README's setup steps (a .env's DATABASE_URL imported, install, doctor) the doctor says the setup is done; each warning left is the user's choice", async () => {
    const origin = `origin_${Math.random().toString(36).slice(2, 8)}`;
    const copy = `copy_${origin}`;
    await sql(`CREATE DATABASE ${origin}`);
    await sql('CREATE TABLE users (id int PRIMARY KEY, email text)', [], origin);
    const p = makeProject({ source: copy });
    execFileSync('git', ['init', '-q'], { cwd: p.dir });
    delete p.env.PGX_POOL; // the README's default: a warm pool of 4
    const bin = join(p.dir, 'bin');
    mkdirSync(bin);
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}` };
    const info = pgInfo();
    writeFileSync(
      join(p.dir, '.env'),
      `DATABASE_URL=postgresql://${info.user}:${encodeURIComponent(info.password)}@${info.host}:${info.port}/${origin}\n`,
    );
    // what `npm run demo` leaves in the same pgx home: another project's background fill
    mkdirSync(join(p.home, 'agent'), { recursive: true });
    writeFileSync(
      join(p.home, 'agent', 'pool-fill.log'),
      JSON.stringify({
        time: new Date().toISOString(),
        pid: 1,
        project: 'demo',
        outcome: 'filled',
        ready: 3,
        target: 3,
      }) +
        '\n' +
        JSON.stringify({
          time: new Date().toISOString(),
          pid: 2,
          outcome: 'error',
          error: 'an older pgx, no project',
        }) +
        '\n',
    );
    // users.email looks personal: `pgx source scan` (the README's masking block) prints the rule, pasted as it says
    const scan = spawnSync('bash', ['-c', 'pgx source scan --from-env DATABASE_URL'], {
      cwd: p.dir,
      env,
      encoding: 'utf8',
    });
    expect(scan.stdout + scan.stderr).toContain('"public.users.email" = "email"');
    appendFileSync(join(p.dir, '.pgx.toml'), '\n[mask]\n"public.users.email" = "email"\n');
    try {
      for (const line of ['pgx source import --from-env DATABASE_URL', 'pgx agent install claude']) {
        const r = spawnSync('bash', ['-c', line], { cwd: p.dir, env, encoding: 'utf8' });
        expect(r.status, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
      }
      const text = spawnSync('bash', ['-c', 'pgx agent doctor'], { cwd: p.dir, env, encoding: 'utf8' });
      expect(text.status, text.stdout).toBe(0);
      const lines = text.stdout.trim().split('\n');
      // roles is server-wide: another test file's branch role left on this shared server (roles.test.ts plants one on
      // purpose) is a third warning that is not this setup's; any other warning fails the test
      const strayRoles = lines.some((l) => /^warn\s+roles\s.*left without a branch/.test(l));
      // With no psql or pg_dump on the machine (issue 39) the doctor's client-tools check is a third choice: it says
      // what works without them and how to get them (decision 488).
      const choices = [...(lacking(['psql', 'pg_dump']).length ? ['client-tools'] : []), 'permissions', 'env-files'];
      const n = choices.length;
      const ok = /(\d+) ok/.exec(lines.at(-1)!)?.[1];
      const said = `${n} warnings are choices only you can make: ${choices.join(', ')} (→ your call)`;
      if (strayRoles)
        expect(lines.at(-1)).toBe(
          `0 fail, ${n + 1} warn, ${ok} ok (of the warnings, ${choices.join(', ')} are choices only you can make)`,
        );
      else expect(lines.at(-1)).toBe(`setup done (0 fail, ${n} warn, ${ok} ok); ${said}`);
      for (const l of lines.filter((x) => x.startsWith('warn') && !/^warn\s+roles\s/.test(x)))
        expect(l).toContain('→ your call: ');
      const j = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env }));
      expect(j.setup_done).toBe(!strayRoles);
      const byName = Object.fromEntries(j.checks.map((c: { name: string }) => [c.name, c]));
      expect(byName.pool).toMatchObject({ status: 'ok' }); // not filled yet, and the demo's fill is not this project's
      // the .env pgx imported from is named for what it is: the real dev database, the origin of pgx's copy
      expect(byName['env-files'].detail).toContain(
        `sets DATABASE_URL (database "${origin}": your real dev database, which \`pgx source import\` copied into pgx's server as the source "${copy}")`,
      );
      expect(byName['env-files'].detail).not.toContain('the SOURCE');
      expect(byName['env-files'].detail).not.toContain(info.password);
      expect(byName['env-files']).toMatchObject({ status: 'warn', decide: true });
      expect(byName.permissions).toMatchObject({ status: 'warn', decide: true });
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${origin} WITH (FORCE)`);
      rmSync(p.dir, { recursive: true, force: true });
    }
  });

  it('the "in your project" block runs as written', () => {
    const block = shBlocks[2]!;
    expect(block).toEqual(['pgx agent install claude', 'pgx agent doctor']);
    const p = makeProject();
    const bin = mkdtempSync(join(tmpdir(), 'pgx-bin-'));
    mkdirSync(bin, { recursive: true });
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    for (const line of block) {
      const r = spawnSync('bash', ['-c', line], {
        cwd: p.cwd,
        env: { ...p.env, PATH: `${bin}:${process.env.PATH}` },
        encoding: 'utf8',
      });
      expect(r.status, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
    }
    const text = readFileSync(join(p.cwd, '.claude', 'settings.json'), 'utf8');
    const settings = JSON.parse(text);
    expect(Object.keys(settings.hooks).sort()).toEqual([
      'PreToolUse',
      'SessionEnd',
      'SessionStart',
      'SubagentStart',
      'SubagentStop',
      'UserPromptSubmit',
    ]);
    expect(settings.permissions).toBeUndefined();
    for (const machinePath of [realpathSync(LAUNCHER), bin, p.cwd]) expect(text).not.toContain(machinePath); // "commit it"
    const local = JSON.parse(readFileSync(join(p.cwd, '.claude', 'settings.local.json'), 'utf8'));
    expect(local.permissions.allow).toEqual([
      `Bash(${realpathSync(LAUNCHER)} agent exec --agent * --cwd ${p.cwd} -- *)`,
      'Bash(exit)',
    ]);
    expect(
      jsonOf(runPgx(['agent', 'doctor', '--json'], { ...p, env: { ...p.env, PATH: `${bin}:${process.env.PATH}` } })).ok,
    ).toBe(true);
    for (const d of [p.dir, bin]) rmSync(d, { recursive: true, force: true });
  });
});
