/**
 * Proves the e2e harness itself: the REAL Claude Code CLI (pinned, see
 * scripts/install-claude-code.sh) runs offline against the scripted fake model, settings
 * hooks fire for the parent and for every subagent, a PreToolUse `updatedInput` rewrite is
 * what actually runs, sessions can be named/resumed, and a detached run can be killed as a
 * whole process group ("the terminal died") and its orphaned Bash shells cleaned up.
 *
 * No pgx code is involved: the hooks are a tiny logging script.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startFakeModel, waitFor, type FakeModel, type SubagentScript } from './fake-model.js';
import {
  CLAUDE_CODE_VERSION,
  claudeMissing,
  findClaudeBinary,
  findRunProcesses,
  runClaude,
  startClaude,
} from './claude.js';

const bin = findClaudeBinary();
if (!bin) console.warn(`SKIPPED e2e harness smoke test: ${claudeMissing()}`);

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'SubagentStart', 'SubagentStop', 'SessionEnd'] as const;

/**
 * The hook: appends its stdin payload as one JSON line to argv[2]. For PreToolUse it also
 * rewrites the Bash command. `updatedInput` replaces the whole input, so every original field
 * is sent back; no permissionDecision, so normal permission checks apply to the new command.
 */
const HOOK_SCRIPT = `
import { appendFileSync, readFileSync } from 'node:fs';
const raw = readFileSync(0, 'utf8');
appendFileSync(process.argv[2], JSON.stringify(JSON.parse(raw)) + '\\n');
const p = JSON.parse(raw);
if (p.hook_event_name === 'PreToolUse') {
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse',
    updatedInput: { ...p.tool_input, command: 'echo REWRITTEN; ' + p.tool_input.command } } }));
}
`;

interface HookPayload {
  hook_event_name: string;
  session_id: string;
  agent_id?: string;
  agent_type?: string;
  source?: string;
  reason?: string;
  tool_name?: string;
  tool_input?: { command?: string };
}

interface Project {
  root: string;
  cwd: string;
  home: string;
  hookLog: string;
  /** Parsed hook log lines so far. */
  events(): HookPayload[];
}

