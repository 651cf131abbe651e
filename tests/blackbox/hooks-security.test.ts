// Security properties of the hooks: routing can't be escaped by a command dressed as an already-routed one, `down`
// finds branches across host labels but refuses databases pgx did not make, and no password ever appears in a
// process's argv, a hook output, the env file or the hook log.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, pgInfo, runPgxAsync, sql } from '../helpers/pgx.js';
import {
  newAgentId,
  preToolUseBash,
  session,
  sessionEnd,
  sessionStart,
  subagentStart,
  subagentStop,
  userPromptSubmit,
} from '../helpers/hook-payloads.js';
import {
  bash,
  bashEnv,
  branchFromContext,
  dbState,
  hook,
  hookRuns,
  launcherReal,
  lsBranches,
  publicTables,
  rewriteOf,
  routeAndRun,
} from '../helpers/hooks.js';
import { shellQuote } from '../../src/lib/shell.js';
import { needs } from '../helpers/client-programs.js';
import { nodeClientPath, nodeSql } from '../helpers/node-client.js';

const rand = () => Math.random().toString(36).slice(2, 10);

describe('hook security', () => {
  it('a command that starts like a routed one but smuggles a second command before `-c` is denied (it invokes the launcher)', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const first = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, 'true', { agentId: a }), p));
    const decoyDb = `decoy_${rand()}`;
    await sql(`CREATE DATABASE ${decoyDb}`);
    const pg = pgInfo();
    const decoys = {
      PGDATABASE: decoyDb,
      PGHOST: pg.host,
      PGPORT: String(pg.port),
      PGUSER: pg.user,
      PGPASSWORD: pg.password,
    };
    // Same launcher, agent, cwd and marker as a real rewrite; where the shell should be, a word with no spaces that
    // runs a SQL client (node's: no psql needed) OUTSIDE `pgx agent exec` (in the user's shell, whose environment points
    // at another database).
    const prefix = `${shellQuote(launcherReal())} agent exec --agent ${a} --cwd ${p.dir} -- `;
    const client = `node\${IFS}${nodeClientPath()}\${IFS}"create\${IFS}table\${IFS}escaped(x\${IFS}int)"`;
    const smuggled = `${prefix}true;${client};/bin/bash -c 'true' # pgx-routed ${first.branch}`;
    // Control: run as the model wrote it, the smuggled client does land on the decoy (so the check below can fail).
    const control = await bash(smuggled.replace('escaped', 'escaped_control'), {
      cwd: p.dir,
      env: bashEnv(p, s, decoys),
    });
    expect(control.status, control.stderr).toBe(0);
    expect(await publicTables(decoyDb)).toEqual(['escaped_control']);

    // It invokes the launcher without being exactly pgx's form: denied, not run, not even wrapped.
    const r = await hook('pre-tool-use', preToolUseBash(s, smuggled, { agentId: a }), p);
    expect(r.json.hookSpecificOutput.permissionDecision, 'the smuggled command was not denied').toBe('deny');
    expect(r.json.hookSpecificOutput).not.toHaveProperty('updatedInput');
    expect(await publicTables(decoyDb)).toEqual(['escaped_control']);
    expect(await publicTables(first.branch)).toEqual([]);
  });

  it('`agent down --id/--agent` finds a branch made under another host label (PGX_HOST differs)', async () => {
    const p = makeProject();
    const hostA = { ...p.env, PGX_HOST: 'laptop-a' };
    const hostB = { ...p.env, PGX_HOST: 'ci-runner-b' };
    const made = await runPgxAsync(
      [
        'agent',
        'exec',
        '--id',
        'shared',
        '--keep',
        '--json',
        '--',
        'node',
        nodeClientPath(),
        'create table kept (x int)',
      ],
      { cwd: p.dir, env: hostA },
    );
    expect(made.status, made.stderr).toBe(0);
    const branch = JSON.parse(made.stderr.trim().split('\n').pop()!).branch as string;
    expect(branch).toBe('exec_laptopa_shared');
    expect(await dbState(branch)).toEqual({ exists: true, allowConn: true });

    const down = await runPgxAsync(['agent', 'down', '--id', 'shared', '--json'], { cwd: p.dir, env: hostB });
    expect(down.status, down.stdout + down.stderr).toBe(0);
    expect(jsonOf(down).branches.map((b: any) => [b.name, b.action])).toEqual([[branch, 'retired']]);
    expect(await dbState(branch)).toEqual({ exists: true, allowConn: false });
    expect((await lsBranches(p, hostB)).map((b) => [b.name, b.host, b.state])).toEqual([
      [branch, 'laptopa', 'retiring'],
    ]);

    // The same for a subagent's branch made by the SubagentStart hook on host A.
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const sub = branchFromContext(
      await hook('subagent-start', subagentStart(s, a), p, { env: { PGX_HOST: 'laptop-a' } }),
    );
    const downAgent = await runPgxAsync(['agent', 'down', '--agent', a, '--json'], { cwd: p.dir, env: hostB });
    expect(downAgent.status, downAgent.stdout).toBe(0);
    expect(jsonOf(downAgent).branches.map((b: any) => b.name)).toEqual([sub]);
    expect(await dbState(sub)).toEqual({ exists: true, allowConn: false });
  });

  it('`agent down --branch` refuses a database pgx did not make (exit 6), even one named like a branch', async () => {
    const p = makeProject();
    const plain = `plain_${rand()}`;
    const lookalike = `agent_${p.host}_${rand()}_${rand()}`;
    const foreign = `agent_${p.host}_${rand()}`;
    for (const db of [plain, lookalike, foreign]) await sql(`CREATE DATABASE ${db}`);
    await sql('CREATE TABLE precious (x int)', [], plain);
    await sql(`COMMENT ON DATABASE ${foreign} IS 'pgx:template:{}'`); // stamped, but not as a branch
    for (const db of [plain, lookalike, foreign]) {
      for (const extra of [[], ['--now']]) {
        const r = await runPgxAsync(['agent', 'down', '--branch', db, ...extra], { cwd: p.dir, env: p.env });
        expect(r.status, `${db} ${extra}: ${r.stdout}${r.stderr}`).toBe(6);
        expect(r.stderr).toMatch(/pgx stamp/);
        expect(await dbState(db)).toEqual({ exists: true, allowConn: true });
      }
    }
    expect(await publicTables(plain)).toEqual(['precious']);
  });

  it('no password in any process argv (sampled from /proc all along), hook output, env file or hook log', async (ctx) => {
    needs(ctx, ['psql', 'pg_dump'], 'it samples the argv of pg_dump | psql, the copy that hands children the password');
    const pw = pgInfo().password;
    const src = `srcpw_${rand()}`;
    await sql(`CREATE DATABASE ${src}`);
    await sql('CREATE TABLE src_t (x int); INSERT INTO src_t VALUES (1), (2)', [], src);
    const p = makeProject({ source: src });
    const s = session(p.dir, p.dir);
    const agents = [newAgentId(), newAgentId(), newAgentId()];
    const envFile = join(p.dir, 'claude-env.sh');
    writeFileSync(envFile, '');
    const token = `tok${rand()}`;

    // A separate process samples every process's argv every few ms and reports each distinct one.
    const sampler = spawn(process.execPath, ['-e', SAMPLER], { stdio: ['ignore', 'pipe', 'inherit'] });
    let sampled = '';
    sampler.stdout.on('data', (d) => (sampled += d));
    await new Promise((res) => sampler.stdout.once('data', res)); // it is running
    // A session open on the source: the template must be built by pg_dump | psql (children that need the password).
    const pgi = pgInfo();
    const holder = new pg.Client({
      host: pgi.host,
      port: pgi.port,
      user: pgi.user,
      password: pgi.password,
      database: src,
    });
    await holder.connect();
    try {
      const ss = await hook('session-start', sessionStart(s), p, { env: { CLAUDE_ENV_FILE: envFile } });
      await hook('user-prompt-submit', userPromptSubmit(s), p);
      await Promise.all(agents.map((a) => hook('subagent-start', subagentStart(s, a), p)));
      await Promise.all(
        agents.map(async (a) => {
          const { run } = await routeAndRun(
            p,
            s,
            a,
            `echo ${token} >/dev/null; psql -X -Atc 'select sum(x) from src_t'; pg_dump -s | grep -c 'CREATE TABLE'; sleep 0.2`,
          );
          expect([run.status, run.stdout], run.stderr).toEqual([0, '3\n1\n']);
        }),
      );
      // The session's own commands: the env file Claude Code sources before each Bash command.
      const viaEnvFile = await bash(`source "$CLAUDE_ENV_FILE"; psql -X -Atc 'select current_database()'`, {
        cwd: p.dir,
        env: bashEnv(p, s, { CLAUDE_ENV_FILE: envFile }),
      });
      expect(viaEnvFile.stdout.trim()).toBe(branchFromContext(ss));
      await Promise.all(agents.map((a) => hook('subagent-stop', subagentStop(s, a), p)));
      await hook('session-end', sessionEnd(s), p);
      const ex = await runPgxAsync(['agent', 'exec', '--id', 'pw', '--', 'psql', '-X', '-Atc', 'select 1'], {
        cwd: p.dir,
        env: p.env,
      });
      expect(ex.status, ex.stderr).toBe(0);
    } finally {
      await holder.end();
      sampler.kill('SIGTERM');
      await new Promise((res) => sampler.on('close', res));
    }
    const lines = sampled
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const summary = lines.pop() as { samples: number };
    const cmdlines = lines as string[];
    expect(summary.samples).toBeGreaterThan(50);
    // Coverage: the sampler saw the hooks, the rewritten commands, psql and pg_dump (the template's, which keeps owners and GRANTs so takes no flags, and ours).
    for (const re of [
      /agent hook subagent-start/,
      /agent hook pre-tool-use/,
      /agent exec --agent/,
      /^\S*psql /,
      /^\S*pg_dump$/,
      /^\S*pg_dump -s/,
    ]) {
      expect(
        cmdlines.some((c) => re.test(c)),
        `sampler never saw ${re}`,
      ).toBe(true);
    }
    const leaking = cmdlines.filter((c) => c.includes(pw));
    expect(leaking).toEqual([]);
    // The template really was built by pg_dump | psql (the path that hands the password to children).
    const [tpl] = await sql<{ c: string }>(
      "SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname LIKE $1",
      [`pgx_tpl_${p.name}_%`],
    );
    expect(JSON.parse(tpl!.c.replace(/^pgx:template:/, '')).method).toBe('dump-restore');

    // Hook outputs (additionalContext included) of this test.
    expect(hookRuns.length).toBeGreaterThan(10);
    for (const { run } of hookRuns) expect(run.stdout + run.stderr).not.toContain(pw);
    // The env file: connection variables and a passfile, never the password itself.
    const env = readFileSync(envFile, 'utf8');
    expect(env).not.toContain(pw);
    expect(env).toMatch(/^export DATABASE_URL=/m);
    // The hook log: 0600, ids and outcomes only.
    const log = join(p.home, 'agent', 'hooks.log');
    expect(statSync(log).mode & 0o777).toBe(0o600);
    const text = readFileSync(log, 'utf8');
    expect(text).not.toContain(pw);
    expect(text).not.toContain(token);
    expect(text).not.toContain('psql');
    const entries = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries.length).toBe(1 + 1 + 3 + 3 + 3 + 1); // start, prompt, 3 starts, 3 pre-tool-use, 3 stops, end
    for (const e of entries) {
      // "via": "broker" when the broker answered for the hook process (PGX_TEST_BROKER=1 runs the suite through it)
      // SubagentStop adds "changes": the branch's change summary, counts and object names only (checked below)
      const extra = e.event === 'subagent-stop' ? ['changes'] : [];
      expect(
        Object.keys(e)
          .filter((k) => k !== 'via')
          .sort(),
      ).toEqual(
        [
          'agent_id',
          'branch',
          'claude_code',
          'elapsed_ms',
          'event',
          'outcome',
          'permission_mode',
          'project_dir',
          'session_id',
          'time',
          ...extra,
        ].sort(),
      );
      if (e.event === 'subagent-stop') {
        expect(Object.keys(e.changes).sort()).toEqual([
          'against',
          'at',
          'changed',
          'lines',
          'partial',
          'rows',
          'schema',
          'tables_changed',
        ]);
        expect(JSON.stringify(e.changes)).not.toMatch(/srcpw|tok|select|psql/);
      }
      expect([undefined, 'broker']).toContain(e.via);
      expect(e.session_id).toBe(s.sessionId);
    }
    expect(existsSync(join(p.home, 'agent'))).toBe(true);
  });
});

