import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as shParse } from 'shell-quote';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  HOOK_EVENTS,
  hookCommand,
  settingsPathFor,
  pgxCliOf,
  portableHookCommand,
  type HookEvent,
} from '../../src/install/hook-events.js';
import { SettingsFileError } from '../../src/lib/settings-file.js';
import { EXIT_RULE, wrapperRuleFor } from '../../src/install/permission-rules.js';
import { inspectClaudeInstall, launcherOf } from '../../src/install/inspect.js';
import { installClaude, uninstallClaude } from '../../src/install/claude.js';
import { planInstall, planUninstall } from '../../src/install/claude-entries.js';
import { PRE_TOOL_USE_MATCHER } from '../../src/hooks/claude/events.js';

type Handler = { type: string; command: string; timeout?: number; [k: string]: unknown };
type Group = { matcher?: string; hooks: Handler[] };
type Settings = { hooks?: Record<string, Group[]>; permissions?: { allow?: string[] }; [k: string]: unknown };

const LAUNCHER = '/opt/pgx/bin/pgx';
const EXPECTED: Record<string, { cli: string; matcher?: string; timeout: number; onFailure?: string }> = {
  SessionStart: { cli: 'session-start', timeout: 30 },
  UserPromptSubmit: { cli: 'user-prompt-submit', timeout: 10 },
  // A failed PreToolUse hook blocks the call instead of letting a subagent's command run unrouted.
  // Bash, Monitor, PowerShell, the MCP tools and resource tools (decision 493): an anchored alternation.
  PreToolUse: { cli: 'pre-tool-use', matcher: PRE_TOOL_USE_MATCHER, timeout: 60, onFailure: 'block' },
  SubagentStart: { cli: 'subagent-start', timeout: 60 },
  SubagentStop: { cli: 'subagent-stop', timeout: 30 },
  SessionEnd: { cli: 'session-end', timeout: 10 },
};
const SIX = Object.keys(EXPECTED);
const PGX_RE =
  / agent hook (session-start|user-prompt-submit|pre-tool-use|subagent-start|subagent-stop|session-end)\s*$/;

let dir: string;
let file: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgx-install-claude-'));
  file = path.join(dir, 'proj', '.claude', 'settings.json');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function read(): Settings {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Settings;
}
function write(obj: unknown): string {
  const text = JSON.stringify(obj, null, 2) + '\n';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return text;
}
/** Every pgx handler under an event, with its group. */
function pgxHandlers(s: Settings, event: string): Array<{ group: Group; handler: Handler }> {
  return (s.hooks?.[event] ?? []).flatMap((group) =>
    group.hooks.filter((h) => PGX_RE.test(h.command)).map((handler) => ({ group, handler })),
  );
}
function oldStyleEntry(launcher: string, cli: string, timeout: number, matcher?: string): Group {
  return {
    ...(matcher ? { matcher } : {}),
    hooks: [{ type: 'command', command: `${launcher} agent hook ${cli}`, timeout }],
  };
}
function tmpFilesLeft(): string[] {
  return fs.readdirSync(path.dirname(file)).filter((f) => f.includes('.tmp-'));
}

describe('settingsPathFor / hookCommand / wrapperRuleFor', () => {
  it('maps scopes to files', () => {
    expect(settingsPathFor('project', '/p', '/h')).toBe('/p/.claude/settings.json');
    expect(settingsPathFor('local', '/p', '/h')).toBe('/p/.claude/settings.local.json');
    expect(settingsPathFor('user', '/p', '/h')).toBe('/h/.claude/settings.json');
  });

  it('always single-quotes the launcher', () => {
    expect(hookCommand('/usr/bin/pgx', 'session-start')).toBe(`'/usr/bin/pgx' agent hook session-start`);
    expect(wrapperRuleFor('/usr/bin/pgx', '/home/me/shop')).toBe(
      'Bash(/usr/bin/pgx agent exec --agent * --cwd /home/me/shop -- *)',
    );
    expect(wrapperRuleFor('/usr/bin/pgx', undefined)).toBe('Bash(/usr/bin/pgx agent exec --agent * --cwd * -- *)');
    expect(wrapperRuleFor('/opt/a*b/pgx', '/p')).toBe('Bash(/opt/a\\*b/pgx agent exec --agent * --cwd /p -- *)');
    expect(wrapperRuleFor('/opt/(x)/pgx', '/p')).toBeUndefined();
    expect(hookCommand(`/a b/it's`, 'session-end')).toBe(`'/a b/it'\\''s' agent hook session-end`);
    expect(() => hookCommand('', 'session-end')).toThrow(TypeError);
  });

  it('HOOK_EVENTS lists the six events with their matcher and timeouts', () => {
    expect(HOOK_EVENTS.map((h) => h.event)).toEqual(SIX);
    for (const h of HOOK_EVENTS) {
      expect(h.cli).toBe(EXPECTED[h.event]!.cli);
      expect(h.timeout).toBe(EXPECTED[h.event]!.timeout);
      expect(h.onFailure).toBe(EXPECTED[h.event]!.onFailure);
      expect(h.matcher).toBe(EXPECTED[h.event]!.matcher);
    }
  });
});

