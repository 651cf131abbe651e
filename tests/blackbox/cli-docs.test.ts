// docs/pgx/local-dev/cli.md is checked against the CLI itself: every synopsis line's flags exist in that command's
// --help and every flag of --help is in the synopsis (--cwd/--json are covered by the Conventions section), and the
// JSON fields real runs print are all named in that command's section. Plus the skill's env-file example against a
// real SessionStart env file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPath } from '../helpers/client-programs.js';
import { REPO, jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';

const cliMd = readFileSync(join(REPO, 'docs/pgx/local-dev/cli.md'), 'utf8');

/** Synopsis lines: inside fenced blocks without a language, starting with `pgx `. */
const synopses = [...cliMd.matchAll(/```\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1]!.split('\n'))
  .map((l) => l.replace(/\s+#.*$/, '').trim())
  .filter((l) => l.startsWith('pgx '));

function commandPath(line: string): string[] {
  const words: string[] = [];
  for (const w of line.split(/\s+/).slice(1)) {
    if (/^[[(<-]/.test(w) || w.includes('|')) break;
    words.push(w);
  }
  return words;
}

/** `-d, --database <db>` → ['-d', '--database'], per option line of a commander help text. */
function helpOptions(help: string): string[][] {
  const section = help.split(/^Options:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return section
    .split('\n')
    .map((l) => /^\s+((?:-[A-Za-z], )?--?[a-z][a-z-]*)/.exec(l)?.[1])
    .filter((x): x is string => !!x)
    .map((x) => x.split(', '));
}

const env = { PATH: process.env.PATH, HOME: tmpdir() } as NodeJS.ProcessEnv;

describe('cli.md synopses against --help', () => {
  it('finds the synopses', () => {
    expect(synopses.length).toBeGreaterThan(15);
  });
  for (const line of synopses) {
    const path = commandPath(line);
    if (path.join(' ') === 'local psql') continue; // its --help is psql's: every argument goes to psql
    it(`pgx ${path.join(' ')}`, () => {
      const r = runPgx([...path, '--help'], { cwd: tmpdir(), env });
      expect(r.status, r.stderr).toBe(0);
      const documented = [...line.matchAll(/(?<![\w-])(--?[a-z][a-z-]*)/g)].map((m) => m[1]!);
      const opts = helpOptions(r.stdout);
      const known = new Set(opts.flat());
      for (const flag of documented)
        expect(known.has(flag), `${flag} of "${line}" is not in \`pgx ${path.join(' ')} --help\``).toBe(true);
      // the other way: each option of --help is in the synopsis, or at least named in the command's section (a flag
      // kept for older scripts is described there, not advertised in the synopsis)
      const prose = sectionOf(line);
      for (const aliases of opts) {
        if (aliases.some((a) => ['--help', '--version', '--cwd', '--json'].includes(a))) continue;
        expect(
          aliases.some((a) => documented.includes(a) || prose.includes(`\`${a}`)),
          `${aliases.join(', ')} of \`pgx ${path.join(' ')} --help\` is not in cli.md's "${line}"`,
        ).toBe(true);
      }
    });
  }
});

/** The section of cli.md holding a synopsis line. */
function sectionOf(line: string): string {
  const at = cliMd.indexOf(line);
  const start = cliMd.lastIndexOf('\n## ', at);
  const end = cliMd.indexOf('\n## ', at);
  return cliMd.slice(start, end === -1 ? undefined : end);
}

/** A command's section of cli.md: from its `## pgx …` heading to the next heading. */
function section(heading: string): string {
  const start = cliMd.indexOf(`\n## ${heading}`);
  expect(start, `no "## ${heading}" in cli.md`).toBeGreaterThan(-1);
  const end = cliMd.indexOf('\n## ', start + 4);
  return cliMd.slice(start, end === -1 ? undefined : end);
}

/** Every key of a JSON value (objects, arrays of objects, nested), except env var names (checked as words). */
function keysOf(v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => keysOf(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.add(k);
      keysOf(x, out);
    }
  }
  return out;
}

function expectDocumented(heading: string, value: unknown): void {
  const text = section(heading);
  const named = new Set(
    [
      ...text.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"/g),
      ...text.matchAll(/\b([A-Z][A-Z0-9_]{2,})\b/g),
      ...text.matchAll(/[{,]\s*([a-z_]+)[?]?\s*[,}]/g),
    ].map((m) => m[1]!),
  );
  const missing = [...keysOf(value)].filter((k) => !named.has(k));
  expect(missing, `JSON field(s) of "${heading}" not in cli.md: ${missing.join(', ')}`).toEqual([]);
}

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('the exit-code table', () => {
  it('is in `pgx --help` only, as in cli.md; every other help points to it', () => {
    const top = runPgx(['--help'], { cwd: tmpdir(), env });
    expect(top.status).toBe(0);
    const table = cliMd.split('## Exit codes')[1]!.split('\n## ')[0]!;
    const codes = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => m[1]!).filter((c) => !['126', '127'].includes(c)); // those two are a line of 125's
    for (const code of codes) expect(top.stdout, code).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
    for (const path of [['agent'], ['agent', 'ls'], ['agent', 'install'], ['local', 'up'], ['source', 'sync']]) {
      const r = runPgx([...path, '--help'], { cwd: tmpdir(), env });
      expect(r.status).toBe(0);
      expect(r.stdout, path.join(' ')).not.toMatch(/^  8 +doctor/m);
      expect(r.stdout, path.join(' ')).toContain('Exit codes: `pgx --help` lists them');
    }
  });
});

