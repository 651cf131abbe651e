// pgx agent install copilot: the native hooks file (pgx's own .github/hooks/pgx.json, or the hooks of
// $COPILOT_HOME/settings.json), idempotent, the user's entries kept, no machine path in the project file, trust read
// from Copilot's config.json, and uninstall; and the hook layer's two translations (payloads in, answers out). The real
// binary running these hooks: tests/e2e/copilot-isolation.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  COPILOT_HOOK_EVENTS,
  copilotHookCommand,
  installCopilot,
  isPortableCopilotCommand,
  PGX_COPILOT_HOOK_RE,
  planCopilotHooks,
  portableCopilotHookCommand,
  projectTrusted,
  trustedFoldersOf,
  uninstallCopilot,
} from '../../src/install/copilot.js';
import { toPgxPayload } from '../../src/hooks/copilot/payloads.js';
import { toCopilotOutput } from '../../src/hooks/copilot/answer.js';
import { spawnSync } from 'node:child_process';

const LAUNCHER = '/opt/pgx/bin/pgx';
let dir: string;
let home: string;
let proj: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgx-copilot-install-'));
  home = path.join(dir, 'copilot-home');
  proj = path.join(dir, 'proj');
  fs.mkdirSync(home);
  fs.mkdirSync(proj);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const projectFile = () => path.join(proj, '.github', 'hooks', 'pgx.json');
const userFile = () => path.join(home, 'settings.json');
type Hooks = {
  version?: number;
  hooks: Record<string, { type: string; bash: string; timeoutSec: number }[]>;
  [k: string]: unknown;
};
const read = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8')) as Hooks;
const install = (scope: 'project' | 'user', o: { dryRun?: boolean; launcher?: string } = {}) =>
  installCopilot({ scope, projectDir: proj, copilotHome: home, launcher: o.launcher ?? LAUNCHER, dryRun: o.dryRun });