describe('installClaude', () => {
  it('fresh install creates .claude/ and writes six entries with the right matcher, timeout and command', () => {
    expect(fs.existsSync(path.dirname(file))).toBe(false);
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(r).toMatchObject({ changed: true, dryRun: false, path: file, updated: [], unchanged: [] });
    expect(r.rules.added).toEqual([wrapperRuleFor(LAUNCHER, undefined), EXIT_RULE]);
    expect(r.added).toEqual(SIX);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toBe(r.text);
    const s = JSON.parse(text) as Settings;
    expect(text).toBe(JSON.stringify(s, null, 2) + '\n');
    expect(Object.keys(s)).toEqual(['hooks', 'permissions']);
    expect(Object.keys(s.hooks!)).toEqual(SIX);
    for (const [event, exp] of Object.entries(EXPECTED)) {
      const groups = s.hooks![event]!;
      expect(groups).toHaveLength(1);
      const want: Group = {
        ...(exp.matcher ? { matcher: exp.matcher } : {}),
        hooks: [
          {
            type: 'command',
            command: `'${LAUNCHER}' agent hook ${exp.cli}`,
            timeout: exp.timeout,
            ...(exp.onFailure ? { onFailure: exp.onFailure } : {}),
          },
        ],
      };
      expect(groups[0]).toEqual(want);
      if (!exp.matcher) expect('matcher' in groups[0]!).toBe(false);
    }
    expect(s.permissions).toEqual({ allow: [wrapperRuleFor(LAUNCHER, undefined), EXIT_RULE] });
    expect(tmpFilesLeft()).toEqual([]);
  });

  it('second install is byte-identical, reports changed:false and does not rewrite the file', () => {
    installClaude({ settingsPath: file, launcher: LAUNCHER });
    const before = fs.readFileSync(file, 'utf8');
    const ino = fs.statSync(file).ino;
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(r.changed).toBe(false);
    expect(r.added).toEqual([]);
    expect(r.updated).toEqual([]);
    expect(r.unchanged).toEqual(SIX);
    expect(r.rules).toEqual({ changed: false, added: [], removed: [], blanketRemoved: [] });
    expect(r.text).toBe(before);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(fs.statSync(file).ino).toBe(ino); // not replaced by a rename
  });

  it('an already complete install in another indentation is left alone (no reformatting)', () => {
    installClaude({ settingsPath: file, launcher: LAUNCHER });
    const fourSpaces = JSON.stringify(read(), null, 4);
    fs.writeFileSync(file, fourSpaces);
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(r.changed).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(fourSpaces);
  });

  it("preserves unrelated keys, key order and the user's hooks in the same matcher group and in other groups", () => {
    const userBash: Handler = { type: 'command', command: 'my-linter --bash', timeout: 5, statusMessage: 'lint' };
    const userEdit: Handler = { type: 'command', command: 'my-formatter' };
    const userStart: Handler = { type: 'command', command: 'echo hi' };
    const original = {
      $schema: 'https://json.schemastore.org/claude-code-settings.json',
      model: 'opus',
      hooks: {
        Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
        PreToolUse: [
          // the user's group for Bash, which an older pgx (or the user) put pgx's entry into
          {
            matcher: 'Bash',
            hooks: [userBash, { type: 'command', command: '/old/pgx agent hook pre-tool-use', timeout: 60 }],
          },
          { matcher: 'Edit|Write', hooks: [userEdit] },
        ],
        SessionStart: [{ matcher: 'startup', hooks: [userStart] }],
      },
      env: { FOO: '1' },
      permissions: { allow: ['Bash(npm test:*)'], deny: ['Read(./.env)'] },
    };
    write(original);
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(r.changed).toBe(true);
    const s = read();
    expect(Object.keys(s)).toEqual(['$schema', 'model', 'hooks', 'env', 'permissions']);
    expect(s.$schema).toBe(original.$schema);
    expect(s.env).toEqual(original.env);
    // The user's rules stay as they were, in place; pgx's two are appended.
    expect(s.permissions).toEqual({
      ...original.permissions,
      allow: [...(original.permissions as { allow: string[] }).allow, wrapperRuleFor(LAUNCHER, undefined), EXIT_RULE],
    });
    expect(Object.keys(s.hooks!)).toEqual([
      'Stop',
      'PreToolUse',
      'SessionStart',
      'UserPromptSubmit',
      'SubagentStart',
      'SubagentStop',
      'SessionEnd',
    ]);
    expect(s.hooks!.Stop).toEqual(original.hooks.Stop);
    // PreToolUse: pgx's entry matches more than Bash now, so it leaves the user's Bash group for a group of its own
    expect(s.hooks!.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [userBash] },
      { matcher: 'Edit|Write', hooks: [userEdit] },
      {
        matcher: PRE_TOOL_USE_MATCHER,
        hooks: [{ type: 'command', command: `'${LAUNCHER}' agent hook pre-tool-use`, timeout: 60, onFailure: 'block' }],
      },
    ]);
    // SessionStart: the user's group is kept as is, pgx gets its own group (no matcher) after it
    expect(s.hooks!.SessionStart).toEqual([
      { matcher: 'startup', hooks: [userStart] },
      { hooks: [{ type: 'command', command: `'${LAUNCHER}' agent hook session-start`, timeout: 30 }] },
    ]);
    expect(r.updated).toEqual(['PreToolUse']);
    expect(r.added).toEqual(['SessionStart', 'UserPromptSubmit', 'SubagentStart', 'SubagentStop', 'SessionEnd']);

    // Uninstall takes out exactly pgx's entries: the user's group keeps its own hook.
    const u = uninstallClaude({ settingsPath: file });
    expect(u.changed).toBe(true);
    expect(u.removed.sort()).toEqual([...SIX].sort());
    const after = read();
    expect(after.hooks).toEqual({
      Stop: original.hooks.Stop,
      PreToolUse: [
        { matcher: 'Bash', hooks: [userBash] },
        { matcher: 'Edit|Write', hooks: [userEdit] },
      ],
      SessionStart: original.hooks.SessionStart,
    });
    expect(Object.keys(after)).toEqual(Object.keys(original));
  });

  it('completes an older four-entry install to six in place, without duplicates', () => {
    const old = '/usr/local/bin/pgx';
    write({
      hooks: {
        SessionStart: [oldStyleEntry(`'${old}'`, 'session-start', 30)],
        UserPromptSubmit: [oldStyleEntry(`'${old}'`, 'user-prompt-submit', 10)],
        PreToolUse: [oldStyleEntry(`'${old}'`, 'pre-tool-use', 60, 'Bash')],
        SessionEnd: [oldStyleEntry(`'${old}'`, 'session-end', 10)],
      },
    });
    const insp = inspectClaudeInstall(file);
    expect(insp.count).toBe(4);
    expect(insp.olderPartial).toBe(true);
    expect(insp.entries.PreToolUse!.failsOpen).toBe(true); // written before onFailure: the doctor warns

    const r = installClaude({ settingsPath: file, launcher: old });
    expect(r.added).toEqual(['SubagentStart', 'SubagentStop']);
    expect(r.updated).toEqual(['PreToolUse']); // gains "onFailure": "block", in place
    expect(r.unchanged).toEqual(['SessionStart', 'UserPromptSubmit', 'SessionEnd']);
    const s = read();
    expect(Object.keys(s.hooks!)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'SessionEnd',
      'SubagentStart',
      'SubagentStop',
    ]);
    for (const event of SIX) {
      expect(pgxHandlers(s, event)).toHaveLength(1);
      expect(s.hooks![event]).toHaveLength(1);
    }
    const after = inspectClaudeInstall(file);
    expect(after.count).toBe(6);
    expect(after.entries.PreToolUse!.failsOpen).toBeUndefined();
    expect(after.olderPartial).toBe(false);
    expect(installClaude({ settingsPath: file, launcher: old }).changed).toBe(false);
  });

  it('updates a moved launcher (and a changed timeout) in place, keeping positions', () => {
    const userHook: Handler = { type: 'command', command: 'audit-log' };
    const userHook2: Handler = { type: 'command', command: 'cleanup-tmp', timeout: 1 };
    write({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [{ type: 'command', command: `'/old/place/pgx' agent hook pre-tool-use`, timeout: 60 }],
          },
          { matcher: 'Bash', hooks: [userHook] },
        ],
        SessionEnd: [
          {
            hooks: [
              userHook,
              { type: 'command', command: '/old/place/pgx agent hook session-end', timeout: 1 },
              userHook2,
            ],
          },
        ],
      },
    });
    const r = installClaude({ settingsPath: file, launcher: '/new/place/pgx' });
    expect(r.updated).toEqual(['PreToolUse', 'SessionEnd']);
    const s = read();
    expect(s.hooks!.PreToolUse![0]!.hooks).toEqual([
      { type: 'command', command: `'/new/place/pgx' agent hook pre-tool-use`, timeout: 60, onFailure: 'block' },
    ]);
    expect(s.hooks!.PreToolUse![1]!.hooks).toEqual([userHook]);
    expect(s.hooks!.PreToolUse).toHaveLength(2);
    expect(s.hooks!.SessionEnd).toEqual([
      {
        hooks: [
          userHook,
          { type: 'command', command: `'/new/place/pgx' agent hook session-end`, timeout: 10 },
          userHook2,
        ],
      },
    ]);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('/old/place');
    expect(inspectClaudeInstall(file).launcherPaths).toEqual(['/new/place/pgx']);
  });

  it('collapses duplicated pgx entries, removes pgx entries filed under the wrong event, fixes a pgx-only group matcher', () => {
    const cmd = (cli: string) => `'${LAUNCHER}' agent hook ${cli}`;
    write({
      hooks: {
        SessionStart: [
          { hooks: [{ type: 'command', command: cmd('session-start'), timeout: 30 }] },
          { hooks: [{ type: 'command', command: '/elsewhere/pgx agent hook session-start', timeout: 30 }] },
          {
            matcher: 'startup',
            hooks: [
              { type: 'command', command: 'echo mine' },
              { type: 'command', command: cmd('session-start') },
            ],
          },
        ],
        PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: cmd('pre-tool-use'), timeout: 60 }] }],
        Stop: [{ hooks: [{ type: 'command', command: cmd('subagent-stop') }] }],
      },
    });
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER });
    const s = read();
    for (const event of SIX) expect(pgxHandlers(s, event)).toHaveLength(1);
    expect(s.hooks!.SessionStart).toEqual([
      { hooks: [{ type: 'command', command: cmd('session-start'), timeout: 30 }] },
      { matcher: 'startup', hooks: [{ type: 'command', command: 'echo mine' }] },
    ]);
    expect(s.hooks!.PreToolUse).toEqual([
      {
        matcher: PRE_TOOL_USE_MATCHER,
        hooks: [{ type: 'command', command: cmd('pre-tool-use'), timeout: 60, onFailure: 'block' }],
      },
    ]);
    expect(s.hooks!.Stop).toBeUndefined(); // the stray entry was its only content
    expect(r.updated).toEqual(expect.arrayContaining(['SessionStart', 'PreToolUse', 'Stop']));
    expect(installClaude({ settingsPath: file, launcher: LAUNCHER }).changed).toBe(false);
  });

  it('fixes only a wrong matcher on a pgx-only group (matcher key first), in place', () => {
    installClaude({ settingsPath: file, launcher: LAUNCHER });
    const s = read();
    delete s.hooks!.PreToolUse![0]!.matcher;
    s.hooks!.SessionStart![0] = { matcher: 'startup', ...s.hooks!.SessionStart![0]! };
    write(s);
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(r.changed).toBe(true);
    expect(r.updated).toEqual(['SessionStart', 'PreToolUse']);
    const after = read();
    expect(Object.keys(after.hooks!.PreToolUse![0]!)).toEqual(['matcher', 'hooks']);
    expect(after.hooks!.PreToolUse![0]!.matcher).toBe(PRE_TOOL_USE_MATCHER);
    expect('matcher' in after.hooks!.SessionStart![0]!).toBe(false);
    expect(installClaude({ settingsPath: file, launcher: LAUNCHER }).changed).toBe(false);
  });

  it('quotes a launcher with spaces and a single quote so that sh runs it', () => {
    const binDir = path.join(dir, `my tools`, `it's here`);
    fs.mkdirSync(binDir, { recursive: true });
    const launcher = path.join(binDir, 'pgx launcher');
    // A fake launcher that prints its arguments, one per line.
    fs.writeFileSync(launcher, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done\n`, { mode: 0o755 });

    installClaude({ settingsPath: file, launcher });
    const s = read();
    const command = s.hooks!.PreToolUse![0]!.hooks[0]!.command;
    expect(command).toBe(`'${launcher.replace(/'/g, `'\\''`)}' agent hook pre-tool-use`);

    // shell-quote parses the command into exactly [launcher, agent, hook, pre-tool-use]
    expect(shParse(command)).toEqual([launcher, 'agent', 'hook', 'pre-tool-use']);
    // sh parses the launcher part back to the original path
    const prefix = command.slice(0, command.indexOf(' agent hook '));
    expect(execFileSync('sh', ['-c', `printf '%s\\n' ${prefix}`], { encoding: 'utf8' })).toBe(launcher + '\n');
    // and running the hook command through sh actually invokes the launcher with the right arguments
    expect(execFileSync('sh', ['-c', command], { encoding: 'utf8' })).toBe('agent\nhook\npre-tool-use\n');

    // The wrapper rule names the bare launcher: Claude Code matches it against the quoted one too.
    expect(s.permissions!.allow).toEqual([`Bash(${launcher} agent exec --agent * --cwd * -- *)`, EXIT_RULE]);

    // Inspection unquotes it and finds the file.
    const insp = inspectClaudeInstall(file);
    expect(insp.entries.PreToolUse).toMatchObject({ present: true, launcher, launcherExists: true });
    expect(insp.launcherPaths).toEqual([launcher]);
    expect(insp.rules).toEqual({ blanket: [], wrapper: [wrapperRuleFor(launcher, undefined)], exit: true });
  });
});