const roots: string[] = [];
afterAll(() => {
  // PGX_E2E_KEEP=1 keeps the temp dirs (transcripts, hook logs, debug files) for inspection.
  if (process.env.PGX_E2E_KEEP) console.warn(`kept e2e dirs: ${roots.join(' ')}`);
  else for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A temp project with logging hooks for all six events, and an empty HOME beside it. */
function makeProject(): Project {
  const root = mkdtempSync(join(tmpdir(), 'pgx-e2e-smoke-'));
  roots.push(root);
  const cwd = join(root, 'project');
  const home = join(root, 'home');
  const hookLog = join(root, 'hooks.jsonl');
  mkdirSync(join(cwd, '.claude'), { recursive: true });
  mkdirSync(home);
  const script = join(root, 'log-hook.mjs');
  writeFileSync(script, HOOK_SCRIPT);
  const handler = {
    type: 'command',
    command: `node ${JSON.stringify(script)} ${JSON.stringify(hookLog)}`,
    timeout: 30,
  };
  const hooks: Record<string, unknown> = Object.fromEntries(EVENTS.map((e) => [e, [{ hooks: [handler] }]]));
  hooks.PreToolUse = [{ matcher: 'Bash', hooks: [handler] }];
  writeFileSync(join(cwd, '.claude', 'settings.json'), JSON.stringify({ hooks }, null, 2));
  return {
    root,
    cwd,
    home,
    hookLog,
    events: () =>
      existsSync(hookLog)
        ? readFileSync(hookLog, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as HookPayload)
        : [],
  };
}

const ofType = (events: HookPayload[], name: string): HookPayload[] => events.filter((e) => e.hook_event_name === name);

/** Helpful context when an assertion fails. */
function describeRun(fake: FakeModel, out: { code: number | null; stderr: string }): string {
  return JSON.stringify(
    { code: out.code, stderr: out.stderr.slice(0, 2000), errors: fake.errors, log: fake.log },
    null,
    1,
  );
}

describe.skipIf(!bin)(`e2e harness: real Claude Code ${CLAUDE_CODE_VERSION} against the fake model`, () => {
  const claude = bin as string;

  it('fires all six hooks for a parent with 3 subagents, and a PreToolUse rewrite is what runs', async () => {
    const project = makeProject();
    const subagents: SubagentScript[] = ['alpha', 'beta', 'gamma'].map((m) => ({
      marker: m,
      commands: [`echo hello-${m}`],
    }));
    const fake = await startFakeModel({ subagents });
    const sessionId = randomUUID();
    try {
      const out = await runClaude({
        bin: claude,
        cwd: project.cwd,
        home: project.home,
        modelUrl: fake.url,
        prompt: 'Start the three e2e subagents.',
        sessionId,
        debugFile: join(project.root, 'debug.log'),
        timeoutMs: 60_000,
      });
      expect(out.code, describeRun(fake, out)).toBe(0);
      expect(fake.errors).toEqual([]);
      expect((JSON.parse(out.stdout) as { session_id: string }).session_id).toBe(sessionId);

      // The model saw each subagent's Bash output: the rewritten command ran, inside the subagent.
      for (const { marker } of subagents) {
        const results = fake.toolResults.get(marker) ?? [];
        expect(results, marker).toHaveLength(1);
        expect(results[0]).toContain('REWRITTEN');
        expect(results[0]).toContain(`hello-${marker}`);
      }
      // Background agents (the default): the parent got "Async agent launched" results.
      expect(fake.parentTexts.filter((t) => t.includes('Async agent launched'))).toHaveLength(3);

      const events = project.events();
      expect(ofType(events, 'SessionStart')).toHaveLength(1);
      expect(ofType(events, 'SessionStart')[0]?.source).toBe('startup');
      expect(ofType(events, 'SessionEnd')).toHaveLength(1);
      expect(events[0]?.hook_event_name).toBe('SessionStart');
      expect(events[events.length - 1]?.hook_event_name).toBe('SessionEnd');
      expect(ofType(events, 'UserPromptSubmit').length).toBeGreaterThanOrEqual(1);
      // One session id everywhere, subagents included.
      expect(new Set(events.map((e) => e.session_id))).toEqual(new Set([sessionId]));

      const starts = ofType(events, 'SubagentStart');
      const pres = ofType(events, 'PreToolUse');
      const stops = ofType(events, 'SubagentStop');
      expect(starts).toHaveLength(3);
      expect(pres).toHaveLength(3);
      expect(stops).toHaveLength(3);
      const agentIds = new Set(starts.map((e) => e.agent_id));
      expect(agentIds.size).toBe(3);
      for (const id of agentIds) expect(id).toMatch(/^a[0-9a-f]{16}$/);
      expect(new Set(pres.map((e) => e.agent_id))).toEqual(agentIds);
      expect(new Set(stops.map((e) => e.agent_id))).toEqual(agentIds);
      for (const p of pres) {
        expect(p.tool_name).toBe('Bash');
        expect(p.agent_type).toBe('general-purpose');
        // The hook sees the model's original command, before its own rewrite.
        expect(p.tool_input?.command).toMatch(/^echo hello-(alpha|beta|gamma)$/);
      }
      // The fake maps its markers to the CLI's agent ids (from "agentId: …" in tool_results).
      expect(new Set(fake.agentIds.values())).toEqual(agentIds);
      for (const p of pres) {
        const marker = /hello-(\w+)/.exec(p.tool_input?.command ?? '')?.[1] ?? '';
        expect(fake.agentIds.get(marker)).toBe(p.agent_id);
      }
      // Per agent: Start → PreToolUse → Stop. (Across agents events interleave.)
      for (const id of agentIds) {
        const mine = events.filter((e) => e.agent_id === id).map((e) => e.hook_event_name);
        expect(mine).toEqual(['SubagentStart', 'PreToolUse', 'SubagentStop']);
      }
      // The debug log records the hook's rewrite.
      expect(readFileSync(join(project.root, 'debug.log'), 'utf8')).toMatch(/modified tool input keys/);
    } finally {
      await fake.close();
    }
  });

  it('20 parallel subagents (one message with 20 Agent calls) each get SubagentStart, PreToolUse and SubagentStop', async () => {
    const project = makeProject();
    const subagents: SubagentScript[] = Array.from({ length: 20 }, (_, i) => ({
      marker: `p${i}`,
      commands: [`echo hello-p${i}`],
    }));
    const fake = await startFakeModel({ subagents });
    try {
      const out = await runClaude({
        bin: claude,
        cwd: project.cwd,
        home: project.home,
        modelUrl: fake.url,
        prompt: 'go',
      });
      expect(out.code, describeRun(fake, out)).toBe(0);
      expect(fake.errors).toEqual([]);
      for (const { marker } of subagents)
        expect(fake.toolResults.get(marker)?.[0], marker).toContain(`hello-${marker}`);
      const events = project.events();
      const ids = (name: string): Set<string | undefined> => new Set(ofType(events, name).map((e) => e.agent_id));
      expect(ofType(events, 'SubagentStart')).toHaveLength(20);
      expect(ofType(events, 'SubagentStop')).toHaveLength(20);
      expect(ids('SubagentStart').size).toBe(20);
      expect(ids('PreToolUse')).toEqual(ids('SubagentStart'));
      expect(ids('SubagentStop')).toEqual(ids('SubagentStart'));
      expect(new Set(fake.agentIds.values())).toEqual(ids('SubagentStart'));
    } finally {
      await fake.close();
    }
  });

  it('synchronous agents (run_in_background:false) run the same hooks without task notifications', async () => {
    const project = makeProject();
    const subagents: SubagentScript[] = ['one', 'two'].map((m) => ({
      marker: m,
      commands: [`echo a-${m}`, `echo b-${m}`],
    }));
    const fake = await startFakeModel({ subagents, background: false });
    try {
      const out = await runClaude({
        bin: claude,
        cwd: project.cwd,
        home: project.home,
        modelUrl: fake.url,
        prompt: 'go',
      });
      expect(out.code, describeRun(fake, out)).toBe(0);
      expect(fake.errors).toEqual([]);
      for (const { marker } of subagents) {
        const results = fake.toolResults.get(marker) ?? [];
        expect(results).toHaveLength(2);
        expect(results[0]).toContain(`a-${marker}`);
        expect(results[1]).toContain(`b-${marker}`);
      }
      expect(fake.notifications).toEqual([]);
      expect(fake.agentIds.size).toBe(2);
      const events = project.events();
      expect(ofType(events, 'PreToolUse')).toHaveLength(4);
      expect(ofType(events, 'SubagentStop')).toHaveLength(2);
      expect(ofType(events, 'UserPromptSubmit')).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it('--session-id names the session, cannot be reused, and --resume continues it in -p mode', async () => {
    const project = makeProject();
    const sessionId = randomUUID();
    const base = { bin: claude, cwd: project.cwd, home: project.home };

    const fake1 = await startFakeModel({ subagents: [{ marker: 'first', commands: ['echo first'] }] });
    const first = await runClaude({ ...base, modelUrl: fake1.url, prompt: 'first prompt', sessionId });
    await fake1.close();
    expect(first.code, describeRun(fake1, first)).toBe(0);

    // Reusing a session id that already has a transcript is refused before any model call.
    const fake2 = await startFakeModel({ subagents: [] });
    const reused = await runClaude({ ...base, modelUrl: fake2.url, prompt: 'again', sessionId });
    await fake2.close();
    expect(reused.code).toBe(1);
    expect(reused.stderr).toContain('already in use');
    expect(fake2.requests).toBe(0);

    // --resume: same session id, SessionStart source "resume", the new prompt launches agents again.
    const before = project.events().length;
    const fake3 = await startFakeModel({ subagents: [{ marker: 'second', commands: ['echo second'] }] });
    const resumed = await runClaude({ ...base, modelUrl: fake3.url, prompt: 'second prompt', resume: sessionId });
    await fake3.close();
    expect(resumed.code, describeRun(fake3, resumed)).toBe(0);
    expect(fake3.errors).toEqual([]);
    expect(fake3.toolResults.get('second')?.[0]).toContain('second');
    const events = project.events().slice(before);
    expect(events[0]).toMatchObject({ hook_event_name: 'SessionStart', source: 'resume', session_id: sessionId });
    expect(new Set(events.map((e) => e.session_id))).toEqual(new Set([sessionId]));
    expect(ofType(events, 'SubagentStart')).toHaveLength(1);

    // Resuming an unknown id fails.
    const fake4 = await startFakeModel({ subagents: [] });
    const unknown = await runClaude({ ...base, modelUrl: fake4.url, prompt: 'x', resume: randomUUID() });
    await fake4.close();
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No conversation found');
  });

  it('detached: SIGKILL to the process group kills the CLI mid-run; its Bash shells survive until killAll()', async () => {
    const project = makeProject();
    const pidDir = join(project.root, 'pids');
    mkdirSync(pidDir);
    const markers = ['k1', 'k2', 'k3'];
    // Each subagent records its shell's pid, then blocks.
    const subagents = markers.map((m) => ({ marker: m, commands: [`echo $$ > ${pidDir}/${m}.pid; sleep 60`] }));
    const fake = await startFakeModel({ subagents });
    const proc = startClaude({
      bin: claude,
      cwd: project.cwd,
      home: project.home,
      modelUrl: fake.url,
      prompt: 'go',
      detached: true,
      timeoutMs: 60_000,
    });
    try {
      const pidFile = (m: string): string => join(pidDir, `${m}.pid`);
      await waitFor(
        () => markers.every((m) => existsSync(pidFile(m)) && readFileSync(pidFile(m), 'utf8').trim() !== ''),
        30_000,
        'all subagents to start sleeping',
      );
      const shells = markers.map((m) => Number(readFileSync(pidFile(m), 'utf8').trim()));
      for (const pid of shells) expect(isAlive(pid)).toBe(true);
      // The run tag finds them (plus their `sleep` children).
      expect(findRunProcesses(proc.runId)).toEqual(expect.arrayContaining(shells));

      proc.kill('SIGKILL'); // process.kill(-pid, 'SIGKILL'): "the terminal died"
      const out = await proc.done;
      expect(out.signal).toBe('SIGKILL');
      expect(out.timedOut).toBe(false);
      expect(isAlive(out.pid)).toBe(false);

      // Observed on 2.1.328: Bash tool commands run in sessions of their own (setsid), so the
      // group kill does not reach them: they keep running, orphaned. pgx must cope with that.
      await new Promise((r) => setTimeout(r, 300));
      for (const pid of shells) expect(isAlive(pid), `shell ${pid} after group kill`).toBe(true);

      // killAll() finds them through PGX_E2E_RUN_ID and kills them.
      expect(proc.killAll('SIGKILL')).toEqual(expect.arrayContaining(shells));
      await waitFor(() => shells.every((pid) => !isAlive(pid)), 5_000, 'the Bash shells to die');
      // SIGKILL is delivered asynchronously: their `sleep` children may take a moment longer.
      await waitFor(() => findRunProcesses(proc.runId).length === 0, 5_000, 'every process of the run to die');

      // Nothing ran to completion: no SubagentStop, no SessionEnd.
      const events = project.events();
      expect(ofType(events, 'SubagentStart')).toHaveLength(3);
      expect(ofType(events, 'SubagentStop')).toHaveLength(0);
      expect(ofType(events, 'SessionEnd')).toHaveLength(0);
    } finally {
      proc.killAll('SIGKILL'); // never leave sleeping shells behind, even when an assertion failed
      await fake.close();
    }
  });
});

/** Alive and not a zombie (a killed child whose parent died may linger as Z until reaped). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
