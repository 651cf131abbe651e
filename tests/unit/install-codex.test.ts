// pgx agent install codex: the hooks.json merge (idempotent, keeps everything else), the trust entries Codex reads
// (the hash measured against `codex app-server` hooks/list on 0.171.0), and uninstall. The real binary accepting them
// as trusted is tests/e2e/codex-trust.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installCodex, uninstallCodex } from '../../src/install/codex.js';
import {
  CODEX_HOOK_EVENTS,
  CODEX_PRE_TOOL_USE_MATCHER,
  codexHookCommand,
  isPortableCodexCommand,
  PGX_CODEX_HOOK_RE,
  planCodexHooks,
  portableCodexHookCommand,
} from '../../src/install/codex-entries.js';
import { codexTrustHash, planCodexTrust, trustStateOf } from '../../src/install/codex-trust.js';

const LAUNCHER = '/opt/pgx/bin/pgx';

let dir: string;
let home: string;
let proj: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgx-codex-install-'));
  home = path.join(dir, 'codex-home');
  proj = path.join(dir, 'proj');
  fs.mkdirSync(home);
  fs.mkdirSync(proj);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const hooksFile = () => path.join(home, 'hooks.json');
const configFile = () => path.join(home, 'config.toml');
const readHooks = () =>
  JSON.parse(fs.readFileSync(hooksFile(), 'utf8')) as {
    hooks: Record<string, { matcher?: string; hooks: { command: string; timeout?: number }[] }[]>;
    [k: string]: unknown;
  };
const install = (o: { dryRun?: boolean; launcher?: string } = {}) =>
  installCodex({
    scope: 'user',
    projectDir: proj,
    codexHome: home,
    launcher: o.launcher ?? LAUNCHER,
    dryRun: o.dryRun,
  });

describe('the trust hash', () => {
  it("is Codex's currentHash for the hooks measured with codex app-server (0.171.0)", () => {
    // hooks/list answered these for {"matcher":"Bash","hooks":[{"type":"command","command":"echo hi","timeout":30}]}
    // under PreToolUse, and {"hooks":[{"type":"command","command":"echo start"}]} under SubagentStart (no timeout: 600).
    expect(codexTrustHash('PreToolUse', 'Bash', 'echo hi', 30)).toBe(
      'sha256:65f88c378f287741bd683c759c7306a773bbb410594d61f7a39b723f8ab8eb45',
    );
    expect(codexTrustHash('SubagentStart', undefined, 'echo start', undefined)).toBe(
      'sha256:9589b65e91116c32e387793724de0700192e58257e12d506b407f5b404597dd5',
    );
  });
});