describe('permission rules', () => {
  const W = wrapperRuleFor(LAUNCHER, '/home/me/shop')!;
  it("are added once, after the user's rules, and create permissions.allow when needed", () => {
    write({ permissions: { deny: ['Bash(rm:*)'] } });
    const r1 = installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/home/me/shop' });
    expect(r1.rules.added).toEqual([W, EXIT_RULE]);
    expect(read().permissions).toEqual({ deny: ['Bash(rm:*)'], allow: [W, EXIT_RULE] });
    const r2 = installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/home/me/shop' });
    expect(r2.rules.changed).toBe(false);
    expect(r2.changed).toBe(false);
  });

  it("removes an older install's blanket rule wherever it is, and says so; replaces a stale wrapper rule", () => {
    write({
      permissions: {
        allow: [
          'Bash(git status)',
          `Bash('/old/pgx' agent exec:*)`,
          'Read(*)',
          `Bash(/older/pgx agent exec:*)`,
          'Bash(/old/pgx agent exec --agent * --cwd /elsewhere -- *)',
          EXIT_RULE,
        ],
      },
    });
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/home/me/shop' });
    expect(r.rules.blanketRemoved).toEqual([`Bash('/old/pgx' agent exec:*)`, `Bash(/older/pgx agent exec:*)`]);
    expect(read().permissions!.allow).toEqual(['Bash(git status)', 'Read(*)', W, EXIT_RULE]);
  });

  it("keeps a user's own Bash(exit) (adds none), and uninstall leaves it", () => {
    write({ permissions: { allow: [EXIT_RULE, 'Bash(ls)'] } });
    installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/p' });
    expect(read().permissions!.allow).toEqual([EXIT_RULE, 'Bash(ls)', wrapperRuleFor(LAUNCHER, '/p')]);
    const u = uninstallClaude({ settingsPath: file });
    expect(u.rulesRemoved).toEqual([wrapperRuleFor(LAUNCHER, '/p')]);
    expect(read().permissions!.allow).toEqual([EXIT_RULE, 'Bash(ls)']);
  });

  it('rules:false writes none, removes pgx rules already there, and still removes a blanket rule', () => {
    write({ permissions: { allow: [`Bash('/old/pgx' agent exec:*)`, 'Bash(ls)'] } });
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/p', rules: false });
    expect(r.rules.blanketRemoved).toEqual([`Bash('/old/pgx' agent exec:*)`]);
    expect(read().permissions!.allow).toEqual(['Bash(ls)']);
    installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/p' });
    installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: '/p', rules: false });
    expect(read().permissions!.allow).toEqual(['Bash(ls)']);
  });

  it('a path a rule cannot hold: no wrapper rule, and the plan says why', () => {
    const r = installClaude({ settingsPath: file, launcher: '/opt/pgx (2)/pgx', projectDir: '/p' });
    expect(r.rulesSkipped).toMatch(/cannot hold/);
    expect(read().permissions).toBeUndefined();
  });
});

