// `pgx agent copilot-hook <event>` (the built CLI) with Copilot-shaped native payloads (camelCase; inside a subagent
// sessionId is the child's and parentAgentId the root's), against the real test server: a subagent's bash is
// rewritten (modifiedArgs, never a permissionDecision of pgx's) to its own branch, the routed command comes back
// unchanged and lands there, typed launchers are denied, the root's commands go to the session branch (session_branch)
// or pass, the lifecycle retires the branches, and no password appears in any answer. The real binary:
// tests/e2e/copilot-isolation.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeProject, pgInfo, runPgxAsync, sql } from '../helpers/pgx.js';
import { bash, launcherReal, lsBranches } from '../helpers/hooks.js';
import { shellQuote } from '../../src/lib/shell.js';

type Project = ReturnType<typeof makeProject>;

async function copilotHook(
  event: string,
  payload: Record<string, unknown> | string,
  p: Project,
  extraEnv: NodeJS.ProcessEnv = {},
) {
  const input = typeof payload === 'string' ? payload : JSON.stringify(payload);
  // Copilot's hook environment names the project (COPILOT_PROJECT_DIR, and CLAUDE_PROJECT_DIR too: measured)
  const r = await runPgxAsync(['agent', 'copilot-hook', event], {
    cwd: p.dir,
    env: { ...p.env, CLAUDE_PROJECT_DIR: p.dir, COPILOT_CLI: '1', ...extraEnv },
    input,
  });
  expect(r.status, r.stderr).toBe(0);
  const pw = pgInfo().password;
  expect(r.stdout.includes(pw) || r.stderr.includes(pw), 'a password in hook output').toBe(false);
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : undefined };
}

const bashCall = (p: Project, root: string, command: string, agentId?: string) => ({
  sessionId: agentId ?? root,
  timestamp: Date.now(),
  cwd: p.dir,
  toolName: 'bash',
  toolArgs: { command, description: 'run it' },
  ...(agentId ? { agentId, agentType: 'general-purpose', parentAgentId: root } : {}),
});
const subagent = (p: Project, root: string, agentId: string) => ({
  sessionId: root,
  timestamp: Date.now(),
  cwd: p.dir,
  transcriptPath: '/dev/null',
  agentName: 'general-purpose',
  agentId,
  agentType: 'general-purpose',
  parentAgentId: root,
});
const shellEnv = (p: Project) => ({ ...p.env, COPILOT_CLI: '1' });

