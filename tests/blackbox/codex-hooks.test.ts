// `pgx agent codex-hook <event>` (the built CLI) with Codex-shaped payloads, against the real test server: the allow
// question over every permission_mode (only bypassPermissions gets allow + updatedInput; everywhere else a deny that
// hands over the routed command, which then comes back unchanged and runs on the branch), the typed-launcher check,
// the lifecycle, and no password in any output. The real binary: tests/e2e/codex-*.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeProject, pgInfo, runPgxAsync, sql } from '../helpers/pgx.js';
import { bash, launcherReal, lsBranches } from '../helpers/hooks.js';
import { shellQuote } from '../../src/lib/shell.js';
import { routedCommandIn } from '../../src/hooks/codex/handlers.js';

type Project = ReturnType<typeof makeProject>;

async function codexHook(event: string, payload: Record<string, unknown> | string, p: Project, extraEnv: NodeJS.ProcessEnv = {}) {
  const input = typeof payload === 'string' ? payload : JSON.stringify(payload);
  // Codex gives a hook no project variable: the project is the payload's cwd.
  const r = await runPgxAsync(['agent', 'codex-hook', event], { cwd: p.dir, env: { ...p.env, SHELL: '/bin/bash', ...extraEnv }, input });
  expect(r.status, r.stderr).toBe(0);
  const pw = pgInfo().password;
  expect(r.stdout.includes(pw) || r.stderr.includes(pw), 'a password in hook output').toBe(false);
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : undefined };
}

const base = (p: Project, sessionId: string) => ({ session_id: sessionId, cwd: p.dir, transcript_path: null, turn_id: randomUUID(), model: 'fake-model' });
const preBash = (p: Project, sessionId: string, command: string, o: { agentId?: string; mode?: string } = {}) => ({
  ...base(p, sessionId),
  hook_event_name: 'PreToolUse',
  ...(o.agentId ? { agent_id: o.agentId, agent_type: 'default' } : {}),
  ...(o.mode !== undefined ? { permission_mode: o.mode } : {}),
  tool_name: 'Bash',
  tool_input: { command },
  tool_use_id: `call_${randomUUID()}`,
});

const routedFrom = (reason: string) => routedCommandIn(reason)!;