describe('install', () => {
  it('writes the five hooks and one trust entry each, keyed by their position', () => {
    const r = install();
    expect(r.added).toEqual(CODEX_HOOK_EVENTS.map((e) => e.event));
    const hooks = readHooks().hooks;
    expect(Object.keys(hooks)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'SubagentStart',
      'SubagentStop',
    ]);
    expect(hooks.PreToolUse![0]!.matcher).toBe(CODEX_PRE_TOOL_USE_MATCHER);
    expect(hooks.PreToolUse![0]!.hooks[0]!.command).toBe(codexHookCommand(LAUNCHER, 'pre-tool-use'));
    expect(hooks.PreToolUse![0]!.hooks[0]!.command).toMatch(/\|\| \{ echo .* >&2; exit 2; \}$/); // fails closed
    const state = trustStateOf(fs.readFileSync(configFile(), 'utf8'), configFile());
    expect(Object.keys(state).sort()).toEqual(CODEX_HOOK_EVENTS.map((e) => `${hooksFile()}:${e.snake}:0:0`).sort());
    const pre = hooks.PreToolUse![0]!;
    expect(state[`${hooksFile()}:pre_tool_use:0:0`]!.trusted_hash).toBe(
      codexTrustHash('PreToolUse', CODEX_PRE_TOOL_USE_MATCHER, pre.hooks[0]!.command, pre.hooks[0]!.timeout),
    );
  });

  it('is idempotent: a second run changes nothing, byte for byte', () => {
    install();
    const hooks = fs.readFileSync(hooksFile(), 'utf8');
    const config = fs.readFileSync(configFile(), 'utf8');
    const r = install();
    expect(r.changed).toBe(false);
    expect(r.unchanged).toHaveLength(5);
    expect(r.trusted).toEqual([]);
    expect(fs.readFileSync(hooksFile(), 'utf8')).toBe(hooks);
    expect(fs.readFileSync(configFile(), 'utf8')).toBe(config);
  });

  it("keeps the user's hooks, keys and config (comments too), and appends after their groups", () => {
    fs.writeFileSync(
      hooksFile(),
      JSON.stringify({
        description: 'mine',
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard', timeout: 5 }] }],
          Stop: [{ hooks: [{ type: 'command', command: 'notify' }] }],
        },
      }),
    );
    const mineHash = codexTrustHash('PreToolUse', 'Bash', 'my-guard', 5);
    const config = `# my settings\nmodel = "o3"\n\n[hooks.state."${hooksFile()}:pre_tool_use:0:0"]\ntrusted_hash = "${mineHash}"\n\n[sandbox_workspace_write]\nnetwork_access = false\n`;
    fs.writeFileSync(configFile(), config);
    install();
    const h = readHooks();
    expect(h.description).toBe('mine');
    expect(h.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: 'notify' }] }]);
    expect(h.hooks.PreToolUse![0]).toEqual({
      matcher: 'Bash',
      hooks: [{ type: 'command', command: 'my-guard', timeout: 5 }],
    });
    expect(h.hooks.PreToolUse![1]!.hooks[0]!.command).toContain('agent codex-hook pre-tool-use');
    const text = fs.readFileSync(configFile(), 'utf8');
    expect(text.startsWith(config.trimEnd())).toBe(true); // the user's text first, unchanged
    const state = trustStateOf(text, configFile());
    expect(state[`${hooksFile()}:pre_tool_use:0:0`]!.trusted_hash).toBe(mineHash);
    expect(state[`${hooksFile()}:pre_tool_use:1:0`]).toBeDefined();
    expect((parseToml(text) as { model: string }).model).toBe('o3');
  });

  it('updates a moved launcher in place and re-trusts only what changed', () => {
    install();
    const r = install({ launcher: '/new/place/pgx' });
    expect(r.updated).toHaveLength(5);
    expect(r.trusted).toHaveLength(5);
    const text = fs.readFileSync(configFile(), 'utf8');
    expect(text.match(/\[hooks\.state\./g)).toHaveLength(5); // replaced, not added
    expect(readHooks().hooks.PreToolUse![0]!.hooks[0]!.command).toContain("'/new/place/pgx'");
  });

  it('--dry-run writes nothing', () => {
    const r = install({ dryRun: true });
    expect(r.added).toHaveLength(5);
    expect(fs.existsSync(hooksFile())).toBe(false);
    expect(fs.existsSync(configFile())).toBe(false);
  });

  it('refuses a hooks file or config it cannot read, and leaves it alone', () => {
    fs.writeFileSync(hooksFile(), '{ nope');
    expect(() => install()).toThrow(/not valid JSON/);
    fs.writeFileSync(hooksFile(), '{}');
    fs.writeFileSync(configFile(), 'model = [');
    expect(() => install()).toThrow(/not valid TOML/);
    expect(fs.readFileSync(configFile(), 'utf8')).toBe('model = [');
  });

  it('project scope is portable: the same bytes and the same trust hashes whatever the launcher, the checkout or the CODEX_HOME', () => {
    const other = path.join(dir, 'other');
    const otherHome = path.join(dir, 'other-home');
    fs.mkdirSync(other);
    fs.mkdirSync(otherHome);
    const a = installCodex({ scope: 'project', projectDir: proj, codexHome: home, launcher: LAUNCHER });
    const b = installCodex({
      scope: 'project',
      projectDir: other,
      codexHome: otherHome,
      launcher: '/home/mate/.local/lib/node_modules/pgx/bin/pgx.js',
    });
    expect([a.hooks_launcher, b.hooks_launcher]).toEqual(['pgx', 'pgx']);
    const text = fs.readFileSync(path.join(proj, '.codex', 'hooks.json'), 'utf8');
    expect(fs.readFileSync(path.join(other, '.codex', 'hooks.json'), 'utf8')).toBe(text);
    expect(text).not.toContain(LAUNCHER);
    const hashes = (h: string, p: string) =>
      Object.fromEntries(
        Object.entries(trustStateOf(fs.readFileSync(path.join(h, 'config.toml'), 'utf8'), 'config.toml')).map(
          ([k, v]) => [k.slice(`${p}/.codex/hooks.json:`.length), v.trusted_hash],
        ),
      );
    expect(Object.keys(hashes(home, proj))).toHaveLength(5);
    expect(hashes(otherHome, other)).toEqual(hashes(home, proj));
    // each command: pgx on PATH, else the sh fallback; PreToolUse keeps the fail-closed tail
    for (const e of CODEX_HOOK_EVENTS) {
      const c = portableCodexHookCommand(e.cli);
      expect(isPortableCodexCommand(c)).toBe(true);
      expect(PGX_CODEX_HOOK_RE.exec(c)?.[1]).toBe(e.cli);
      expect(c.startsWith('command -v pgx >/dev/null 2>&1 && ')).toBe(true);
    }
    expect(portableCodexHookCommand('pre-tool-use')).toMatch(
      /^command -v pgx >\/dev\/null 2>&1 && \{ pgx agent codex-hook pre-tool-use \|\| \{ echo .*>&2; exit 2; \}; exit 0; \}; grep -q '"agent_id"'; \[ \$\? = 1 \] && exit 0; echo .*>&2; exit 2$/,
    );
    expect(isPortableCodexCommand(codexHookCommand(LAUNCHER, 'session-start'))).toBe(false);
    // the user scope, beside it, names the launcher
    install();
    expect(readHooks().hooks.SessionStart![0]!.hooks[0]!.command).toBe(`'${LAUNCHER}' agent codex-hook session-start`);
  });

  it('project scope writes .codex/hooks.json and says whether the project is trusted', () => {
    const r = installCodex({ scope: 'project', projectDir: proj, codexHome: home, launcher: LAUNCHER });
    expect(r.path).toBe(path.join(proj, '.codex', 'hooks.json'));
    expect(r.project_trusted).toBe(false);
    expect(Object.keys(trustStateOf(fs.readFileSync(configFile(), 'utf8'), configFile()))[0]).toContain(
      `${proj}/.codex/hooks.json:`,
    );
  });
});