describe('uninstallClaude', () => {
  it('restores the file byte-for-byte to what it was before install', () => {
    const original = write({
      model: 'sonnet',
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard.sh' }] }],
        Notification: [{ hooks: [{ type: 'command', command: 'beep' }] }],
      },
      permissions: { allow: ['Bash(npm test:*)'] },
      statusLine: { type: 'command', command: 'status.sh' },
    });
    installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(read().permissions!.allow).toHaveLength(3);
    const u = uninstallClaude({ settingsPath: file });
    expect(u).toMatchObject({
      changed: true,
      rulesRemoved: [wrapperRuleFor(LAUNCHER, undefined), EXIT_RULE],
      dryRun: false,
      path: file,
    });
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('drops the hooks object and permissions that only pgx had filled', () => {
    const original = write({ theme: 'dark' });
    installClaude({ settingsPath: file, launcher: LAUNCHER });
    uninstallClaude({ settingsPath: file });
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('leaves a file without pgx entries (and a missing file) alone', () => {
    const text = '{"hooks": {"Stop": []}, "x": 1}';
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    expect(uninstallClaude({ settingsPath: file }).changed).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    const missing = path.join(dir, 'nope', 'settings.json');
    expect(uninstallClaude({ settingsPath: missing })).toMatchObject({ changed: false, removed: [] });
    expect(fs.existsSync(path.dirname(missing))).toBe(false);
  });
});

describe('dry run', () => {
  it('writes nothing, on a fresh path and on an existing file', () => {
    const r = installClaude({ settingsPath: file, launcher: LAUNCHER, dryRun: true });
    expect(r).toMatchObject({ changed: true, dryRun: true });
    expect(r.added).toEqual(SIX);
    expect(fs.existsSync(path.dirname(file))).toBe(false);

    const text = write({ keep: true });
    const r2 = installClaude({ settingsPath: file, launcher: LAUNCHER, dryRun: true });
    expect(r2.changed).toBe(true);
    expect(JSON.parse(r2.text)).toHaveProperty('hooks.SessionStart');
    expect(fs.readFileSync(file, 'utf8')).toBe(text);

    installClaude({ settingsPath: file, launcher: LAUNCHER });
    const installed = fs.readFileSync(file, 'utf8');
    const u = uninstallClaude({ settingsPath: file, dryRun: true });
    expect(u.changed).toBe(true);
    expect(u.text).toBe(text);
    expect(fs.readFileSync(file, 'utf8')).toBe(installed);
  });
});

describe('invalid settings files', () => {
  it('invalid JSON: SettingsFileError naming the file, file untouched', () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const bad = '{ "hooks": { // a comment\n } }';
    fs.writeFileSync(file, bad);
    let err: unknown;
    try {
      installClaude({ settingsPath: file, launcher: LAUNCHER });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsFileError);
    const e = err as SettingsFileError;
    expect(e.code).toBe('SETTINGS_INVALID');
    expect(e.message).toContain(file);
    expect(e.hint).toContain(file);
    expect(e.hint).toMatch(/fix/i);
    expect(e.hint).toMatch(/move/i);
    expect(() => uninstallClaude({ settingsPath: file })).toThrow(SettingsFileError);
    expect(fs.readFileSync(file, 'utf8')).toBe(bad);
    expect(tmpFilesLeft()).toEqual([]);
    expect(inspectClaudeInstall(file)).toMatchObject({
      exists: true,
      count: 0,
      parseError: expect.stringContaining(file),
    });
  });

  it('a hooks value that is not an object, an event that is not an array, a non-object top level: same error', () => {
    for (const content of [
      '{"hooks": []}',
      '{"hooks": "x"}',
      '{"hooks": null}',
      '{"hooks": {"PreToolUse": {}}}',
      '[]',
      '42',
    ]) {
      const text = write(JSON.parse(content));
      expect(() => installClaude({ settingsPath: file, launcher: LAUNCHER }), content).toThrow(SettingsFileError);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
    }
    expect(() => planInstall('{"permissions": {"allow": "x"}}', { launcher: LAUNCHER })).toThrow(SettingsFileError);
    expect(() => planUninstall('{"hooks": 1}')).toThrow(SettingsFileError);
  });

  it('an empty file counts as {}', () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '');
    expect(installClaude({ settingsPath: file, launcher: LAUNCHER }).added).toEqual(SIX);
    expect(Object.keys(read().hooks!)).toEqual(SIX);
  });
});

