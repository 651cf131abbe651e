import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx, sql } from '../helpers/pgx.js';
import { withPsql } from '../helpers/psql-stand-in.js';

describe('agent exec', () => {
  it('isolates two exec ids: a table made in one is absent in the other', () => {
    const p = makeProject();
    const a = runPgx(
      ['agent', 'exec', '--id', 'a', '--keep', '--', 'psql', '-X', '-q', '-c', 'create table only_a(x int)'],
      p,
    );
    expect(a.status, a.stderr).toBe(0);
    const b = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'b',
        '--keep',
        '--',
        'psql',
        '-X',
        '-Atc',
        "select count(*) from pg_tables where tablename = 'only_a'",
      ],
      p,
    );
    expect(b.status, b.stderr).toBe(0);
    expect(b.stdout.trim()).toBe('0');
    const a2 = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'a',
        '--',
        'psql',
        '-X',
        '-Atc',
        "select current_database() || ' ' || count(*) from pg_tables where tablename = 'only_a'",
      ],
      p,
    );
    expect(a2.stdout.trim()).toBe(`exec_${p.host}_a 1`);
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
    expect(r1).toMatchObject({ id: 'k', branch: `exec_${p.host}_k`, fresh: true, method: 'clone', status: 0 });
    const second = runPgx(['agent', 'exec', '--id', 'k', '--keep', '--json', '--', 'true'], p);
    const r2 = JSON.parse(second.stderr.trim().split('\n').pop()!);
    expect(r2).toMatchObject({ branch: `exec_${p.host}_k`, fresh: false, method: 'attach' });
    const ls = jsonOf(runPgx(['agent', 'ls', '--json'], p));
    expect(ls.branches.map((b: any) => [b.name, b.state])).toEqual([[`exec_${p.host}_k`, 'active']]);
    expect((await sql('select 1 from pg_database where datname = $1', [`exec_${p.host}_k`])).length).toBe(1);
  });
});