describe('Copilot preToolUse', () => {
  it("a subagent's bash: modifiedArgs with no decision, to its own branch; the routed form passes back unchanged and runs there; a typed launcher is denied", async () => {
    const p = makeProject({ toml: '[agent]\nsession_branch = false\n' });
    const root = randomUUID();
    const child = randomUUID();
    expect((await copilotHook('subagent-start', subagent(p, root, child), p)).stdout).toBeDefined();
    const original = `psql -X -Atc 'select current_database()'`;
    const r = await copilotHook('pre-tool-use', bashCall(p, root, original, child), p);
    expect(Object.keys(r.json)).toEqual(['modifiedArgs']); // never permissionDecision: Copilot's own check decides
    const routed: string = r.json.modifiedArgs.command;
    expect(r.json.modifiedArgs.description).toBe('run it');
    const branch = / # pgx-routed (\S+)\n/.exec(routed)![1]!;
    // no pgx on PATH in this test: the absolute launcher, the agent's id (not the root's), bash as the inner shell
    expect(routed).toBe(
      `${shellQuote(launcherReal())} agent exec --agent ${child} --cwd ${p.dir} -- bash -c ${shellQuote(original)}; exit # pgx-routed ${branch}\n${original}`,
    );
    expect((await bash(routed, { cwd: p.dir, env: shellEnv(p) })).stdout.trim()).toBe(branch);
    const again = await copilotHook('pre-tool-use', bashCall(p, root, routed, child), p);
    expect(again.stdout).toBe('');
    // a launcher the model typed (or another agent's routed form) is denied, in Copilot's form
    const typed = await copilotHook(
      'pre-tool-use',
      bashCall(p, root, `${shellQuote(launcherReal())} agent exec --agent ${child} -- psql`, child),
      p,
    );
    expect(typed.json).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/launcher/),
    });
    const other = await copilotHook('pre-tool-use', bashCall(p, root, routed, randomUUID()), p);
    expect(other.json.permissionDecision).toBe('deny');
    // a routed form the hook never passed is refused by exec itself in Copilot's shell (the ticket)
    const forged = routed
      .replace(original, `psql -X -Atc 'select 2'`)
      .replace(shellQuote(original), shellQuote(`psql -X -Atc 'select 2'`));
    const ran = await bash(forged, { cwd: p.dir, env: shellEnv(p) });
    expect([ran.stdout.trim(), ran.stderr]).toEqual(['', expect.stringMatching(/its hook did not route this command/)]);
    // the root's bash (session_branch = false) and another tool: nothing to say
    expect((await copilotHook('pre-tool-use', bashCall(p, root, original), p)).stdout).toBe('');
    expect(
      (
        await copilotHook(
          'pre-tool-use',
          { sessionId: root, cwd: p.dir, toolName: 'task', toolArgs: { prompt: 'x' } },
          p,
        )
      ).stdout,
    ).toBe('');
    // subagentStop retires the child's branch
    await copilotHook(
      'subagent-stop',
      { ...subagent(p, root, child), response: 'done', stopReason: 'end_turn', stop_hook_active: false },
      p,
    );
    expect((await lsBranches(p)).find((b) => b.name === branch)?.state).not.toBe('active');
    expect((await sql('SELECT datallowconn FROM pg_database WHERE datname = $1', [branch]))[0]).toEqual({
      datallowconn: false,
    });
  });

  it("the root's bash goes to the session branch (session_branch on), fail-open form; sessionEnd retires it", async () => {
    const p = makeProject({ toml: '[agent]\nsession_branch = true\n' });
    const root = randomUUID();
    await copilotHook(
      'session-start',
      { sessionId: root, timestamp: Date.now(), cwd: p.dir, source: 'new', initialPrompt: 'x' },
      p,
    );
    const original = `psql -X -Atc 'select current_database()'`;
    const r = await copilotHook('pre-tool-use', bashCall(p, root, original), p);
    const routed: string = r.json.modifiedArgs.command;
    expect(routed).toMatch(new RegExp(` agent exec --session ${root} --fail-open --cwd `));
    const branch = / # pgx-routed (\S+)\n/.exec(routed)![1]!;
    expect((await bash(routed, { cwd: p.dir, env: shellEnv(p) })).stdout.trim()).toBe(branch);
    expect((await lsBranches(p)).find((b) => b.name === branch)?.kind).toBe('session');
    await copilotHook('session-end', { sessionId: root, timestamp: Date.now(), cwd: p.dir, reason: 'complete' }, p);
    expect((await lsBranches(p)).find((b) => b.name === branch)?.state).not.toBe('active');
  });

  it('fails closed for a subagent (no branch, an invalid payload), open for the root', async () => {
    const p = makeProject();
    const root = randomUUID();
    const bad = { PGX_DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/postgres' };
    const sub = await copilotHook('pre-tool-use', bashCall(p, root, 'psql', randomUUID()), p, bad);
    expect(sub.json).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/could not ensure this subagent's own database branch/),
    });
    expect((await copilotHook('pre-tool-use', bashCall(p, root, 'psql'), p, bad)).stdout).toBe('');
    const invalid = await copilotHook('pre-tool-use', bashCall(p, root, 'psql', 'x'.repeat(300)), p);
    expect(invalid.json.permissionDecision).toBe('deny');
    const garbage = await copilotHook('pre-tool-use', 'not json', p);
    expect(garbage.json.permissionDecision).toBe('deny');
  });

  it("a subagent's bash nested 100,000 deep is denied, as every unreadable payload is; so by Claude Code's and Codex's entries; 100 deep is routed (decision 455)", async () => {
    const p = makeProject({ toml: '[agent]\nsession_branch = false\n' });
    const root = randomUUID();
    const child = randomUUID();
    /** The payload's JSON with `toolArgs.nested` (or `tool_input.nested`) `depth` arrays deep. */
    const nested = (payload: Record<string, unknown>, depth: number) =>
      JSON.stringify(payload).replace('"nested":0', `"nested":${'['.repeat(depth)}${']'.repeat(depth)}`);
    const call = bashCall(p, root, 'echo deep', child);
    const deep = (depth: number) => nested({ ...call, toolArgs: { ...call.toolArgs, nested: 0 } }, depth);
    const refused = await copilotHook('pre-tool-use', deep(100_000), p);
    expect(refused.json).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining('nested deeper than 128 levels'),
    });
    expect(Object.keys((await copilotHook('pre-tool-use', deep(100), p)).json)).toEqual(['modifiedArgs']);
    // the same payload in Claude Code's (and Codex's) own shape, through their entries
    const claude = nested(
      {
        session_id: root,
        agent_id: child,
        hook_event_name: 'PreToolUse',
        cwd: p.dir,
        tool_name: 'Bash',
        tool_input: { command: 'echo deep', nested: 0 },
      },
      100_000,
    );
    for (const entry of ['hook', 'codex-hook']) {
      const r = await runPgxAsync(['agent', entry, 'pre-tool-use'], {
        cwd: p.dir,
        env: { ...p.env, CLAUDE_PROJECT_DIR: p.dir, SHELL: '/bin/bash' },
        input: claude,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).hookSpecificOutput, entry).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringContaining('nested deeper than 128 levels'),
      });
    }
  });
});