describe('uninstall', () => {
  it("removes exactly pgx's hooks and trust entries, and moves the trust of a hook the removal shifted", () => {
    install();
    // a hook the user added after pgx's, trusted at its position
    const h = readHooks();
    h.hooks.PreToolUse!.push({ matcher: 'Bash', hooks: [{ command: 'later-guard', timeout: 7 }] });
    fs.writeFileSync(hooksFile(), JSON.stringify(h));
    fs.appendFileSync(
      configFile(),
      `\n[hooks.state."${hooksFile()}:pre_tool_use:1:0"]\ntrusted_hash = "${codexTrustHash('PreToolUse', 'Bash', 'later-guard', 7)}"\n`,
    );
    const r = uninstallCodex({ scope: 'user', projectDir: proj, codexHome: home });
    expect(r.removed.sort()).toEqual(CODEX_HOOK_EVENTS.map((e) => e.event).sort());
    expect(readHooks().hooks).toEqual({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ command: 'later-guard', timeout: 7 }] }],
    });
    const state = trustStateOf(fs.readFileSync(configFile(), 'utf8'), configFile());
    expect(state).toEqual({
      [`${hooksFile()}:pre_tool_use:0:0`]: { trusted_hash: codexTrustHash('PreToolUse', 'Bash', 'later-guard', 7) },
    });
    expect(r.trust_moved).toEqual([`${hooksFile()}:pre_tool_use:1:0 -> ${hooksFile()}:pre_tool_use:0:0`]);
  });

  it('leaves a file without pgx hooks alone', () => {
    const text = JSON.stringify({ hooks: { Stop: [{ hooks: [{ command: 'x' }] }] } });
    fs.writeFileSync(hooksFile(), text);
    const r = uninstallCodex({ scope: 'user', projectDir: proj, codexHome: home });
    expect(r.changed).toBe(false);
    expect(fs.readFileSync(hooksFile(), 'utf8')).toBe(text);
  });

  it('install then uninstall leaves a user config as it was', () => {
    const config = '# mine\nmodel = "o3"\n';
    fs.writeFileSync(configFile(), config);
    install();
    uninstallCodex({ scope: 'user', projectDir: proj, codexHome: home });
    expect(fs.readFileSync(configFile(), 'utf8').trimEnd()).toBe(config.trimEnd());
  });
});

describe('the planners are pure', () => {
  it('plan the same text twice', () => {
    const a = planCodexHooks(undefined, { file: '/h.json', launcher: LAUNCHER });
    const b = planCodexHooks(a.text, { file: '/h.json', launcher: LAUNCHER });
    expect(b.changed).toBe(false);
    expect(b.text).toBe(a.text);
    const t = planCodexTrust(undefined, a, '/c.toml');
    expect(planCodexTrust(t.text, b, '/c.toml').changed).toBe(false);
  });
});