describe('cli.md JSON fields against real output', () => {
  it('init, agent up/exec/ls/down/gc, template refresh/ls/drop, doctor, source import, local status', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'pgx-docs-'));
    cleanup.push(fresh);
    writeFileSync(join(fresh, '.env'), 'DATABASE_URL=postgresql://me@localhost:5432/app_dev\n');
    writeFileSync(join(fresh, 'package.json'), '{}\n');
    expectDocumented('pgx init', jsonOf(runPgx(['init', '--json'], { cwd: fresh, env })));

    const p = makeProject();
    const up = jsonOf(runPgx(['agent', 'up', '--id', 'docs', '--json'], p));
    expectDocumented('pgx agent up', up);
    const exec = runPgx(['agent', 'exec', '--id', 'docs', '--json', '--', 'true'], p);
    expectDocumented('pgx agent exec', JSON.parse(exec.stderr.trim().split('\n').pop()!));
    expectDocumented('pgx agent diff', jsonOf(runPgx(['agent', 'diff', '--id', 'docs', '--json'], p)));
    // a subagent's branch, stopped: its change summary is in ls
    const hookEnv = { ...p, env: { ...p.env, CLAUDE_PROJECT_DIR: p.dir } };
    const sub = {
      session_id: 'docs-diff-session',
      agent_id: 'adocsdiffagent0001',
      agent_type: 'general-purpose',
      cwd: p.dir,
      transcript_path: join(p.dir, 't.jsonl'),
    };
    expect(
      runPgx(['agent', 'hook', 'subagent-start'], {
        ...hookEnv,
        input: JSON.stringify({ ...sub, hook_event_name: 'SubagentStart' }),
      }).status,
    ).toBe(0);
    expect(
      runPgx(['agent', 'hook', 'subagent-stop'], {
        ...hookEnv,
        input: JSON.stringify({ ...sub, hook_event_name: 'SubagentStop', stop_hook_active: false }),
      }).status,
    ).toBe(0);
    const { pool, ...ls } = jsonOf(runPgx(['agent', 'ls', '--json'], p));
    expect(ls.branches.find((b: { agent_id: string | null }) => b.agent_id === sub.agent_id)?.changes?.changed).toBe(
      false,
    );
    expectDocumented('pgx agent ls', ls);
    expectDocumented('pgx agent pool', pool); // "JSON adds "pool", the object `agent pool status --json` prints"
    expect(pool).toEqual({
      ...jsonOf(runPgx(['agent', 'pool', 'status', '--json'], p)),
      oldest_ready_at: pool.oldest_ready_at,
    });
    expectDocumented('pgx agent pool', jsonOf(runPgx(['agent', 'pool', 'fill', '--json'], p)));
    expectDocumented('pgx agent pool', jsonOf(runPgx(['agent', 'pool', 'drain', '--json'], p)));
    const brokerEnv = {
      ...p,
      env: { ...p.env, PGX_BROKER: '1', XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'pgx-docs-run-')) },
    };
    expectDocumented('pgx agent broker', jsonOf(runPgx(['agent', 'broker', 'start', '--json'], brokerEnv)));
    expectDocumented('pgx agent broker', jsonOf(runPgx(['agent', 'broker', 'status', '--json'], brokerEnv)));
    expectDocumented('pgx agent broker', jsonOf(runPgx(['agent', 'broker', 'stop', '--json'], brokerEnv)));
    expectDocumented(
      'pgx agent reset',
      jsonOf(runPgx(['agent', 'reset', '--id', 'docs', '--to', 'template', '--json'], p)),
    );
    expect(runPgx(['agent', 'up', '--session', 'docs-s'], p).status).toBe(0);
    expectDocumented(
      'pgx agent up',
      jsonOf(runPgx(['agent', 'up', '--agent', 'docs-a', '--session', 'docs-s', '--json'], p)),
    ); // a fork
    expectDocumented('pgx agent adopt', jsonOf(runPgx(['agent', 'adopt', '--agent', 'docs-a', '--json'], p)));
    expect(runPgx(['agent', 'up', '--id', 'docs2'], p).status).toBe(0);
    expectDocumented('pgx agent down', jsonOf(runPgx(['agent', 'down', '--id', 'docs2', '--json'], p)));
    // Server-wide: it also drops what earlier files left past its deadline on the shared test server (slow under load).
    expectDocumented('pgx agent gc', jsonOf(runPgx(['agent', 'gc', '--json'], { ...p, timeout: 180_000 })));
    expectDocumented('pgx template refresh', jsonOf(runPgx(['template', 'refresh', '--json'], p)));
    expectDocumented('pgx template ls | drop', jsonOf(runPgx(['template', 'ls', '--json'], p)));
    expectDocumented('pgx agent doctor', jsonOf(runPgx(['agent', 'doctor', '--json'], p)));
    // The origin: a plain SQL dump where psql can restore it; else (a machine with no psql, issue 39) a database on the
    // test server named by a URL in the environment, which the Node copy reads.
    const dump = join(p.dir, 'docs_src.sql');
    writeFileSync(dump, 'CREATE TABLE t (id int);\n');
    const origin = `docs_origin_${p.name}`;
    const i = pgInfo();
    const fromUrl = { ORIGIN_URL: `postgresql://${i.user}@${i.host}:${i.port}/${origin}`, PGPASSWORD: i.password };
    if (!onPath('psql')) await sql(`CREATE DATABASE ${origin}`).then(() => sql('CREATE TABLE t (id int)', [], origin));
    const from = onPath('psql') ? ['--from', dump] : ['--from-env', 'ORIGIN_URL'];
    const withOrigin = (x: typeof p) => ({ ...x, env: { ...x.env, ...fromUrl } });
    expectDocumented(
      'pgx source import',
      jsonOf(runPgx(['source', 'import', ...from, '--into', `docs_${p.name}`, '--json'], withOrigin(p))),
    );
    expectDocumented('pgx template ls | drop', jsonOf(runPgx(['template', 'drop', '--json'], p)));
    // sync: a project whose source is a copy of that origin (remembered at the import, re-read by the sync)
    const q = makeProject({ source: `docs_sync_${p.name}` });
    cleanup.push(q.dir);
    expect(runPgx(['source', 'import', ...from, '--no-template', '--json'], withOrigin(q)).status).toBe(0);
    expectDocumented('pgx source sync', jsonOf(runPgx(['source', 'sync', '--json'], withOrigin(q))));
    if (!onPath('psql')) await sql(`DROP DATABASE ${origin}`);
    expectDocumented('pgx source scan', jsonOf(runPgx(['source', 'scan', '--json'], q)));
    expectDocumented('pgx template ls | drop', jsonOf(runPgx(['template', 'drop', '--json'], q)));
    expectDocumented('pgx local up | down | status', jsonOf(runPgx(['local', 'status', '--json'], p)));
  }, 300_000); // many processes in a row: slow on a loaded machine

  it('agent install / uninstall codex', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgx-docs-codex-'));
    cleanup.push(dir);
    writeFileSync(join(dir, 'package.json'), '{}\n');
    const codexEnv = { ...env, CODEX_HOME: join(dir, 'codex-home') };
    for (const scope of ['user', 'project']) {
      expectDocumented(
        'pgx agent install codex / pgx agent uninstall codex',
        jsonOf(runPgx(['agent', 'install', 'codex', '--scope', scope, '--json'], { cwd: dir, env: codexEnv })),
      );
      expectDocumented(
        'pgx agent install codex / pgx agent uninstall codex',
        jsonOf(runPgx(['agent', 'uninstall', 'codex', '--scope', scope, '--json'], { cwd: dir, env: codexEnv })),
      );
    }
  });

  it('local url, env, down --purge (on a local server)', () => {
    const p = makeProject();
    delete p.env.PGX_DATABASE_URL;
    try {
      expectDocumented('pgx local up | down | status', jsonOf(runPgx(['local', 'url', '--json'], p)));
      expectDocumented('pgx local up | down | status', jsonOf(runPgx(['local', 'env', '--json'], p)));
      expectDocumented('pgx local up | down | status', jsonOf(runPgx(['local', 'up', '--json'], p)));
    } finally {
      const purged = jsonOf(runPgx(['local', 'down', '--purge', '--yes', '--json'], p));
      expectDocumented('pgx local up | down | status', purged);
    }
  }, 300_000);
});