describe('atomic writes', () => {
  it('keeps the file mode, leaves no temp file, and writes through a symlink', () => {
    write({ a: 1 });
    fs.chmodSync(file, 0o600);
    installClaude({ settingsPath: file, launcher: LAUNCHER });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(tmpFilesLeft()).toEqual([]);

    const real = path.join(dir, 'dotfiles', 'claude-settings.json');
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.writeFileSync(real, '{"b": 2}\n');
    const link = path.join(dir, 'home', '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(real, link);
    installClaude({ settingsPath: link, launcher: LAUNCHER });
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(real, 'utf8'))).toHaveProperty('hooks.SubagentStart');
  });
});

describe('inspectClaudeInstall', () => {
  it('reports a missing file', () => {
    const insp = inspectClaudeInstall(file);
    expect(insp).toMatchObject({
      path: file,
      exists: false,
      count: 0,
      olderPartial: false,
      launcherPaths: [],
      rules: { blanket: [], wrapper: [], exit: false },
    });
    expect(insp.parseError).toBeUndefined();
    expect(Object.keys(insp.entries)).toEqual(SIX);
    for (const e of SIX) expect(insp.entries[e]!.present).toBe(false);
  });

  it('reports count, commands, launcher existence, and a launcher that has vanished', () => {
    const launcher = path.join(dir, 'bin', 'pgx');
    fs.mkdirSync(path.dirname(launcher), { recursive: true });
    fs.writeFileSync(launcher, '#!/bin/sh\n', { mode: 0o755 });
    installClaude({ settingsPath: file, launcher });

    let insp = inspectClaudeInstall(file);
    expect(insp).toMatchObject({
      exists: true,
      count: 6,
      olderPartial: false,
      launcherPaths: [launcher],
      rules: { wrapper: [wrapperRuleFor(launcher, undefined)], exit: true },
    });
    for (const h of HOOK_EVENTS) {
      expect(insp.entries[h.event]).toEqual({
        present: true,
        command: hookCommand(launcher, h.cli),
        launcher,
        launcherExists: true,
        transport: 'command',
      });
    }

    fs.rmSync(launcher);
    insp = inspectClaudeInstall(file);
    expect(insp.count).toBe(6);
    for (const e of SIX) expect(insp.entries[e]!.launcherExists).toBe(false);

    // An older install's blanket rule is reported as such.
    const s = read();
    s.permissions!.allow = [`Bash('/somewhere/else' agent exec:*)`];
    write(s);
    expect(inspectClaudeInstall(file).rules).toEqual({
      blanket: [`Bash('/somewhere/else' agent exec:*)`],
      wrapper: [],
      exit: false,
    });
  });

  it('detects an older partial install and a partial one that is not the old shape', () => {
    write({
      hooks: {
        SessionStart: [oldStyleEntry('pgx', 'session-start', 30)],
        UserPromptSubmit: [oldStyleEntry('pgx', 'user-prompt-submit', 10)],
        PreToolUse: [oldStyleEntry('pgx', 'pre-tool-use', 60, 'Bash')],
        SessionEnd: [oldStyleEntry('pgx', 'session-end', 10)],
      },
    });
    const insp = inspectClaudeInstall(file);
    expect(insp.count).toBe(4);
    expect(insp.olderPartial).toBe(true);
    expect(insp.entries.SubagentStart).toEqual({ present: false });
    expect(insp.entries.SessionStart!.launcher).toBe('pgx'); // bare name: looked up on PATH
    expect(typeof insp.entries.SessionStart!.launcherExists).toBe('boolean');

    const s = read();
    delete s.hooks!.SessionEnd;
    s.hooks!.SubagentStop = [oldStyleEntry('pgx', 'subagent-stop', 30)];
    write(s);
    expect(inspectClaudeInstall(file)).toMatchObject({ count: 4, olderPartial: false });
  });

  it('launcherExists is undefined when the launcher uses a variable', () => {
    write({
      hooks: {
        SessionStart: [
          { hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/bin/pgx agent hook session-start' }] },
        ],
      },
    });
    const insp = inspectClaudeInstall(file);
    expect(insp.entries.SessionStart).toMatchObject({ present: true, launcherExists: undefined });
    expect(insp.count).toBe(1);
  });
});

describe('planInstall / planUninstall are pure', () => {
  it('plans from text without touching disk', () => {
    const p = planInstall(undefined, { launcher: LAUNCHER });
    expect(p.changed).toBe(true);
    expect(p.rules.added).toEqual([wrapperRuleFor(LAUNCHER, undefined), EXIT_RULE]);
    const again = planInstall(p.text, { launcher: LAUNCHER });
    expect(again).toMatchObject({ changed: false, text: p.text, added: [], updated: [] });
    const u = planUninstall(p.text);
    expect(u).toMatchObject({
      changed: true,
      rulesRemoved: [wrapperRuleFor(LAUNCHER, undefined), EXIT_RULE],
      text: '{}\n',
    });
    expect(u.removed.sort()).toEqual([...SIX].sort());
  });
});

describe("project scope: portable hooks in settings.json, this machine's rules in settings.local.json", () => {
  const projectDir = () => path.join(dir, 'proj');
  const localFile = () => path.join(dir, 'proj', '.claude', 'settings.local.json');
  const install = (extra: Partial<Parameters<typeof installClaude>[0]> = {}) =>
    installClaude({
      settingsPath: file,
      launcher: LAUNCHER,
      projectDir: projectDir(),
      rulesPath: localFile(),
      ...extra,
    });
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: projectDir(),
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
    });

  it('settings.json names no path of this machine; the two rules go to settings.local.json; a second install changes nothing', () => {
    const r = install();
    expect(r.added).toEqual(SIX);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain(LAUNCHER);
    expect(text).not.toContain(dir); // no project path either
    expect(text).not.toMatch(/"\/(opt|home|tmp|usr|root)\//); // no absolute path at all
    const s = read();
    expect(s.permissions).toBeUndefined();
    for (const [event, e] of Object.entries(EXPECTED)) {
      const groups = s.hooks![event]!;
      expect(groups).toHaveLength(1);
      expect(groups[0]!.matcher).toBe(e.matcher);
      expect(groups[0]!.hooks).toEqual([
        {
          type: 'command',
          command: portableHookCommand(e.cli as HookEvent),
          timeout: e.timeout,
          ...(e.onFailure ? { onFailure: e.onFailure } : {}),
        },
      ]);
    }
    expect(JSON.parse(fs.readFileSync(localFile(), 'utf8'))).toEqual({
      permissions: { allow: [wrapperRuleFor(LAUNCHER, projectDir()), EXIT_RULE] },
    });
    expect(r.rules.added).toEqual([wrapperRuleFor(LAUNCHER, projectDir()), EXIT_RULE]);
    expect(r.local).toMatchObject({
      path: localFile(),
      changed: true,
      ownHooks: false,
      gitIgnored: { status: 'not-in-git' },
    });
    const before = [fs.readFileSync(file, 'utf8'), fs.readFileSync(localFile(), 'utf8')];
    const again = install();
    expect(again).toMatchObject({ changed: false, added: [], updated: [], rules: { changed: false } });
    expect([fs.readFileSync(file, 'utf8'), fs.readFileSync(localFile(), 'utf8')]).toEqual(before);
  });

  it('the same settings.json on another machine (other launcher, other project path) installs byte-identically: nothing to commit', () => {
    install();
    const shared = fs.readFileSync(file, 'utf8');
    const other = path.join(dir, 'teammate', 'shop');
    fs.mkdirSync(path.join(other, '.claude'), { recursive: true });
    fs.writeFileSync(path.join(other, '.claude', 'settings.json'), shared);
    const r = installClaude({
      settingsPath: path.join(other, '.claude', 'settings.json'),
      launcher: '/home/mate/.local/lib/node_modules/@pgx-agent/cli/bin/pgx.js',
      projectDir: other,
      rulesPath: path.join(other, '.claude', 'settings.local.json'),
    });
    expect(r.added).toEqual([]);
    expect(r.updated).toEqual([]);
    expect(fs.readFileSync(path.join(other, '.claude', 'settings.json'), 'utf8')).toBe(shared);
    expect(
      JSON.parse(fs.readFileSync(path.join(other, '.claude', 'settings.local.json'), 'utf8')).permissions.allow[0],
    ).toBe(wrapperRuleFor('/home/mate/.local/lib/node_modules/@pgx-agent/cli/bin/pgx.js', other));
  });

  it("migrates an older project install (absolute hooks and rules in settings.json) in place, keeping the user's own rules", () => {
    write({ permissions: { allow: ['Bash(npm test:*)', wrapperRuleFor(LAUNCHER, projectDir())!, EXIT_RULE] } });
    installClaude({ settingsPath: file, launcher: LAUNCHER, projectDir: projectDir() }); // the old layout
    expect(read().hooks!.SessionStart![0]!.hooks[0]!.command).toBe(hookCommand(LAUNCHER, 'session-start'));
    const r = install();
    expect(r.updated).toEqual(SIX);
    const s = read();
    expect(s.permissions).toEqual({ allow: ['Bash(npm test:*)'] });
    expect(fs.readFileSync(file, 'utf8')).not.toContain(LAUNCHER);
    expect(r.rules.removed).toEqual([wrapperRuleFor(LAUNCHER, projectDir()), EXIT_RULE]);
    expect(r.rules.added).toEqual([wrapperRuleFor(LAUNCHER, projectDir()), EXIT_RULE]);
    expect(inspectClaudeInstall(file)).toMatchObject({ count: 6, launcherPaths: ['pgx'] });
  });

  it("--no-rules: no settings.local.json is created; an existing one loses pgx's rules only", () => {
    expect(install({ rules: false }).local).toMatchObject({ changed: false, gitIgnored: { status: 'no-file' } });
    expect(fs.existsSync(localFile())).toBe(false);
    install();
    const local = JSON.parse(fs.readFileSync(localFile(), 'utf8'));
    local.permissions.allow.unshift('Bash(ls:*)');
    local.model = 'opus';
    fs.writeFileSync(localFile(), JSON.stringify(local));
    install({ rules: false });
    expect(JSON.parse(fs.readFileSync(localFile(), 'utf8'))).toEqual({
      permissions: { allow: ['Bash(ls:*)'] },
      model: 'opus',
    });
  });

  it('a settings.local.json that runs pgx hooks itself (a --scope local install) keeps its rules: install and uninstall leave it', () => {
    installClaude({ settingsPath: localFile(), launcher: LAUNCHER, projectDir: projectDir() });
    const before = fs.readFileSync(localFile(), 'utf8');
    expect(install().local).toMatchObject({ changed: false, ownHooks: true });
    expect(uninstallClaude({ settingsPath: file, rulesPath: localFile() }).local).toMatchObject({
      changed: false,
      ownHooks: true,
    });
    expect(fs.readFileSync(localFile(), 'utf8')).toBe(before);
  });

  it('a broken settings.local.json: SettingsFileError, and neither file is written', () => {
    fs.mkdirSync(path.dirname(localFile()), { recursive: true });
    fs.writeFileSync(localFile(), '{ nope');
    expect(() => install()).toThrow(SettingsFileError);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readFileSync(localFile(), 'utf8')).toBe('{ nope');
  });

  it('in a git clone, settings.local.json is kept out of git by .git/info/exclude; uninstall removes exactly that, and both files', () => {
    fs.mkdirSync(projectDir(), { recursive: true });
    git(['init', '-q']);
    const exclude = path.join(projectDir(), '.git', 'info', 'exclude');
    const excludeBefore = fs.readFileSync(exclude, 'utf8');
    const r = install();
    expect(r.local!.gitIgnored).toEqual({ status: 'added', exclude });
    expect(git(['status', '--porcelain', '-uall'])).toBe('?? .claude/settings.json\n'); // settings.local.json is not offered
    expect(install().local!.gitIgnored).toEqual({ status: 'already' });
    expect(fs.readFileSync(exclude, 'utf8').match(/settings\.local\.json/g)).toHaveLength(1);
    const u = uninstallClaude({ settingsPath: file, rulesPath: localFile() });
    expect(u.rulesRemoved).toEqual([wrapperRuleFor(LAUNCHER, projectDir()), EXIT_RULE]);
    expect(u.local).toMatchObject({ changed: true, file_removed: true, gitExcludeRemoved: true });
    expect(fs.existsSync(localFile())).toBe(false);
    expect(fs.readFileSync(exclude, 'utf8')).toBe(excludeBefore);
    expect(read()).toEqual({});
    expect(uninstallClaude({ settingsPath: file, rulesPath: localFile() })).toMatchObject({
      changed: false,
      local: { changed: false, gitExcludeRemoved: false },
    }); // idempotent
  });

  it("a repository that already ignores settings.local.json (Claude Code's own ignore, a .gitignore): nothing added", () => {
    fs.mkdirSync(projectDir(), { recursive: true });
    git(['init', '-q']);
    fs.writeFileSync(path.join(projectDir(), '.gitignore'), '.claude/settings.local.json\n');
    const exclude = fs.readFileSync(path.join(projectDir(), '.git', 'info', 'exclude'), 'utf8');
    expect(install().local!.gitIgnored).toEqual({ status: 'already' });
    expect(fs.readFileSync(path.join(projectDir(), '.git', 'info', 'exclude'), 'utf8')).toBe(exclude);
  });
});