/** Runs in its own process: every 3 ms, each not-yet-seen /proc/<pid>/cmdline as a JSON line; a count at SIGTERM. */
const SAMPLER = `
const fs = require('fs');
const seen = new Set();
let samples = 0;
function tick() {
  samples++;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d) || d === String(process.pid)) continue;
    let c;
    try { c = fs.readFileSync('/proc/' + d + '/cmdline', 'utf8'); } catch { continue; }
    const k = c.split('\\0').join(' ').trim();
    if (k && !seen.has(k)) { seen.add(k); process.stdout.write(JSON.stringify(k) + '\\n'); }
  }
}
tick();
const t = setInterval(tick, 3);
process.on('SIGTERM', () => { clearInterval(t); tick(); process.stdout.write(JSON.stringify({ samples }) + '\\n', () => process.exit(0)); });
`;

describe('routing tickets: exec runs only what the hook routed', () => {
  it('from Claude Code (CLAUDECODE=1), a typed `agent exec --agent` is refused by exec itself; once the hook routed the command, it runs', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const inner = nodeSql('create table ticketed (x int)');
    const typed = `${shellQuote(launcherReal())} agent exec --agent ${a} --cwd ${p.dir} -- /bin/bash -c ${shellQuote(inner)}`;
    // As if the hooks were disabled: nothing routed it, the wrapper rule would approve it, exec refuses (exit 6).
    const refused = await bash(typed, { cwd: p.dir, env: bashEnv(p, s) });
    expect(refused.status, refused.stderr).toBe(6);
    expect(refused.stderr).toContain('its hook did not route this command');
    // Outside Claude Code (a user's terminal) the same exec is the documented CLI and runs.
    const routed = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, inner, { agentId: a }), p));
    const run = await bash(routed.command, { cwd: p.dir, env: bashEnv(p, s) });
    expect(run.status, run.stderr).toBe(0);
    expect(await publicTables(routed.branch)).toEqual(['ticketed']);
    // SubagentStop drops the agent's tickets: the typed form is refused again.
    await hook('subagent-stop', subagentStop(s, a), p);
    const after = await bash(typed, { cwd: p.dir, env: bashEnv(p, s) });
    expect(after.status, after.stderr).toBe(6);
  });
});