describe('agent exec process plumbing', () => {
  it('forwards SIGTERM to the child and exits 128+15; stdin flows through', async () => {
    const { spawn } = await import('node:child_process');
    const { LAUNCHER } = await import('../helpers/pgx.js');
    const p = makeProject();
    const piped = runPgx(['agent', 'exec', '--id', 'io', '--', 'sh', '-c', 'tr a-z A-Z'], {
      ...p,
      input: 'hello through pgx\n',
    });
    expect(piped.stdout).toBe('HELLO THROUGH PGX\n');
    const child = spawn(
      process.execPath,
      [
        LAUNCHER,
        'agent',
        'exec',
        '--id',
        'sig',
        '--',
        'sh',
        '-c',
        'trap "echo got-term; exit 143" TERM; echo ready; while :; do sleep 0.1; done',
      ],
      { cwd: p.cwd, env: p.env },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await new Promise<void>((res) => {
      const t = setInterval(() => out.includes('ready') && (clearInterval(t), res()), 20);
    });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    expect(out).toContain('got-term');
    expect(code).toBe(143);
  });

  it('removes decoy libpq variables: DATABASE_URL, PGSERVICE, PGOPTIONS cannot redirect or unguard the command', () => {
    const p = makeProject();
    const env = {
      ...p.env,
      DATABASE_URL: 'postgresql://decoy@127.0.0.1:1/source',
      PGSERVICE: 'decoy',
      PGDATABASE: 'postgres',
      PGOPTIONS: '-c statement_timeout=0',
    };
    const r = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'decoy',
        '--',
        'sh',
        '-c',
        'psql -X -Atc "select current_database(), current_setting(\'statement_timeout\')" && psql "$DATABASE_URL" -X -Atc "select current_database()"; echo "service=${PGSERVICE-unset}"',
      ],
      { ...p, env },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([`exec_${p.host}_decoy|1h`, `exec_${p.host}_decoy`, 'service=unset']);
  });

  it('the URL aliases platforms and ORMs read (POSTGRES_URL, POSTGRES_PRISMA_URL, …) point at the branch; split ones are cleared', () => {
    const p = makeProject();
    const decoy = 'postgresql://decoy@127.0.0.1:1/source';
    const aliases = [
      'POSTGRES_URL',
      'POSTGRES_PRISMA_URL',
      'POSTGRES_URL_NON_POOLING',
      'POSTGRES_URL_NO_SSL',
      'DATABASE_URL_UNPOOLED',
      'DATABASE_PRIVATE_URL',
      'DIRECT_URL',
    ];
    const split = [
      'POSTGRES_HOST',
      'POSTGRES_PORT',
      'POSTGRES_USER',
      'POSTGRES_PASSWORD',
      'POSTGRES_DATABASE',
      'POSTGRES_DB',
    ];
    const env = {
      ...p.env,
      ...Object.fromEntries(aliases.map((k) => [k, decoy])),
      ...Object.fromEntries(split.map((k) => [k, 'decoy'])),
      PGOPTIONS: '-c statement_timeout=0',
    };
    // every alias is USED (psql connects with it), not just printed
    const script = [
      ...aliases.map(
        (k) =>
          `psql "$${k}" -X -Atc "select '${k}=' || current_database() || ':' || current_setting('statement_timeout')"`,
      ),
      ...split.map((k) => `echo "${k}=\${${k}-unset}"`),
    ].join('; ');
    const r = runPgx(['agent', 'exec', '--id', 'alias', '--', 'sh', '-c', script], { ...p, env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      ...aliases.map((k) => `${k}=exec_${p.host}_alias:1h`),
      ...split.map((k) => `${k}=unset`),
    ]);
  });

  it("a command that cannot start exits 127 (not found) or 126 (not executable), as a shell's would; 2 on usage errors", () => {
    const p = makeProject();
    const r = runPgx(['agent', 'exec', '--id', 'nf', '--', 'definitely-not-a-command-xyz'], p);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('pgx: definitely-not-a-command-xyz: command not found');
    // the throwaway --id branch made for it is retired all the same (as for a command that ran)
    const ls = jsonOf(runPgx(['agent', 'ls', '--json'], p)).branches;
    expect(ls.find((b: { id: string }) => b.id === 'nf')).toMatchObject({ state: 'retiring' });
    const dir = runPgx(['agent', 'exec', '--id', 'nf', '--', '/'], p);
    expect(dir.status).toBe(126);
    expect(runPgx(['agent', 'exec', '--', 'true'], p).status).toBe(2);
    expect(runPgx(['agent', 'exec', '--agent', 'a', '--id', 'b', '--', 'true'], p).status).toBe(2);
  });
});

describe('CLI parse errors', () => {
  it('exit 2 (usage), not 1, for an unknown option or a bad hook event; help exits 0', () => {
    const p = makeProject();
    expect(runPgx(['agent', 'ls', '--bogus'], p).status).toBe(2);
    expect(runPgx(['agent', 'hook', 'nope'], p).status).toBe(2);
    expect(runPgx(['agent', 'frobnicate'], p).status).toBe(2);
    expect(runPgx(['--help'], p).status).toBe(0);
  });

  it('with --json a parse error is the JSON error object (stdout; stderr for agent exec), exit 2', () => {
    const p = makeProject();
    const r = runPgx(['agent', 'ls', '--json', '--bogus'], p);
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'USAGE',
      message: "Unknown option '--bogus'",
      hint: 'See `pgx agent ls --help`.',
    });
    expect(r.stderr).toBe('');
    const missing = runPgx(['init', '--json', '--name'], p);
    expect(missing.status).toBe(2);
    expect(JSON.parse(missing.stdout).error.message).toMatch(/argument missing/);
    const exec = runPgx(['agent', 'exec', '--json', '--bogus', '--', 'true'], p);
    expect(exec.status).toBe(2);
    expect(exec.stdout).toBe('');
    expect(JSON.parse(exec.stderr).error.code).toBe('USAGE');
    // a --json after -- belongs to the command, not to pgx: the error stays text
    expect(runPgx(['agent', 'ls', '--bogus', '--', '--json'], p).stdout).toBe('');
  });
});

