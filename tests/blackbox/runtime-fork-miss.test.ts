// A fork miss under Codex and Copilot (issue 39, decisions 485 and 532), through the built hook entries: the session's
// branch is migrated and held by a connection, and the copy a subagent needs can't be made in time (the test holds
// the copy's freeze lock). The subagent's shell command is refused with why (fallback "wait") or routed to a template
// branch with a note (fallback "template"); the parent hears it once, at its next prompt or at its next tool call
// (`codex exec` and `copilot -p` have one prompt only); the hook log records a failure; the doctor shows it.
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, pgInfo, runPgxAsync, sql } from '../helpers/pgx.js';
import { LOCK } from '../../src/registry/locks.js';

type Project = ReturnType<typeof makeProject>;
type Cli = 'codex' | 'copilot';

/** Hooks with a short deadline: the copy's wait gives up after ~2.5 s instead of ~46 s. */
const SHORT = { PGX_HOOK_DEADLINE_MS: '4000' };

async function runtimeHook(cli: Cli, event: string, payload: Record<string, unknown>, p: Project, env = {}) {
  const r = await runPgxAsync(['agent', `${cli}-hook`, event], {
    cwd: p.dir,
    env: { ...p.env, SHELL: '/bin/bash', ...env },
    input: JSON.stringify(payload),
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout.includes(pgInfo().password), 'a password in hook output').toBe(false);
  return r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, any>) : undefined;
}

const logLines = (home: string) =>
  readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; outcome: string; agent_id?: string });

async function holdOn(database: string, application_name: string): Promise<pg.Client> {
  const i = pgInfo();
  const c = new pg.Client({
    host: i.host,
    port: i.port,
    user: i.user,
    password: i.password,
    database,
    application_name,
  });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/** A project whose session has a migrated session branch, held by a connection, its copy's lock held. */
async function busySession(toml = '') {
  const src = `src_rmiss_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${src}`);
  await sql('CREATE TABLE items (id int PRIMARY KEY)', [], src);
  const p = makeProject({ source: src, toml });
  const sessionId = randomUUID();
  const up = jsonOf(await runPgxAsync(['agent', 'up', '--session', sessionId, '--json'], { cwd: p.dir, env: p.env }));
  const devServer = await holdOn(up.branch, 'dev-server');
  await devServer.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
  const lock = await holdOn('pgx_registry', 'copy-in-progress');
  await lock.query('SELECT pg_advisory_lock($1::bigint)', [LOCK.freeze(up.branch)]);
  const end = async () => {
    await lock.end();
    await devServer.end();
  };
  return { p, sessionId, parentBranch: up.branch as string, end };
}

/** The payloads each CLI sent (Codex 0.171.0, Copilot 1.0.102): a subagent's shell call, the parent's prompt, tool. */
const payloads = {
  codex: {
    subShell: (p: Project, sid: string, agent: string, command: string) => ({
      session_id: sid,
      turn_id: randomUUID(),
      transcript_path: null,
      cwd: p.dir,
      hook_event_name: 'PreToolUse',
      model: 'fake-model',
      permission_mode: 'bypassPermissions',
      agent_id: agent,
      agent_type: 'default',
      tool_name: 'Bash',
      tool_input: { command },
      tool_use_id: `call_${randomUUID()}`,
    }),
    prompt: (p: Project, sid: string) => ({
      session_id: sid,
      turn_id: randomUUID(),
      transcript_path: null,
      cwd: p.dir,
      hook_event_name: 'UserPromptSubmit',
      model: 'fake-model',
      permission_mode: 'bypassPermissions',
      prompt: 'next',
    }),
    parentTool: (p: Project, sid: string) => ({
      session_id: sid,
      turn_id: randomUUID(),
      transcript_path: null,
      cwd: p.dir,
      hook_event_name: 'PreToolUse',
      model: 'fake-model',
      permission_mode: 'bypassPermissions',
      tool_name: 'Bash',
      tool_input: { command: 'echo hi' },
      tool_use_id: `call_${randomUUID()}`,
    }),
  },
  copilot: {
    subShell: (p: Project, sid: string, agent: string, command: string) => ({
      sessionId: agent,
      timestamp: Date.now(),
      cwd: p.dir,
      toolName: 'bash',
      toolArgs: { command, description: 'run it' },
      agentId: agent,
      agentType: 'general-purpose',
      parentAgentId: sid,
    }),
    prompt: (p: Project, sid: string) => ({ sessionId: sid, timestamp: Date.now(), cwd: p.dir, prompt: 'next' }),
    parentTool: (p: Project, sid: string) => ({
      sessionId: sid,
      timestamp: Date.now(),
      cwd: p.dir,
      toolName: 'view',
      toolArgs: { path: '.' },
    }),
  },
} as const;