describe('Codex PreToolUse: the allow question', () => {
  it('only bypassPermissions gets allow + updatedInput; every other mode a deny with the routed command, which then passes unchanged and runs on the branch', async () => {
    const p = makeProject();
    const sessionId = randomUUID();
    const agentId = randomUUID();
    const start = await codexHook('subagent-start', { ...base(p, sessionId), hook_event_name: 'SubagentStart', agent_id: agentId, agent_type: 'default', source: 'startup' }, p);
    const branch = /branch "([^"]+)"/.exec(start.json.hookSpecificOutput.additionalContext)![1]!;
    const original = `psql -X -Atc 'select current_database()'`;

    const bypass = await codexHook('pre-tool-use', preBash(p, sessionId, original, { agentId, mode: 'bypassPermissions' }), p);
    const out = bypass.json.hookSpecificOutput;
    expect(out.permissionDecision).toBe('allow');
    expect(out.updatedInput.command).toBe(`${shellQuote(launcherReal())} agent exec --agent ${agentId} --cwd ${p.dir} -- /bin/bash -c ${shellQuote(original)}; exit # pgx-routed ${branch}\n${original}`);
    expect((await bash(out.updatedInput.command, { cwd: p.dir, env: { ...p.env, SHELL: '/bin/bash' } })).stdout.trim()).toBe(branch);

    // PGX_CODEX_ALLOW=never: stricter only, the deny even in bypassPermissions
    const never = await codexHook('pre-tool-use', preBash(p, sessionId, original, { agentId, mode: 'bypassPermissions' }), p, { PGX_CODEX_ALLOW: 'never' });
    expect(never.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(routedFrom(never.json.hookSpecificOutput.permissionDecisionReason)).toBe(out.updatedInput.command);

    // every value Codex sends outside `codex exec` (Claude-style names), an unknown one, and none at all
    for (const mode of ['default', 'acceptEdits', 'plan', 'dontAsk', 'auto', 'on-request', 'BYPASSPERMISSIONS', '', undefined]) {
      const r = await codexHook('pre-tool-use', preBash(p, sessionId, original, { agentId, mode }), p);
      const o = r.json.hookSpecificOutput;
      expect(o.permissionDecision, `mode ${mode}`).toBe('deny');
      expect(o.updatedInput, `mode ${mode}`).toBeUndefined();
      const routed = routedFrom(o.permissionDecisionReason);
      expect(routed).toBe(out.updatedInput.command); // the same form the allow would have run
      // the model runs it: it passes the hook unchanged (Codex's own approval then decides), and lands on the branch
      const again = await codexHook('pre-tool-use', preBash(p, sessionId, routed, { agentId, mode }), p);
      expect(again.stdout, `mode ${mode}`).toBe('');
      expect((await bash(routed, { cwd: p.dir, env: { ...p.env, SHELL: '/bin/bash' } })).stdout.trim()).toBe(branch);
    }
  });

  it("a hand-written launcher, another agent's routed form, or a bare exit is refused in every mode", async () => {
    const p = makeProject();
    const sessionId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const routedForB = routedFrom((await codexHook('pre-tool-use', preBash(p, sessionId, 'true', { agentId: b, mode: 'default' }), p)).json.hookSpecificOutput.permissionDecisionReason);
    for (const mode of ['bypassPermissions', 'default']) {
      for (const command of [`${shellQuote(launcherReal())} agent exec --agent ${a} --cwd ${p.dir} -- psql -c 'select 1'`, routedForB, 'pgx agent exec --id x -- psql', 'true; exit']) {
        const r = await codexHook('pre-tool-use', preBash(p, sessionId, command, { agentId: a, mode }), p);
        expect(r.json?.hookSpecificOutput?.permissionDecision, `${mode}: ${command}`).toBe('deny');
      }
    }
    // the parent: a typed launcher is refused, anything else passes untouched (Codex judges it)
    expect((await codexHook('pre-tool-use', preBash(p, sessionId, `pgx agent exec --agent ${a} -- psql`, { mode: 'bypassPermissions' }), p)).json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect((await codexHook('pre-tool-use', preBash(p, sessionId, 'psql -c "select 1"', { mode: 'bypassPermissions' }), p)).stdout).toBe('');
  });

  it('the parent, in every permission_mode Codex may send: never an allow, never an updatedInput; a typed launcher denied', async () => {
    const p = makeProject();
    const sessionId = randomUUID();
    for (const mode of ['bypassPermissions', 'default', 'acceptEdits', 'plan', 'dontAsk', 'auto', 'on-request', 'BYPASSPERMISSIONS', '', undefined]) {
      const plain = await codexHook('pre-tool-use', preBash(p, sessionId, `psql -X -Atc 'select 1'`, { mode }), p);
      expect(plain.stdout, `mode ${mode}`).toBe(''); // unrouted today (decision 205): Codex's own approval judges it as typed
      const typed = await codexHook('pre-tool-use', preBash(p, sessionId, `pgx agent exec --session ${sessionId} -- psql`, { mode }), p);
      expect(typed.json.hookSpecificOutput.permissionDecision, `mode ${mode}`).toBe('deny');
      expect(typed.json.hookSpecificOutput.updatedInput, `mode ${mode}`).toBeUndefined();
    }
  });

  it('fails closed for a subagent: an invalid payload or a server it cannot reach is a deny with a reason', async () => {
    const p = makeProject();
    const bad = await codexHook('pre-tool-use', { ...preBash(p, randomUUID(), 'psql', { agentId: 'x\u0001y', mode: 'bypassPermissions' }) }, p);
    expect(bad.json.hookSpecificOutput.permissionDecision).toBe('deny');
    const down = makeProject();
    down.env.PGX_DATABASE_URL = 'postgresql://nobody@127.0.0.1:1/postgres'; // nobody listens on port 1
    const r = await codexHook('pre-tool-use', preBash(down, randomUUID(), 'psql', { agentId: randomUUID(), mode: 'bypassPermissions' }), down);
    expect(r.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(/could not ensure this subagent's own database branch/);
  });
});

describe('Codex lifecycle', () => {
  it('SubagentStart makes the branch and says so; SubagentStop retires it; the source is untouched', async () => {
    const src = `src_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${src}`);
    try {
      await sql('CREATE TABLE rows (x int)', [], src);
      const p = makeProject({ source: src });
      const sessionId = randomUUID();
      const agentId = randomUUID();
      const start = await codexHook('subagent-start', { ...base(p, sessionId), hook_event_name: 'SubagentStart', agent_id: agentId, agent_type: 'default' }, p);
      const ctx: string = start.json.hookSpecificOutput.additionalContext;
      expect(ctx).toMatch(/own PostgreSQL database branch/);
      expect(ctx).toMatch(/run that exact command/);
      const branch = /branch "([^"]+)"/.exec(ctx)![1]!;
      const pre = await codexHook('pre-tool-use', preBash(p, sessionId, `psql -X -qc 'create table mine (x int)'`, { agentId, mode: 'bypassPermissions' }), p);
      expect((await bash(pre.json.hookSpecificOutput.updatedInput.command, { cwd: p.dir, env: { ...p.env, SHELL: '/bin/bash' } })).status).toBe(0);
      expect(await codexHook('subagent-stop', { ...base(p, sessionId), hook_event_name: 'SubagentStop', agent_id: agentId, agent_type: 'default', stop_hook_active: false, last_assistant_message: 'done', agent_transcript_path: null }, p)).toMatchObject({ stdout: '' });
      const row = (await lsBranches(p)).find((b) => b.name === branch);
      expect(row?.state).not.toBe('active');
      expect((await sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", [], src)).map((r) => r.tablename)).toEqual(['rows']);
    } finally {
      await sql(`DROP DATABASE IF EXISTS ${src} WITH (FORCE)`).catch(() => undefined);
    }
  });
});
