// `pgx agent install claude --transport http` at the CLI edge (decisions 221, 222, 223): PreToolUse, SubagentStart
// and SubagentStop become HTTP entries to the user's broker, in a per-machine file only (settings.local.json, 0600,
// kept out of git; or the user's own file), with the secret in its `env`; the one PreToolUse rewriter is the HTTP
// entry, never beside the command one; the keepers (plain sh) start a dead broker again. The secret never reaches
// the shared settings.json, stdout or --json. Switching transports keeps exactly one rewriter and the user's own
// entries; uninstall takes out exactly pgx's. The keepers are run here as Claude Code runs them (sh -c).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session } from '../helpers/hook-payloads.js';
import { pollUntil } from '../helpers/hooks.js';

const dirs: string[] = [];
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Handler = { type: string; command?: string; url?: string; headers?: Record<string, string>; allowedEnvVars?: string[]; timeout?: number; onFailure?: string; async?: boolean };
type Settings = { hooks?: Record<string, { matcher?: string; hooks: Handler[] }[]>; env?: Record<string, string>; permissions?: unknown; [k: string]: unknown };

/** A git clone of a pgx project with its own broker directory (XDG_RUNTIME_DIR), so http.json is the test's. */
function project() {
  const p = makeProject();
  dirs.push(p.dir);
  execFileSync('git', ['init', '-q'], { cwd: p.dir });
  const runtime = join(p.dir, '.run');
  mkdirSync(runtime, { mode: 0o700 });
  return { ...p, env: { ...p.env, XDG_RUNTIME_DIR: runtime } as NodeJS.ProcessEnv, stateFile: join(runtime, 'pgx', 'http.json') };
}
type P = ReturnType<typeof project>;

const install = (p: P, ...args: string[]) => runPgx(['agent', 'install', 'claude', '--no-verify', ...args], p);
const read = (file: string): Settings => JSON.parse(readFileSync(file, 'utf8'));
const shared = (p: P) => join(p.dir, '.claude', 'settings.json');
const local = (p: P) => join(p.dir, '.claude', 'settings.local.json');
const state = (p: P): { port: number; secret: string; pid?: number } => JSON.parse(readFileSync(p.stateFile, 'utf8'));
const handlers = (s: Settings | undefined, event: string): Handler[] => (s?.hooks?.[event] ?? []).flatMap((g) => g.hooks);
/** PreToolUse handlers that can rewrite a Bash command: every synchronous one, over both files (they merge). */
const rewriters = (...files: (Settings | undefined)[]) => files.flatMap((s) => (s?.hooks?.PreToolUse ?? []).filter((g) => g.matcher === 'Bash').flatMap((g) => g.hooks)).filter((h) => h.async !== true && !/^: pgx http keeper/.test(h.command ?? ''));
const maybe = (file: string) => (existsSync(file) ? read(file) : undefined);