/** Where each CLI puts a PreToolUse answer's parts. */
const decisionOf = (cli: Cli, out: Record<string, any> | undefined) =>
  cli === 'codex' ? out?.hookSpecificOutput : out;
const contextOf = (cli: Cli, out: Record<string, any> | undefined): string | undefined =>
  cli === 'codex' ? out?.hookSpecificOutput?.additionalContext : out?.additionalContext;

const doctorChecks = async (p: Project) =>
  jsonOf(await runPgxAsync(['agent', 'doctor', '--json'], { cwd: p.dir, env: p.env })).checks as {
    name: string;
    status: string;
    detail: string;
  }[];

for (const cli of ['codex', 'copilot'] as const) {
  describe(`${cli}: a subagent whose session state can not be copied in time`, () => {
    const P = payloads[cli];
    it('fallback "wait": its shell command refused with why; the parent hears it once (next prompt); logged as a failure; the doctor shows it', async () => {
      const { p, sessionId, parentBranch, end } = await busySession();
      const agent = randomUUID();
      try {
        const out = await runtimeHook(cli, 'pre-tool-use', P.subShell(p, sessionId, agent, 'echo hi'), p, SHORT);
        const d = decisionOf(cli, out);
        expect(d.permissionDecision).toBe('deny');
        expect(d.permissionDecisionReason).toContain('you have no database branch yet');
        expect(d.permissionDecisionReason).toContain(`your session's branch "${parentBranch}"`);
        expect(d.permissionDecisionReason).toContain('[agent] fork_fallback = "template"');
        const mine = logLines(p.home).filter((l) => l.event === 'pre-tool-use' && l.agent_id === agent);
        expect(mine.map((l) => l.outcome)).toEqual(['denied:fork-unavailable:timeout']);

        const heard = contextOf(cli, await runtimeHook(cli, 'user-prompt-submit', P.prompt(p, sessionId), p));
        expect(heard).toContain(`subagent ${agent} did NOT get a copy of your session's branch "${parentBranch}"`);
        expect(heard).toContain('[agent] fork_fallback = "template"');
        // once: the next prompt and the next tool call have nothing more to say
        expect(await runtimeHook(cli, 'user-prompt-submit', P.prompt(p, sessionId), p)).toBeUndefined();
        expect(contextOf(cli, await runtimeHook(cli, 'pre-tool-use', P.parentTool(p, sessionId), p))).toBeUndefined();

        const checks = await doctorChecks(p);
        const forks = checks.find((c) => c.name === 'session-forks')!;
        expect(forks.status).toBe('warn');
        expect(forks.detail).toContain(`agent ${agent}`);
        expect(checks.find((c) => c.name === 'hook-log')!.status).toBe('warn');
      } finally {
        await end();
      }
    });

    it('fallback "template": routed to a template branch with a note; the parent hears it at its next tool call (one prompt only)', async () => {
      const { p, sessionId, parentBranch, end } = await busySession('[agent]\nfork_fallback = "template"\n');
      const agent = randomUUID();
      try {
        const out = await runtimeHook(cli, 'pre-tool-use', P.subShell(p, sessionId, agent, 'echo hi'), p, SHORT);
        const d = decisionOf(cli, out);
        expect(cli === 'codex' ? d.updatedInput.command : out!.modifiedArgs.command).toContain(' agent exec --agent ');
        const note = contextOf(cli, out);
        expect(note).toContain("It does NOT have your session's current state");
        expect(note).toContain('.pgx.toml sets [agent] fork_fallback = "template"');
        const mine = logLines(p.home).filter((l) => l.event === 'pre-tool-use' && l.agent_id === agent);
        expect(mine.map((l) => l.outcome)).toEqual([expect.stringMatching(/^rewritten:\w+:fallback-template$/)]);

        const heard = contextOf(cli, await runtimeHook(cli, 'pre-tool-use', P.parentTool(p, sessionId), p));
        expect(heard).toContain(`subagent ${agent} did NOT get a copy of your session's branch "${parentBranch}"`);
        expect(heard).toContain('It got a clone of the template instead');
        expect(await runtimeHook(cli, 'user-prompt-submit', P.prompt(p, sessionId), p)).toBeUndefined();
      } finally {
        await end();
      }
    });
  });
}