describe('agent exec routing cannot be undone by the shell', () => {
  it("a user's BASH_ENV that exports PGDATABASE / DATABASE_URL is still sourced, but the branch wins (nested bash too)", async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const p = makeProject();
    const userEnv = join(p.dir, 'bash_env.sh');
    writeFileSync(
      userEnv,
      'export PGDATABASE=postgres\nexport DATABASE_URL=postgresql://decoy@127.0.0.1:1/postgres\nexport PGSERVICE=decoy\nexport MY_TOOL_READY=yes\n',
    );
    const cmd =
      'echo "$MY_TOOL_READY"; psql -X -Atc "select current_database()"; psql "$DATABASE_URL" -X -Atc "select current_database()"; bash -c \'psql -X -Atc "select 2"\'';
    const { spawnSync } = await import('node:child_process');
    const { LAUNCHER } = await import('../helpers/pgx.js');
    // stdin from /dev/null, as Claude Code runs Bash: with a pipe on stdin bash may take itself for an rsh shell and skip BASH_ENV
    const r = spawnSync(process.execPath, [LAUNCHER, 'agent', 'exec', '--id', 'bashenv', '--', 'bash', '-c', cmd], {
      cwd: p.cwd,
      env: withPsql({ ...p.env, BASH_ENV: userEnv }), // the stand-in where there is no psql (decision 513)
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['yes', `exec_${p.host}_bashenv`, `exec_${p.host}_bashenv`, '2']);
    // control: without pgx the same BASH_ENV does redirect psql (so the test can fail)
    const ctl = spawnSync('bash', ['-c', 'echo "$PGDATABASE"'], {
      env: { PATH: process.env.PATH, BASH_ENV: userEnv },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(ctl.stdout.trim()).toBe('postgres');
  });

  it('--agent without a session refuses when that agent id has branches in two sessions', () => {
    const p = makeProject();
    for (const s of ['11111111-aaaa-4000-8000-000000000001', '22222222-bbbb-4000-8000-000000000002']) {
      expect(runPgx(['agent', 'up', '--agent', 'a0123456789abcdef', '--session', s, '--json'], p).status).toBe(0);
    }
    const r = runPgx(['agent', 'exec', '--agent', 'a0123456789abcdef', '--', 'true'], p);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/branches in 2 sessions/);
    const ok = runPgx(
      ['agent', 'exec', '--agent', 'a0123456789abcdef', '--', 'psql', '-X', '-Atc', 'select current_database()'],
      { ...p, env: { ...p.env, CLAUDE_CODE_SESSION_ID: '22222222-bbbb-4000-8000-000000000002' } },
    );
    expect(ok.stdout.trim()).toBe(`agent_${p.host}_22222222_a0123456`);
  });
});

describe('flag validation', () => {
  it('gc --limit takes a whole number (exit 2 otherwise); --id with --session is refused', () => {
    const p = makeProject();
    expect(runPgx(['agent', 'gc', '--limit', 'abc'], p).status).toBe(2);
    expect(runPgx(['agent', 'gc', '--limit', '-1'], p).status).toBe(2);
    expect(runPgx(['agent', 'gc', '--limit', '5', '--json'], p).status).toBe(0);
    expect(runPgx(['agent', 'exec', '--id', 'x', '--session', 's', '--', 'true'], p).status).toBe(2);
  });
});

describe('zsh as the inner shell', () => {
  const zsh = ['/usr/bin/zsh', '/bin/zsh'].find((z) => require('node:fs').existsSync(z));
  it.skipIf(!zsh)("a user's ~/.zshenv that exports PGDATABASE is still read, but the branch wins", async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const p = makeProject();
    writeFileSync(join(p.env.HOME!, '.zshenv'), 'export PGDATABASE=postgres\nexport MY_ZSH_READY=yes\n');
    const r = runPgx(
      [
        'agent',
        'exec',
        '--id',
        'zsh',
        '--',
        zsh!,
        '-c',
        'echo $MY_ZSH_READY; psql -X -Atc "select current_database()"',
      ],
      p,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['yes', `exec_${p.host}_zsh`]);
    const ctl = require('node:child_process').spawnSync(zsh!, ['-c', 'echo $PGDATABASE'], {
      env: { PATH: process.env.PATH, HOME: p.env.HOME },
      encoding: 'utf8',
    });
    expect(ctl.stdout.trim()).toBe('postgres'); // without pgx the .zshenv would redirect it
  });
});
