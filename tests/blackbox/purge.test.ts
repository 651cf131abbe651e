// `pgx local down --purge` on a project that uses the embedded local server, has pgx's hooks installed and names a
// [project] source: it says that the hooks stay and what they will do (every subagent command refused until the
// source exists again), naming the fixes; it stops the broker; it leaves nothing of pgx's under PGX_HOME or in the
// broker's socket directory, and nothing that is not pgx's is touched. The deny that follows names the right fix.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, runPgx } from '../helpers/pgx.js';
import { hook } from '../helpers/hooks.js';
import { newAgentId, preToolUseBash, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';

const root = mkdtempSync(join(tmpdir(), 'pgx-purge-'));
const dir = join(root, 'shop');
const home = join(root, 'pgx-home');
const xdg = join(root, 'xdg'); // the broker's socket directory is <xdg>/pgx: this test's own
mkdirSync(dir);
mkdirSync(xdg, { mode: 0o700 });
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: root,
  PGX_HOME: home,
  XDG_RUNTIME_DIR: xdg,
  PGX_HOST: 'purgehost',
  PGX_POOL: '0',
  PGX_BROKER: '1',
  PGX_BROKER_IDLE_MS: '60000',
};
const p = { dir, cwd: dir, name: 'shop', home, env };

afterAll(() => {
  const s = runPgx(['local', 'status', '--json'], p);
  const dataDir = s.status === 0 ? (jsonOf(s).data_dir as string | undefined) : undefined;
  runPgx(['local', 'down', '--purge', '--yes'], p);
  runPgx(['agent', 'broker', 'stop'], p);
  if (dataDir?.startsWith('/var/lib/pgx/')) rmSync(dirname(dirname(dataDir)), { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('pgx local down --purge', () => {
  it('warns that the hooks stay and what they will do, stops the broker, leaves no debris; the deny names the fix', async () => {
    writeFileSync(join(dir, '.pgx.toml'), '[project]\nname = "shop"\nsource = "shop_dev"\n');
    expect(runPgx(['agent', 'install', 'claude'], p).status).toBe(0);
    const mk = runPgx(['local', 'sql', '-c', 'CREATE DATABASE shop_dev'], p);
    expect(mk.status, mk.stderr).toBe(0);
    // a session and a subagent: branches, the session's env files, the hook log, a broker
    const s = session(dir, home);
    await hook('session-start', sessionStart(s), p);
    const a = newAgentId();
    await hook('subagent-start', subagentStart(s, a), p);
    const routed = await hook('pre-tool-use', preToolUseBash(s, 'true', { agentId: a }), p);
    expect(routed.json?.hookSpecificOutput?.updatedInput?.command, routed.stdout).toBeTruthy();
    expect(runPgx(['agent', 'broker', 'start'], p).status).toBe(0);
    const brokers = jsonOf(runPgx(['agent', 'broker', 'status', '--json'], p)).brokers as { pid: number }[];
    expect(brokers.length).toBeGreaterThan(0);
    expect(existsSync(join(home, 'agent', 'hooks.log'))).toBe(true);

    // no TTY and no --yes: refused, exit 2, nothing deleted; it lists what and says what follows
    const refused = runPgx(['local', 'down', '--purge'], p);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(join(home, 'local'));
    expect(refused.stderr).toMatch(/hooks stay installed/);
    expect(existsSync(join(home, 'local'))).toBe(true);

    const r = runPgx(['local', 'down', '--purge', '--yes', '--json'], p);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const out = jsonOf(r);
    expect(out).toMatchObject({
      stopped: true,
      purged: true,
      source_missing: 'shop_dev',
      hooks_remain: [join(dir, '.claude', 'settings.json')],
    });
    expect(out.warning).toMatch(/every subagent Bash command is refused until "shop_dev" exists again/);
    expect(out.warning).toContain('pgx source import');
    expect(out.warning).toContain('pgx agent uninstall claude');
    // the broker: stopped (it held connections to the server whose data went)
    expect(out.brokers_stopped.sort()).toEqual(brokers.map((b) => b.pid).sort());
    for (let i = 0; i < 50 && brokers.some((b) => pidAlive(b.pid)); i++)
      await new Promise((res) => setTimeout(res, 100));
    expect(brokers.filter((b) => pidAlive(b.pid))).toEqual([]);
    // no debris: PGX_HOME and the socket directory were pgx's and are gone, each emptied first
    expect(existsSync(home), JSON.stringify(out)).toBe(false);
    expect(existsSync(join(xdg, 'pgx'))).toBe(false);
    expect(out.removed_dirs).toEqual(expect.arrayContaining([join(home, 'agent'), home, join(xdg, 'pgx')]));

    // text mode says it too (a second purge: nothing left to delete, and no warning needed)
    const again = runPgx(['local', 'down', '--purge', '--yes'], p);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/nothing to delete/);

    // what the hooks then do: the next subagent command is refused, and the refusal names the source as the fix
    const s2 = session(dir, home);
    const b = newAgentId();
    await hook('subagent-start', subagentStart(s2, b), p);
    const denied = await hook('pre-tool-use', preToolUseBash(s2, 'true', { agentId: b }), p);
    const reason: string = denied.json?.hookSpecificOutput?.permissionDecisionReason ?? '';
    expect(denied.json?.hookSpecificOutput?.permissionDecision, denied.stdout).toBe('deny');
    expect(reason).toMatch(/source database "shop_dev" .* does not exist on pgx's local server/);
    expect(reason).toContain('pgx source import');
    expect(reason).toContain('pgx init --force');
    expect(reason).not.toContain('template refresh');
  }, 240_000);

  it('never deletes what pgx did not make: a file of the user in PGX_HOME/agent stays, and so do its directories', () => {
    mkdirSync(join(home, 'agent'), { recursive: true });
    writeFileSync(join(home, 'agent', 'my-notes.txt'), 'mine\n');
    writeFileSync(join(home, 'agent', 'hooks.log'), '{}\n');
    mkdirSync(join(xdg, 'pgx'), { mode: 0o700, recursive: true });
    writeFileSync(join(xdg, 'pgx', 'other.txt'), 'not pgx\n');
    const r = runPgx(['local', 'down', '--purge', '--yes', '--json'], p);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(existsSync(join(home, 'agent', 'hooks.log'))).toBe(false);
    expect(readFileSync(join(home, 'agent', 'my-notes.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(xdg, 'pgx', 'other.txt'))).toBe(true);
    // The directories holding the user's files stay. /var/lib/pgx (root only) may go: the first test's refused hook
    // started a new local server there, this purge removed its data, and pgx's own directory was then empty.
    const removed: string[] = jsonOf(r).removed_dirs;
    expect(removed.filter((d) => d !== '/var/lib/pgx')).toEqual([]);
    expect(removed).not.toContain(home);
  });
});