describe("the skill's env-file example", () => {
  it('names the variables a real SessionStart env file sets and unsets, in order', () => {
    const p = makeProject();
    const envFile = join(p.dir, 'claude-env.sh');
    writeFileSync(envFile, '');
    const payload = JSON.stringify({
      session_id: 'docs-env-file-session',
      cwd: p.dir,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    const r = runPgx(['agent', 'hook', 'session-start'], {
      ...p,
      env: { ...p.env, CLAUDE_ENV_FILE: envFile, CLAUDE_PROJECT_DIR: p.dir },
      input: payload,
    });
    expect(r.status, r.stderr).toBe(0);
    const shape = (text: string) =>
      text
        .split('\n')
        .map((l) => l.replace(/\s+#.*$/, '').trim())
        .filter((l) => /^(unset|export) /.test(l))
        .map((l) => (l.startsWith('unset') ? l : l.replace(/=.*$/, '')));
    const real = shape(readFileSync(envFile, 'utf8'));
    const doc = readFileSync(join(REPO, 'skill/references/claude-code.md'), 'utf8');
    const block = /The main session[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)![1]!;
    // the test server has no sslmode in its URL, so no PGSSLMODE line (the example marks it conditional)
    expect(real).toEqual(shape(block).filter((l) => l !== 'export PGSSLMODE'));
    expect(dirname(envFile)).toBe(p.dir);
  });
});
