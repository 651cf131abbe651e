// Never a silent fork from the template, through the real hook processes (engine/fork-miss.ts, decision 485): the
// session's branch is migrated and held by a connection (a dev server), and the copy its subagents need can't be made
// in time (the test holds the copy's freeze lock: the copy "still being made", on any machine). The subagent is told
// it does NOT have its session's state and why; its Bash commands are refused (the default, fallback "wait") or run on
// a template branch (fallback "template", said with the rewrite); the parent hears it once, at its next prompt; the
// hook log records a failure, never `ok:clone`; the doctor's session-forks and hook-log checks show it. And
// `pgx agent exec` with no client program to copy with: the session's state, or said on stderr and in --json.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonOf, makeProject, pgInfo, runPgxAsync, sql } from '../helpers/pgx.js';
import { LOCK } from '../../src/registry/locks.js';
import {
  newAgentId,
  preToolUseBash,
  session,
  sessionStart,
  subagentStart,
  userPromptSubmit,
} from '../helpers/hook-payloads.js';
import { bash, bashEnv, hook, rewriteOf } from '../helpers/hooks.js';
import { nodeSql } from '../helpers/node-client.js';

const rand = () => Math.random().toString(36).slice(2, 10);

async function withSource(): Promise<string> {
  const src = `src_miss_${rand()}`;
  await sql(`CREATE DATABASE ${src}`);
  await sql('CREATE TABLE items (id int PRIMARY KEY)', [], src);
  return src;
}

const logLines = (home: string) =>
  readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** A client of the test's own, as the admin, on `database`; closed by the caller. */