describe('portable hook commands, run by sh on a machine without pgx on PATH', () => {
  const run = (cli: HookEvent, payload: object, PATH = '/usr/bin:/bin') =>
    spawnSync('/bin/sh', ['-c', portableHookCommand(cli)], {
      input: JSON.stringify(payload),
      encoding: 'utf8',
      env: { PATH, HOME: dir },
    });
  const subagentBash = {
    session_id: 's',
    hook_event_name: 'PreToolUse',
    agent_id: 'a5550b0ae3d1c2c1c',
    tool_name: 'Bash',
    tool_input: { command: 'psql -c "select 1"' },
  };
  const parentBash = {
    session_id: 's',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'echo "agent_id" \'"agent_id"\' x' },
  };

  it("are recognised as pgx entries (install, uninstall, doctor, the hooks' own scope check)", () => {
    for (const h of HOOK_EVENTS) {
      expect(pgxCliOf({ type: 'command', command: portableHookCommand(h.cli) })).toBe(h.cli);
      expect(launcherOf(portableHookCommand(h.cli))).toBe('pgx');
    }
    expect(
      pgxCliOf({ type: 'command', command: 'command -v pgx >/dev/null 2>&1 && exec pgx agent hook nope; exit 0' }),
    ).toBeUndefined();
  });

  it("a subagent's Bash is refused (exit 2, the reason on stderr); the parent's goes on (exit 0, no output)", () => {
    const sub = run('pre-tool-use', subagentBash);
    expect(sub.status).toBe(2);
    expect(sub.stderr).toMatch(/^pgx is not on PATH on this machine: this subagent Bash command is refused/);
    const parent = run('pre-tool-use', parentBash);
    expect(parent.status).toBe(0);
    expect(parent.stdout + parent.stderr).toBe('');
    // no grep on PATH: fails closed for everyone (stricter), never open for a subagent
    const emptyBin = path.join(dir, 'empty-bin');
    fs.mkdirSync(emptyBin);
    expect(run('pre-tool-use', parentBash, emptyBin).status).toBe(2);
  });

  it('SessionStart prints a visible warning and tells the model; SubagentStart tells the subagent; the others are silent', () => {
    const start = run('session-start', { session_id: 's', hook_event_name: 'SessionStart', source: 'startup' });
    expect(start.status).toBe(0);
    const j = JSON.parse(start.stdout);
    expect(j.systemMessage).toMatch(/^pgx is not on PATH on this machine: every subagent Bash command is refused/);
    expect(j.hookSpecificOutput).toMatchObject({
      hookEventName: 'SessionStart',
      additionalContext: expect.stringContaining('subagents cannot run Bash commands'),
    });
    const sub = run('subagent-start', {
      session_id: 's',
      hook_event_name: 'SubagentStart',
      agent_id: 'a1',
      agent_type: 'general-purpose',
    });
    expect(JSON.parse(sub.stdout).hookSpecificOutput).toMatchObject({
      hookEventName: 'SubagentStart',
      additionalContext: expect.stringContaining('your Bash commands will be refused'),
    });
    for (const cli of ['user-prompt-submit', 'subagent-stop', 'session-end'] as const) {
      const r = run(cli, { session_id: 's' });
      expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    }
  });

  it('with pgx on PATH, the hook is pgx itself (exec: its stdin, output and exit status)', () => {
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'pgx'), '#!/bin/sh\necho "args=$*"; cat; exit 7\n', { mode: 0o755 });
    const r = run('pre-tool-use', subagentBash, `${bin}:/usr/bin:/bin`);
    expect(r.status).toBe(7);
    expect(r.stdout).toBe(`args=agent hook pre-tool-use\n${JSON.stringify(subagentBash)}`);
  });
});