describe('install copilot, project scope (the default)', () => {
  it("writes pgx's own .github/hooks/pgx.json: six native events, version 1, no path of this machine", () => {
    const r = install('project');
    expect(r).toMatchObject({ path: projectFile(), changed: true, hooks_launcher: 'pgx', project_trusted: false });
    expect(r.added).toEqual(COPILOT_HOOK_EVENTS.map((e) => e.event));
    const f = read(projectFile());
    expect(f.version).toBe(1);
    expect(Object.keys(f.hooks)).toEqual([
      'sessionStart',
      'userPromptSubmitted',
      'preToolUse',
      'subagentStart',
      'subagentStop',
      'sessionEnd',
    ]);
    for (const e of COPILOT_HOOK_EVENTS) {
      expect(f.hooks[e.event]).toEqual([
        { type: 'command', bash: portableCopilotHookCommand(e.cli), timeoutSec: e.timeoutSec },
      ]);
      expect(isPortableCopilotCommand(f.hooks[e.event]![0]!.bash)).toBe(true);
    }
    const text = fs.readFileSync(projectFile(), 'utf8');
    expect(text).not.toContain(LAUNCHER);
    expect(text).not.toContain(dir);
  });

  it('is idempotent byte for byte, and a dry run writes nothing', () => {
    expect(install('project', { dryRun: true }).changed).toBe(true);
    expect(fs.existsSync(projectFile())).toBe(false);
    install('project');
    const before = fs.readFileSync(projectFile(), 'utf8');
    const again = install('project', { launcher: '/elsewhere/pgx' }); // the project file names no launcher
    expect(again).toMatchObject({ changed: false, added: [], updated: [] });
    expect(again.unchanged).toHaveLength(6);
    expect(fs.readFileSync(projectFile(), 'utf8')).toBe(before);
  });

  it("keeps the user's own entries in the file, and puts back an edited pgx entry in place", () => {
    fs.mkdirSync(path.dirname(projectFile()), { recursive: true });
    const mine = { type: 'command', bash: './my-audit.sh', timeoutSec: 5 };
    fs.writeFileSync(
      projectFile(),
      JSON.stringify({
        version: 1,
        hooks: {
          preToolUse: [
            mine,
            {
              type: 'command',
              bash: 'command -v pgx >/dev/null 2>&1 && exec pgx agent copilot-hook pre-tool-use; exit 0',
              timeoutSec: 3,
            },
          ],
        },
      }),
    );
    const r = install('project');
    expect(r.updated).toEqual(['preToolUse']);
    const f = read(projectFile());
    expect(f.hooks.preToolUse).toEqual([
      mine,
      { type: 'command', bash: portableCopilotHookCommand('pre-tool-use'), timeoutSec: 60 },
    ]);
    // uninstall takes pgx's entries only; the file stays with the user's
    const u = uninstallCopilot({ scope: 'project', projectDir: proj, copilotHome: home });
    expect(u).toMatchObject({ changed: true, file_removed: false });
    expect(read(projectFile()).hooks).toEqual({ preToolUse: [mine] });
  });

  it('uninstall removes the file pgx made, and the directories it leaves empty; twice is a no-op', () => {
    install('project');
    const u = uninstallCopilot({ scope: 'project', projectDir: proj, copilotHome: home });
    expect(u).toMatchObject({ changed: true, file_removed: true, removed: COPILOT_HOOK_EVENTS.map((e) => e.event) });
    expect(fs.existsSync(path.join(proj, '.github'))).toBe(false);
    expect(uninstallCopilot({ scope: 'project', projectDir: proj, copilotHome: home })).toMatchObject({
      changed: false,
      file_removed: false,
    });
  });

  it("reads the project's trust from Copilot's config.json (comment lines and all); never writes it", () => {
    const config = path.join(home, 'config.json');
    fs.writeFileSync(
      config,
      `// User settings belong in settings.json.\n// This file is managed automatically.\n${JSON.stringify({ trustedFolders: [dir] })}\n`,
    );
    expect(trustedFoldersOf(fs.readFileSync(config, 'utf8'))).toEqual([dir]);
    expect(projectTrusted(home, proj)).toBe(true); // a folder above it is trusted
    expect(projectTrusted(home, `${dir}-other`)).toBe(false);
    const before = fs.readFileSync(config, 'utf8');
    expect(install('project').project_trusted).toBe(true);
    expect(fs.readFileSync(config, 'utf8')).toBe(before);
    expect(trustedFoldersOf('not json')).toEqual([]);
  });
});

describe('install copilot --scope user', () => {
  it("adds the hooks to $COPILOT_HOME/settings.json with this machine's launcher, keeping every other setting", () => {
    fs.writeFileSync(
      userFile(),
      JSON.stringify({
        model: 'gpt-4.1',
        hooks: { sessionStart: [{ type: 'command', bash: 'echo hi', timeoutSec: 1 }] },
      }),
    );
    const r = install('user');
    expect(r).toMatchObject({ path: userFile(), changed: true, hooks_launcher: LAUNCHER, project_trusted: null });
    const f = read(userFile());
    expect(f.model).toBe('gpt-4.1');
    expect(f.version).toBeUndefined();
    expect(f.hooks.sessionStart).toEqual([
      { type: 'command', bash: 'echo hi', timeoutSec: 1 },
      { type: 'command', bash: `'${LAUNCHER}' agent copilot-hook session-start`, timeoutSec: 30 },
    ]);
    expect(install('user').changed).toBe(false);
    // a moved launcher: the entries follow, in place
    expect(install('user', { launcher: '/new/pgx' }).updated).toHaveLength(6);
    expect(read(userFile()).hooks.preToolUse).toEqual([
      { type: 'command', bash: `'/new/pgx' agent copilot-hook pre-tool-use`, timeoutSec: 60 },
    ]);
    const u = uninstallCopilot({ scope: 'user', projectDir: proj, copilotHome: home });
    expect(u.file_removed).toBe(false);
    expect(read(userFile())).toEqual({
      model: 'gpt-4.1',
      hooks: { sessionStart: [{ type: 'command', bash: 'echo hi', timeoutSec: 1 }] },
    });
  });

  it('refuses a settings file it cannot read, untouched', () => {
    fs.writeFileSync(userFile(), '{ "hooks": [] }');
    expect(() => install('user')).toThrow(/"hooks" is not an object/);
    expect(fs.readFileSync(userFile(), 'utf8')).toBe('{ "hooks": [] }');
  });
});