async function holdOn(database: string, application_name: string): Promise<pg.Client> {
  const p = pgInfo();
  const c = new pg.Client({
    host: p.host,
    port: p.port,
    user: p.user,
    password: p.password,
    database,
    application_name,
  });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/** The project, its session with a migrated session branch held by a connection, and the copy's lock held. */
async function busySession(toml = '') {
  const p = makeProject({ source: await withSource(), toml });
  const s = session(p.dir, p.dir);
  await hook('session-start', sessionStart(s), p);
  const [row] = await sql<{ name: string }>(
    `SELECT name FROM pgx_branch WHERE project = $1 AND kind = 'session' AND session_id = $2`,
    [p.name, s.sessionId],
    'pgx_registry',
  );
  const devServer = await holdOn(row!.name, 'dev-server');
  await devServer.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
  const lock = await holdOn('pgx_registry', 'copy-in-progress');
  await lock.query('SELECT pg_advisory_lock($1::bigint)', [LOCK.freeze(row!.name)]);
  const end = async () => {
    await lock.end();
    await devServer.end();
  };
  return { p, s, parentBranch: row!.name, end };
}

/** Hooks with a short deadline: the copy's wait gives up after ~2.5 s instead of ~46 s. */
const SHORT = { PGX_HOOK_DEADLINE_MS: '4000' };

const doctorChecks = async (p: ReturnType<typeof makeProject>) =>
  jsonOf(await runPgxAsync(['agent', 'doctor', '--json'], { cwd: p.dir, env: p.env })).checks as {
    name: string;
    status: string;
    detail: string;
    fix?: string;
  }[];

describe('a subagent whose session state can not be copied in time (hook processes)', () => {
  it('fallback "wait" (the default): told, refused, the parent hears it once, logged as a failure, the doctor shows it', async () => {
    const { p, s, parentBranch, end } = await busySession();
    const agent = newAgentId();
    try {
      const started = await hook('subagent-start', subagentStart(s, agent), p, { env: SHORT });
      const told: string = started.json.hookSpecificOutput.additionalContext;
      expect(told).toContain("you do NOT have a database branch with your session's current state");
      expect(told).toContain(`your session's branch "${parentBranch}"`);
      expect(told).toMatch(/its copy was still being made after \d+ s/);
      expect(told).toContain('[agent] fork_fallback = "template"');

      const pre = await hook('pre-tool-use', preToolUseBash(s, nodeSql('select 1'), { agentId: agent }), p, {
        env: SHORT,
      });
      expect(pre.json.hookSpecificOutput.permissionDecision).toBe('deny');
      expect(pre.json.hookSpecificOutput.permissionDecisionReason).toMatch(
        /no database branch yet.*"\S+".*\[agent\] fork_fallback = "template"/s,
      );

      const log = logLines(p.home).filter((l) => l.agent_id === agent);
      expect(log.map((l) => `${l.event} ${l.outcome}`)).toEqual([
        'subagent-start error:fork-unavailable:timeout',
        'pre-tool-use denied:fork-unavailable:timeout',
      ]);

      // The parent: told at its next prompt, once (the refused command was the same miss, not a new one).
      const prompt = await hook('user-prompt-submit', userPromptSubmit(s), p);
      const heard: string = prompt.json.hookSpecificOutput.additionalContext;
      expect(heard).toContain(`subagent ${agent} did NOT get a copy of your session's branch "${parentBranch}"`);
      expect(heard).toContain('its Bash commands are refused until the copy can be made');
      expect(heard).toContain('[agent] fork_fallback = "template"');
      expect((await hook('user-prompt-submit', userPromptSubmit(s), p)).json).toBeUndefined();

      const checks = await doctorChecks(p);
      const forks = checks.find((c) => c.name === 'session-forks')!;
      expect(forks.status).toBe('warn');
      expect(forks.detail).toContain(`agent ${agent}`);
      expect(forks.detail).toMatch(/had no branch \(refused 2 time\(s\); \[agent\] fork_fallback = "wait"\)/);
      expect(forks.fix).toContain('[agent] fork_fallback = "template"');
      const hooks = checks.find((c) => c.name === 'hook-log')!;
      expect(hooks.status).toBe('warn');
      expect(hooks.detail).toContain('subagent-start error:fork-unavailable');
    } finally {
      await end();
    }
    // The copy made now: the next command forks (the parent's migration), and the doctor counts the miss as resolved.
    const pre = await hook(
      'pre-tool-use',
      preToolUseBash(s, nodeSql('select sum(x) from parent_mig'), { agentId: agent }),
      p,
    );
    const run = await bash(rewriteOf(pre).command, { cwd: p.dir, env: bashEnv(p, s) });
    expect(run.stdout.trim(), run.stderr).toBe('1');
    const forks = (await doctorChecks(p)).find((c) => c.name === 'session-forks')!;
    expect(forks).toMatchObject({ status: 'ok' });
    expect(forks.detail).toContain('1 that missed it got it on a later try');
  });

  it('fallback "template": the template, said to the subagent and (once) to the parent, logged as a fallback', async () => {
    const { p, s, parentBranch, end } = await busySession('[agent]\nfork_fallback = "template"\n');
    const agent = newAgentId();
    try {
      const started = await hook('subagent-start', subagentStart(s, agent), p, { env: SHORT });
      const told: string = started.json.hookSpecificOutput.additionalContext;
      expect(told).toMatch(
        /you have your own PostgreSQL database branch "agent_\w+", cloned from a snapshot of the project's/,
      );
      expect(told).toContain("It does NOT have your session's current state");
      expect(told).toContain(`your session's branch "${parentBranch}" could not be copied in time`);
      expect(told).toContain('.pgx.toml sets [agent] fork_fallback = "template"');
      const start = logLines(p.home).find((l) => l.agent_id === agent && l.event === 'subagent-start');
      expect(start.outcome).toBe('fallback:template:clone:timeout');

      // Its commands run on that branch: the template's tables, not the parent's migration.
      const pre = await hook(
        'pre-tool-use',
        preToolUseBash(s, nodeSql("select to_regclass('parent_mig') is null"), { agentId: agent }),
        p,
      );
      const run = await bash(rewriteOf(pre).command, { cwd: p.dir, env: bashEnv(p, s) });
      expect(run.stdout.trim(), run.stderr).toBe('t');

      const heard: string = (await hook('user-prompt-submit', userPromptSubmit(s), p)).json.hookSpecificOutput
        .additionalContext;
      expect(heard).toContain(`subagent ${agent} did NOT get a copy of your session's branch "${parentBranch}"`);
      expect(heard).toContain('It got a clone of the template instead');
      expect(heard).toContain('.pgx.toml sets [agent] fork_fallback = "template"');

      const checks = await doctorChecks(p);
      expect(checks.find((c) => c.name === 'session-forks')).toMatchObject({ status: 'warn' });
      expect(checks.find((c) => c.name === 'session-forks')!.detail).toContain('got the template instead');
      expect(checks.find((c) => c.name === 'hook-log')!.detail).toMatch(
        /1 given the template in place of their session's state/,
      );
    } finally {
      await end();
    }
  });
});

describe('pgx agent exec with no client program to copy a connected session branch with', () => {
  for (const fallback of ['wait', 'template'] as const) {
    it(`fallback "${fallback}": the session's state, or said on stderr and in --json (never a silent template)`, async () => {
      const p = makeProject({ source: await withSource(), toml: `[agent]\nfork_fallback = "${fallback}"\n` });
      const sid = `s${rand()}`;
      const up = jsonOf(await runPgxAsync(['agent', 'up', '--session', sid, '--json'], { cwd: p.dir, env: p.env }));
      const devServer = await holdOn(up.branch, 'dev-server');
      try {
        await devServer.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
        // This exec finds no pg_dump or psql (PATH has none, no PGX_PG_BINDIR); its command is a full path.
        const env: NodeJS.ProcessEnv = { ...p.env, PATH: '/nonexistent', PGX_FORK_WAIT_MS: '1000' };
        delete env.PGX_PG_BINDIR;
        const r = await runPgxAsync(
          [
            'agent',
            'exec',
            '--agent',
            'a1',
            '--session',
            sid,
            '--json',
            '--',
            process.execPath,
            '-e',
            'process.exit(0)',
          ],
          { cwd: p.dir, env },
        );
        const copied = r.status === 0 && !/WARNING/.test(r.stderr);
        console.log(
          `[fork-miss] exec, fallback ${fallback}, no client programs: ${copied ? 'copied' : 'a miss, said'}`,
        );
        if (copied) {
          // pgx copied it without client programs (issue 39's copy part): the session's state, as asked.
          expect(JSON.parse(r.stderr.trim().split('\n').pop()!).fork).toMatchObject({ method: 'frozen' });
        } else if (fallback === 'wait') {
          expect(r.status, r.stderr).toBe(7);
          const e = JSON.parse(r.stdout || r.stderr.trim().split('\n').pop()!);
          expect(e.error?.message ?? e.message).toContain(`must be a copy of the session's branch "${up.branch}"`);
          expect(JSON.stringify(e)).toContain('"fork_miss"');
          expect(JSON.stringify(e)).toContain('[agent] fork_fallback = \\"template\\"');
        } else {
          expect(r.status, r.stderr).toBe(0);
          expect(r.stderr).toMatch(/pgx: WARNING: branch "\S+" does NOT have the session's current state/);
          expect(r.stderr).toContain('.pgx.toml sets [agent] fork_fallback = "template"');
          const report = JSON.parse(r.stderr.trim().split('\n').pop()!);
          expect(report.fork).toMatchObject({ method: 'template', miss: { parent: up.branch, fallback: 'template' } });
        }
      } finally {
        await devServer.end();
      }
    });
  }
});