describe('agent install claude --transport http', () => {
  it('project scope: HTTP entries, keepers and the secret only in the 0600, git-ignored settings.local.json; one rewriter; the secret nowhere else', () => {
    const p = project();
    const r = install(p, '--transport', 'http');
    expect(r.status, r.stderr).toBe(0);
    const { port, secret } = state(p); // made by install: the url's port is fixed now
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const j = install(p, '--transport', 'http', '--json');
    const out = [r.stdout, r.stderr, j.stdout, j.stderr, readFileSync(shared(p), 'utf8')].join('\n');
    expect(out).not.toContain(secret);
    expect(jsonOf(j)).toMatchObject({ changed: false, transport: 'http', private_files: [local(p)], http: { port, state: p.stateFile } });

    // The shared file: the events Claude Code can't send over HTTP, as portable commands; no HTTP entry, no keeper.
    const s = read(shared(p));
    expect(Object.keys(s.hooks!)).toEqual(['SessionStart', 'SessionEnd']);
    expect(JSON.stringify(s)).not.toMatch(/http:|keeper|PGX_HOOK_SECRET/);
    expect(s.env).toBeUndefined();

    const l = read(local(p));
    expect(statSync(local(p)).mode & 0o777).toBe(0o600);
    expect(execFileSync('git', ['status', '--porcelain', '-uall'], { cwd: p.dir, encoding: 'utf8' }).split('\n').filter((x) => x.includes('.claude'))).toEqual(['?? .claude/settings.json']);
    expect(l.env).toEqual({ PGX_HOOK_SECRET: secret });
    const q = `?project=${encodeURIComponent(p.dir)}`;
    for (const [event, cli, timeout] of [['UserPromptSubmit', 'user-prompt-submit', 10], ['PreToolUse', 'pre-tool-use', 60], ['SubagentStart', 'subagent-start', 60], ['SubagentStop', 'subagent-stop', 30]] as const) {
      const h = handlers(l, event).filter((x) => x.type === 'http');
      expect(h, event).toHaveLength(1);
      expect(h[0]).toMatchObject({ url: `http://127.0.0.1:${port}/hook/${cli}${q}`, headers: { Authorization: 'Bearer $PGX_HOOK_SECRET' }, timeout });
      expect(h[0]!.allowedEnvVars![0]).toBe('PGX_HOOK_SECRET');
      expect(h[0]!.onFailure).toBe(event === 'PreToolUse' ? 'block' : undefined);
    }
    // PreToolUse's timeout (s) is above the hook's own deadline (80% of it), so pgx's deny comes first.
    expect(handlers(l, 'PreToolUse')[0]!.timeout! * 1000).toBeGreaterThan(0.8 * 60_000);
    // The keepers: async on PreToolUse and UserPromptSubmit, waited for on SessionStart; none on the others.
    const keepers = (event: string) => handlers(l, event).filter((h) => /^: pgx http keeper/.test(h.command ?? ''));
    expect(keepers('PreToolUse')).toMatchObject([{ type: 'command', async: true }]);
    expect(keepers('UserPromptSubmit')).toMatchObject([{ type: 'command', async: true }]);
    expect(keepers('SessionStart')).toHaveLength(1);
    expect(keepers('SessionStart')[0]!.async).toBeUndefined();
    expect(keepers('PreToolUse')[0]!.onFailure).toBeUndefined();
    expect(rewriters(s, l)).toHaveLength(1);
    expect(rewriters(s, l)[0]!.type).toBe('http');

    // install twice: the same bytes in both files
    const before = [readFileSync(shared(p), 'utf8'), readFileSync(local(p), 'utf8')];
    expect(install(p, '--transport', 'http').status).toBe(0);
    expect([readFileSync(shared(p), 'utf8'), readFileSync(local(p), 'utf8')]).toEqual(before);

    // uninstall: both files go (only pgx was in them), and the exclude lines
    const u = jsonOf(runPgx(['agent', 'uninstall', 'claude', '--json'], p));
    expect(u).toMatchObject({ changed: true, local: { file_removed: true, gitExcludeRemoved: true } });
    expect(u.removed).toEqual(expect.arrayContaining(['PreToolUse', 'SubagentStart', 'SubagentStop']));
    expect(JSON.stringify(u)).not.toContain(secret);
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
  });

  it("switching command → http → command keeps exactly one pgx rewriter and the user's own entries; uninstall takes out exactly pgx's", () => {
    const p = project();
    mkdirSync(join(p.dir, '.claude'));
    const mine: Handler = { type: 'command', command: 'echo mine', timeout: 5 };
    writeFileSync(shared(p), JSON.stringify({ model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] } }, null, 2));
    writeFileSync(local(p), JSON.stringify({ env: { MY_VAR: '1' }, hooks: { SubagentStart: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:9/mine' }] }] } }, null, 2));

    const pgxRewriters = () => rewriters(maybe(shared(p)), maybe(local(p))).filter((h) => h.command !== 'echo mine' && h.url !== 'http://127.0.0.1:9/mine');
    expect(install(p).status).toBe(0);
    expect(pgxRewriters()).toMatchObject([{ type: 'command' }]);
    expect(install(p, '--transport', 'http').status).toBe(0);
    expect(pgxRewriters()).toMatchObject([{ type: 'http' }]);
    expect(read(local(p)).env).toEqual({ MY_VAR: '1', PGX_HOOK_SECRET: state(p).secret });
    expect(install(p).status).toBe(0);
    expect(pgxRewriters()).toMatchObject([{ type: 'command' }]);
    // back to command: no HTTP entry, keeper or secret of pgx's is left; the user's own are
    const l = read(local(p));
    expect(JSON.stringify(l)).not.toMatch(/hook\/|keeper|PGX_HOOK_SECRET/);
    expect(l.env).toEqual({ MY_VAR: '1' });
    expect(handlers(l, 'SubagentStart')).toEqual([{ type: 'http', url: 'http://127.0.0.1:9/mine' }]);
    expect(handlers(read(shared(p)), 'PreToolUse')[0]).toEqual(mine);

    expect(install(p, '--transport', 'http').status).toBe(0);
    expect(runPgx(['agent', 'uninstall', 'claude'], p).status).toBe(0);
    expect(read(shared(p))).toEqual({ model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] } });
    expect(read(local(p))).toEqual({ env: { MY_VAR: '1' }, hooks: { SubagentStart: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:9/mine' }] }] } });
  });

  it('says which file got which event, each once; back to command says what it removed; --help cites no decision', () => {
    const p = project();
    /** The events listed under `label` in the block of lines that follows the line naming `file`. */
    const events = (text: string, file: string, label: string) => {
      const rows = text.split('\n');
      const start = rows.findIndex((r) => /^(updated|unchanged): /.test(r) && r.split(' ')[1] === file);
      const block = rows.slice(start + 1).filter((_, k, all) => all.slice(0, k + 1).every((r) => r.startsWith('  ')));
      return start === -1 ? undefined : block.find((r) => r.startsWith(`  ${label}`))?.slice(`  ${label}`.length).trim().split(', ');
    };
    expect(install(p).status).toBe(0);
    const toHttp = install(p, '--transport', 'http');
    expect(toHttp.status, toHttp.stderr).toBe(0);
    // settings.json lost four events, settings.local.json gained them: said once, each under its own file
    expect(toHttp.stdout).toContain(`  moved out: UserPromptSubmit, PreToolUse, SubagentStart, SubagentStop (HTTP now: in ${local(p)})`);
    expect(events(toHttp.stdout, local(p), 'added:')).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'SubagentStart', 'SubagentStop']);
    expect(events(toHttp.stdout, shared(p), 'unchanged:')).toEqual(['SessionStart', 'SessionEnd']);
    expect(toHttp.stdout).not.toMatch(/^  (added|updated):.*PreToolUse[\s\S]*^  (added|updated):.*PreToolUse[\s\S]*^  (added|updated):.*PreToolUse/m);
    const j = jsonOf(install(p, '--transport', 'http', '--json'));
    expect(j.local).toMatchObject({ path: local(p), added: [], updated: [], removed: [], unchanged: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'SubagentStart', 'SubagentStop'] });
    expect(j.unchanged).toEqual(['SessionStart', 'SessionEnd']);
    const back = install(p);
    expect(back.status, back.stderr).toBe(0);
    expect(back.stdout).toContain(`  removed from ${local(p)}: pgx's HTTP entries and keepers of SessionStart, UserPromptSubmit, PreToolUse, SubagentStart, SubagentStop, and its PGX_HOOK_SECRET env key`);
    expect(events(back.stdout, shared(p), 'added:')).toEqual(['UserPromptSubmit', 'PreToolUse', 'SubagentStart', 'SubagentStop']);
    const help = runPgx(['agent', 'install', '--help'], p);
    expect(help.stdout).toMatch(/--transport/);
    expect(help.stdout).not.toMatch(/decision/i);
  });

  it("a PGX_HOOK_SECRET pgx didn't write (no HTTP entry of pgx's beside it) stays at uninstall", () => {
    const p = project();
    expect(install(p, '--scope', 'local').status).toBe(0);
    const l = read(local(p));
    writeFileSync(local(p), JSON.stringify({ ...l, env: { PGX_HOOK_SECRET: 'the users own' } }));
    expect(runPgx(['agent', 'uninstall', 'claude', '--scope', 'local'], p).status).toBe(0);
    expect(read(local(p))).toEqual({ env: { PGX_HOOK_SECRET: 'the users own' } });
  });

  it('local and user scope: everything in the one per-machine file, 0600 (a 0644 one is narrowed); the user file names no project', () => {
    const p = project();
    mkdirSync(join(p.dir, '.claude'));
    writeFileSync(local(p), '{}\n');
    chmodSync(local(p), 0o644);
    expect(install(p, '--scope', 'local', '--transport', 'http').status).toBe(0);
    expect(statSync(local(p)).mode & 0o777).toBe(0o600);
    expect(existsSync(shared(p))).toBe(false);
    const l = read(local(p));
    const starts = handlers(l, 'SessionStart').map((h) => h.command!);
    expect(starts).toHaveLength(2);
    expect(starts[0]).toBe(`'${realpathSync(LAUNCHER)}' agent hook session-start`);
    expect(starts[1]).toMatch(/^: pgx http keeper for session-start; f='/);
    expect(rewriters(l)).toMatchObject([{ type: 'http' }]);
    expect(execFileSync('git', ['status', '--porcelain', '-uall'], { cwd: p.dir, encoding: 'utf8' })).not.toContain('settings.local.json');

    const userFile = join(p.env.HOME!, '.claude', 'settings.json');
    expect(install(p, '--scope', 'user', '--transport', 'http').status).toBe(0);
    expect(statSync(userFile).mode & 0o777).toBe(0o600);
    const u = read(userFile);
    expect(handlers(u, 'PreToolUse')[0]!.url).toBe(`http://127.0.0.1:${state(p).port}/hook/pre-tool-use`);
    expect(u.env).toEqual({ PGX_HOOK_SECRET: state(p).secret });
  });

  it('--dry-run makes no http.json', () => {
    const p = project();
    const r = install(p, '--transport', 'http', '--dry-run', '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(p.stateFile)).toBe(false);
    expect(existsSync(join(p.dir, '.claude'))).toBe(false);
    expect(runPgx(['agent', 'install', 'claude', '--transport', 'grpc'], p).status).not.toBe(0);
  });

  it("doctor: says which transport each entry uses and that PreToolUse fails closed; an HTTP entry in the shared file, a missing secret and two rewriters are problems with fixes", () => {
    const p0 = project();
    const bin = join(p0.dir, 'bin'); // pgx on PATH, as an npm install puts it: the shared file's hooks find it there
    mkdirSync(bin);
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    const p = { ...p0, env: { ...p0.env, PATH: `${bin}:${process.env.PATH}` } };
    expect(install(p, '--transport', 'http').status).toBe(0);
    const hooks = () => {
      const d = jsonOf(runPgx(['agent', 'doctor', '--json'], p));
      return d.checks.find((c: { name: string }) => c.name === 'hooks') as { status: string; detail: string; fix?: string };
    };
    const good = hooks();
    expect(good.detail).toContain('PreToolUse http (fails closed)');
    expect(good.detail).toContain('SubagentStart http');
    expect(good.detail).toContain('SessionStart command');
    expect(good.detail).not.toMatch(/missing/);
    const l = read(local(p));
    const s = read(shared(p));

    // an HTTP entry in the shared settings.json
    writeFileSync(shared(p), JSON.stringify({ ...s, hooks: { ...s.hooks, SubagentStop: l.hooks!.SubagentStop } }));
    writeFileSync(local(p), JSON.stringify({ ...l, hooks: { ...l.hooks, SubagentStop: undefined } }));
    expect(hooks()).toMatchObject({ status: 'fail', detail: expect.stringContaining('HTTP entries (SubagentStop) in the shared'), fix: expect.stringContaining('--transport http') });
    expect(install(p, '--transport', 'http').status).toBe(0);
    expect(hooks().status).not.toBe('fail');

    // the secret gone
    const { env: _gone, ...noSecret } = read(local(p));
    writeFileSync(local(p), JSON.stringify(noSecret));
    expect(hooks()).toMatchObject({ status: 'fail', detail: expect.stringContaining('no settings file sets it'), fix: 'pgx agent install claude --transport http' });
    expect(install(p, '--transport', 'http').status).toBe(0);

    // two rewriters: a command PreToolUse of pgx's beside the HTTP one
    const withCommand = read(shared(p));
    withCommand.hooks!.PreToolUse = [{ matcher: 'Bash', hooks: [{ type: 'command', command: `'${realpathSync(LAUNCHER)}' agent hook pre-tool-use`, timeout: 60, onFailure: 'block' }] }];
    writeFileSync(shared(p), JSON.stringify(withCommand));
    expect(hooks()).toMatchObject({ status: 'fail', detail: expect.stringContaining('2 pgx PreToolUse rewriters'), fix: 'pgx agent install claude --transport http' });
    expect(install(p, '--transport', 'http').status).toBe(0);
    expect(rewriters(read(shared(p)), read(local(p)))).toHaveLength(1);
    expect(hooks().detail).toContain('PreToolUse http (fails closed)');
  });

  it('the keepers, run as Claude Code runs them: SessionStart starts the broker and waits; after a SIGKILL the async one starts it again, which then serves the HTTP entry', async () => {
    const p = project();
    expect(install(p, '--scope', 'local', '--transport', 'http').status).toBe(0);
    const l = read(local(p));
    const keeper = (event: string) => handlers(l, event).find((h) => /^: pgx http keeper/.test(h.command ?? ''))!.command!;
    // Claude Code's environment: the settings' env (the secret) on top of the user's
    const env = { ...p.env, ...l.env, CLAUDE_PROJECT_DIR: p.dir };
    const sh = (command: string) => spawnSync('/bin/sh', ['-c', command], { cwd: p.dir, env, input: '{}', encoding: 'utf8', timeout: 20_000 });
    const started = sh(keeper('SessionStart'));
    expect([started.status, started.stdout, started.stderr]).toEqual([0, '', '']);
    const first = state(p).pid!; // there when SessionStart returns: it waited
    pids.push(first);
    expect(() => process.kill(first, 0)).not.toThrow();

    // The installed HTTP entry, its $VARs interpolated as Claude Code does: a parent's `ls` is answered (nothing to do)
    const entry = handlers(l, 'PreToolUse')[0]!;
    const headers = Object.fromEntries(Object.entries(entry.headers!).map(([k, v]) => [k, v.replace(/\$([A-Z_]+)/g, (_, n: string) => (env as Record<string, string | undefined>)[n] ?? '')]));
    const post = async (body: object) => {
      const res = await fetch(entry.url!, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return { status: res.status, text: await res.text() };
    };
    const s = session(p.dir, p.dir);
    expect(await post(preToolUseBash(s, 'ls'))).toEqual({ status: 200, text: '' });

    process.kill(first, 'SIGKILL');
    await expect(post(preToolUseBash(s, 'ls'))).rejects.toThrow(); // refused: with onFailure "block", blocked
    const kept = sh(keeper('PreToolUse'));
    expect([kept.status, kept.stdout, kept.stderr]).toEqual([0, '', '']); // never says anything: can't block or rewrite
    await pollUntil(async () => (state(p).pid ?? first) !== first, 15_000);
    pids.push(state(p).pid!);
    await pollUntil(async () => (await post(preToolUseBash(s, 'ls')).catch(() => undefined))?.status === 200, 15_000);
    // a subagent's command is routed by the restarted broker
    const routed = await post(preToolUseBash(s, 'psql -c "select 1"', { agentId: newAgentId() }));
    expect(routed.status).toBe(200);
    expect(JSON.parse(routed.text).hookSpecificOutput.updatedInput.command).toContain(' agent exec --agent ');
    // a live broker: the keeper is a no-op
    const again = state(p).pid;
    expect(sh(keeper('UserPromptSubmit')).status).toBe(0);
    expect(state(p).pid).toBe(again);
  }, 60_000);
});