describe('the commands', () => {
  it('recognises every form, and no other', () => {
    for (const e of COPILOT_HOOK_EVENTS) {
      expect(PGX_COPILOT_HOOK_RE.exec(copilotHookCommand(LAUNCHER, e.cli))?.[1]).toBe(e.cli);
      expect(PGX_COPILOT_HOOK_RE.exec(portableCopilotHookCommand(e.cli))?.[1]).toBe(e.cli);
    }
    expect(PGX_COPILOT_HOOK_RE.test("'/x/pgx' agent codex-hook pre-tool-use")).toBe(false);
    expect(() => copilotHookCommand('bad\npath', 'session-start')).toThrow();
    expect(planCopilotHooks(undefined, { file: 'x', remove: true })).toMatchObject({ changed: false, empty: true });
  });

  it("pgx not on PATH: the fallback denies a subagent's command in Copilot's form, lets the root's go", () => {
    const sh = (payload: object) =>
      spawnSync('sh', ['-c', portableCopilotHookCommand('pre-tool-use')], {
        input: JSON.stringify(payload),
        env: { PATH: '/usr/bin:/bin' },
        encoding: 'utf8',
      });
    const sub = sh({
      sessionId: 'c',
      toolName: 'bash',
      toolArgs: { command: 'psql' },
      agentId: 'c',
      parentAgentId: 'r',
    });
    expect(sub.status).toBe(0);
    expect(JSON.parse(sub.stdout)).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/pgx is not installed/),
    });
    const root = sh({ sessionId: 'r', toolName: 'bash', toolArgs: { command: 'psql' } });
    expect([root.status, root.stdout]).toEqual([0, '']);
  });
});

describe("the hook layer's translations", () => {
  it('a subagent payload: session_id is the root (parentAgentId), agent_id the child, bash is Bash', () => {
    expect(
      toPgxPayload({
        sessionId: 'child',
        timestamp: 1,
        cwd: '/p',
        toolName: 'bash',
        toolArgs: { command: 'psql', description: 'd' },
        agentId: 'child',
        agentType: 'general-purpose',
        parentAgentId: 'root',
      }),
    ).toEqual({
      session_id: 'root',
      cwd: '/p',
      agent_id: 'child',
      agent_type: 'general-purpose',
      tool_name: 'Bash',
      tool_input: { command: 'psql', description: 'd' },
      copilot_session_id: 'child',
    });
  });

  it("the root's payload, subagentStart (sessionId is the root's there), and what is not an object", () => {
    expect(toPgxPayload({ sessionId: 'root', cwd: '/p', toolName: 'task', toolArgs: { prompt: 'x' } })).toEqual({
      session_id: 'root',
      cwd: '/p',
      tool_name: 'task',
      tool_input: { prompt: 'x' },
    });
    expect(
      toPgxPayload({
        sessionId: 'root',
        cwd: '/p',
        transcriptPath: '/t',
        agentName: 'g',
        agentId: 'c',
        agentType: 'g',
        parentAgentId: 'root',
      }),
    ).toEqual({ session_id: 'root', cwd: '/p', transcript_path: '/t', agent_id: 'c', agent_type: 'g' });
    expect(toPgxPayload([1])).toEqual([1]);
    expect(toPgxPayload(null)).toBe(null);
  });

  it("answers in Copilot's form: a rewrite is modifiedArgs with no decision; a deny keeps its reason", () => {
    expect(
      toCopilotOutput({
        hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'x', description: 'd' } },
      }),
    ).toEqual({ modifiedArgs: { command: 'x', description: 'd' } });
    expect(
      toCopilotOutput({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'why',
        },
      }),
    ).toEqual({ permissionDecision: 'deny', permissionDecisionReason: 'why' });
    expect(toCopilotOutput(undefined)).toBeUndefined();
    expect(toCopilotOutput({ systemMessage: 'x' })).toBeUndefined();
  });
});