describe('the Claude Code version pin', () => {
  it('an unverified version: every rewrite also asks, SessionStart warns; unverified_claude_code = "rules" trusts the rewrite', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const env = { AI_AGENT: 'claude-code_2-9-1_harness' };
    const r = await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: a }), p, { env });
    expect(r.json.hookSpecificOutput.permissionDecision).toBe('ask');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toContain('this is 2.9.1');
    expect(rewriteOf(r).command).toMatch(/; exit # pgx-routed \S+\necho hi$/);
    const start = await hook('session-start', sessionStart(s), p, { env });
    expect(start.json.systemMessage).toContain(
      'verified to keep your permission rules on Claude Code 2.1.328, 2.1.332; this is 2.9.1',
    );
    // No AI_AGENT at all: unknown, so unverified too.
    expect(
      (await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: a }), p, { env: { AI_AGENT: undefined } }))
        .json.hookSpecificOutput.permissionDecision,
    ).toBe('ask');
    // The verified version: no decision, rewrite only.
    expect(
      (await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: a }), p)).json.hookSpecificOutput,
    ).not.toHaveProperty('permissionDecision');

    writeFileSync(
      join(p.dir, '.pgx.toml'),
      `[project]\nname = "${p.name}"\n[agent]\nunverified_claude_code = "rules"\n`,
    );
    const trusted = await hook('pre-tool-use', preToolUseBash(s, 'echo hi', { agentId: a }), p, { env });
    expect(trusted.json.hookSpecificOutput).not.toHaveProperty('permissionDecision');
    expect((await hook('session-start', sessionStart(s), p, { env })).json.systemMessage).toContain(
      'unverified_claude_code = "rules"',
    );
  });
});