/**
 * What `install --transport http` (retired: decision 444) wrote: HTTP entries for PreToolUse, SubagentStart,
 * SubagentStop and UserPromptSubmit, the sh keepers, and the secret in `env`; command entries elsewhere.
 */
function oldHttpInstall(userHook: Handler): Settings {
  const url = (cli: string) => `http://127.0.0.1:41234/hook/${cli}?project=%2Fp`;
  const http = (cli: string, timeout: number, onFailure?: string) => ({
    type: 'http',
    url: url(cli),
    headers: { Authorization: 'Bearer $PGX_HOOK_SECRET' },
    allowedEnvVars: ['PGX_HOOK_SECRET'],
    timeout,
    ...(onFailure ? { onFailure } : {}),
  });
  const keeper = (cli: string, wait = false) => ({
    type: 'command',
    command: `: pgx http keeper for ${cli}; f='/run/user/0/pgx/http.json'; exit 0`,
    timeout: wait ? 10 : 5,
    ...(wait ? {} : { async: true }),
  });
  const cmd = (cli: string, timeout: number) => ({ type: 'command', command: hookCommand(LAUNCHER, cli), timeout });
  return {
    env: { PGX_HOOK_SECRET: 'a'.repeat(64), OTHER: 'kept' },
    hooks: {
      SessionStart: [
        { hooks: [cmd('session-start', 30) as Handler] },
        { hooks: [keeper('session-start', true) as Handler] },
      ],
      UserPromptSubmit: [
        { hooks: [http('user-prompt-submit', 10) as never] },
        { hooks: [keeper('user-prompt-submit') as Handler] },
      ],
      PreToolUse: [
        { matcher: 'Bash', hooks: [userHook, http('pre-tool-use', 60, 'block') as never] },
        { matcher: 'Bash', hooks: [keeper('pre-tool-use') as Handler] },
      ],
      SubagentStart: [{ hooks: [http('subagent-start', 60) as never] }],
      SubagentStop: [{ hooks: [http('subagent-stop', 30) as never] }],
      SessionEnd: [{ hooks: [cmd('session-end', 10) as Handler] }],
    },
  };
}

