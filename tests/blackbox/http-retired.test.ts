// The HTTP transport is retired (decision 444): the built CLI refuses `--transport http`, moves an HTTP install back to
// command hooks and says what it removed, the doctor flags what such an install left, and the broker listens on no
// TCP port.
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hookEnv, type Project } from '../helpers/hooks.js';
import { jsonOf, makeProject, runPgx } from '../helpers/pgx.js';

const projects: Project[] = [];
afterAll(() => {
  for (const p of projects) runPgx(['agent', 'broker', 'stop'], { cwd: p.dir, env: hookEnv(p, {}) });
});

/** What `install --transport http` wrote at project scope: command entries in settings.json, HTTP entries, keepers and the secret in settings.local.json. */
function writeOldHttpInstall(dir: string): void {
  const cmd = (cli: string, timeout: number, extra: object = {}) => ({
    type: 'command',
    command: `command -v pgx >/dev/null 2>&1 && exec pgx agent hook ${cli}; exit 0`,
    timeout,
    ...extra,
  });
  const http = (cli: string, timeout: number, extra: object = {}) => ({
    type: 'http',
    url: `http://127.0.0.1:41234/hook/${cli}?project=${encodeURIComponent(dir)}`,
    headers: { Authorization: 'Bearer $PGX_HOOK_SECRET' },
    allowedEnvVars: ['PGX_HOOK_SECRET'],
    timeout,
    ...extra,
  });
  const keeper = (cli: string) => ({
    type: 'command',
    command: `: pgx http keeper for ${cli}; exit 0`,
    timeout: 5,
    async: true,
  });
  mkdirSync(join(dir, '.claude'), { recursive: true });
  writeFileSync(
    join(dir, '.claude', 'settings.json'),
    JSON.stringify(
      {
        hooks: {
          SessionStart: [{ hooks: [cmd('session-start', 30)] }],
          SessionEnd: [{ hooks: [cmd('session-end', 10)] }],
        },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(dir, '.claude', 'settings.local.json'),
    JSON.stringify(
      {
        env: { PGX_HOOK_SECRET: 'b'.repeat(64) },
        hooks: {
          UserPromptSubmit: [{ hooks: [http('user-prompt-submit', 10)] }, { hooks: [keeper('user-prompt-submit')] }],
          PreToolUse: [
            { matcher: 'Bash', hooks: [http('pre-tool-use', 60, { onFailure: 'block' })] },
            { matcher: 'Bash', hooks: [keeper('pre-tool-use')] },
          ],
          SubagentStart: [{ hooks: [http('subagent-start', 60)] }],
          SubagentStop: [{ hooks: [http('subagent-stop', 30)] }],
        },
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
}

describe('the retired HTTP transport', () => {
  it('--transport http is refused with the reason; install moves an HTTP install back and says so; the doctor flags it before and not after', () => {
    const p = makeProject();
    projects.push(p);
    const env = { ...p.env, PATH: process.env.PATH };
    const refused = runPgx(['agent', 'install', 'claude', '--transport', 'http', '--no-verify'], { cwd: p.dir, env });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('retired');

    writeOldHttpInstall(p.dir);
    const hooksCheck = () =>
      jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env })).checks.find(
        (c: { name: string }) => c.name === 'hooks',
      ) as { status: string; detail: string };
    const before = hooksCheck();
    expect(before.status).toBe('fail');
    expect(before.detail).toContain('retired HTTP transport');
    expect(before.detail).toContain('PreToolUse HTTP entry');

    const text = runPgx(['agent', 'install', 'claude', '--no-verify'], { cwd: p.dir, env });
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /removed the retired HTTP transport's entries and secret \(.*PreToolUse.*env\.PGX_HOOK_SECRET/,
    );
    const local = JSON.parse(readFileSync(join(p.dir, '.claude', 'settings.local.json'), 'utf8'));
    expect(JSON.stringify(local)).not.toMatch(/http:|PGX_HOOK_SECRET|pgx http keeper/);
    const shared = JSON.parse(readFileSync(join(p.dir, '.claude', 'settings.json'), 'utf8'));
    expect(shared.hooks.PreToolUse).toHaveLength(1); // one rewriter
    expect(hooksCheck().detail).not.toContain('HTTP');
    const again = jsonOf(runPgx(['agent', 'install', 'claude', '--no-verify', '--json'], { cwd: p.dir, env }));
    expect(again.httpRemoved).toBeUndefined();
  });

  it('the broker listens on no TCP port: its sockets are unix ones only', () => {
    const p = makeProject();
    projects.push(p);
    Object.assign(p.env, { PGX_BROKER: '1', PGX_BROKER_IDLE_MS: '60000' });
    const { pid } = jsonOf(runPgx(['agent', 'broker', 'start', '--json'], { cwd: p.dir, env: hookEnv(p, {}) }));
    const inodes = readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((i): i is string => i !== undefined);
    expect(inodes.length).toBeGreaterThan(0);
    const listening = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/))
        .filter((c) => c[3] === '0A')
        .map((c) => c[9] ?? ''),
    );
    expect(inodes.filter((i) => listening.includes(i))).toEqual([]);
    const unix = readFileSync('/proc/net/unix', 'utf8');
    expect(inodes.some((i) => unix.includes(` ${i} `))).toBe(true);
  });
});