describe('an install of the retired HTTP transport (decision 444)', () => {
  const userHook: Handler = { type: 'command', command: 'my-audit-hook', timeout: 5 };

  it("install moves it back to command hooks: one rewriter in the HTTP entry's place, keepers and secret gone, and says so", () => {
    const plan = planInstall(JSON.stringify(oldHttpInstall(userHook)), { launcher: LAUNCHER });
    const s = JSON.parse(plan.text) as Settings;
    expect(plan.httpRemoved).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'SubagentStart',
      'SubagentStop',
      'env.PGX_HOOK_SECRET',
    ]);
    expect(s.env).toEqual({ OTHER: 'kept' });
    const all = Object.values(s.hooks!).flatMap((gs) => gs.flatMap((g) => g.hooks));
    expect(all.filter((h) => h.type === 'http' || /pgx http keeper/.test(h.command))).toEqual([]);
    // the command entry replaced the HTTP entry in the same write (one rewriter at every moment): in a group of its
    // own, since it matches more than the user's Bash group does (decision 493); the user's hook stays where it was
    expect(s.hooks!.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [userHook] },
      {
        matcher: PRE_TOOL_USE_MATCHER,
        hooks: [{ type: 'command', command: hookCommand(LAUNCHER, 'pre-tool-use'), timeout: 60, onFailure: 'block' }],
      },
    ]);
    for (const [event, e] of Object.entries(EXPECTED))
      expect(
        all.filter((h) => h.command === hookCommand(LAUNCHER, e.cli)),
        event,
      ).toHaveLength(1);
    // and again: nothing left to remove
    expect(planInstall(plan.text, { launcher: LAUNCHER }).httpRemoved).toBeUndefined();
  });

  it("uninstall removes its entries, keepers and secret; a PGX_HOOK_SECRET beside no HTTP entry is the user's own", () => {
    const u = planUninstall(JSON.stringify(oldHttpInstall(userHook)));
    const s = JSON.parse(u.text) as Settings;
    expect(s.env).toEqual({ OTHER: 'kept' });
    expect(s.hooks).toEqual({ PreToolUse: [{ matcher: 'Bash', hooks: [userHook] }] });
    expect(u.removed).toContain('env.PGX_HOOK_SECRET');
    const own = planUninstall(JSON.stringify({ env: { PGX_HOOK_SECRET: 'mine' } }));
    expect(own.changed).toBe(false);
  });
});
