// The branch lifecycle driven by the hooks: many subagents, concurrent starts, SessionStart's env file, resume,
// SessionEnd, UserPromptSubmit heartbeats, and identity across projects and sessions. Checked in the database.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, makeProject, pgInfo, sql } from '../helpers/pgx.js';
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
  lsBranches,
  mapLimit,
  publicTables,
  registryRows,
  rewriteOf,
  routeAndRun,
} from '../helpers/hooks.js';
import { untilServerTimePast } from '../helpers/poll.js';

const logLines = (home: string) =>
  readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          event: string;
          agent_id: string | null;
          session_id: string | null;
          branch: string | null;
          outcome: string;
        },
    );

describe('hook lifecycle', () => {
  it('20 subagents of one session: 20 distinct branches, each retired by its SubagentStop', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agents = Array.from({ length: 20 }, () => newAgentId());
    const branches = await mapLimit(agents, 5, async (a) =>
      branchFromContext(await hook('subagent-start', subagentStart(s, a), p)),
    );
    expect(new Set(branches).size).toBe(20);
    for (const b of branches) expect(await dbState(b)).toEqual({ exists: true, allowConn: true });

    await mapLimit(agents, 5, (a) => hook('subagent-stop', subagentStop(s, a), p));
    const ls = await lsBranches(p);
    expect(ls.map((b) => [b.name, b.agent_id, b.kind, b.state]).sort()).toEqual(
      agents.map((a, i) => [branches[i], a, 'subagent', 'retiring']).sort(),
    );
    const conn = await sql<{ datname: string; datallowconn: boolean }>(
      'SELECT datname, datallowconn FROM pg_database WHERE datname = ANY($1)',
      [branches],
    );
    expect(conn.length).toBe(20);
    expect(conn.filter((r) => r.datallowconn)).toEqual([]);
    const stops = logLines(p.home).filter((l) => l.event === 'subagent-stop');
    expect(stops.map((l) => [l.agent_id, l.branch, l.outcome.split(':')[0]]).sort()).toEqual(
      agents.map((a, i) => [a, branches[i], 'retired']).sort(),
    );
  });

  it('20 concurrent SubagentStart processes (half with colliding short names): all succeed, 20 distinct active branches', async () => {
    const p = makeProject(); // fresh project: the first ensures also race to build the template
    const s = session(p.dir, p.dir);
    const agents = Array.from({ length: 20 }, (_, i) => (i % 2 ? newAgentId() : newAgentId('5550b0a'))); // 10 share their first 8 chars
    const t0 = performance.now();
    const runs = await Promise.all(agents.map((a) => hook('subagent-start', subagentStart(s, a), p)));
    console.log(
      `20 concurrent SubagentStart: wall ${Math.round(performance.now() - t0)} ms, slowest ${Math.max(...runs.map((r) => r.elapsedMs))} ms`,
    );
    const branches = runs.map(branchFromContext);
    expect(new Set(branches).size).toBe(20);
    const ls = await lsBranches(p);
    expect(ls.map((b) => [b.name, b.agent_id, b.state]).sort()).toEqual(
      agents.map((a, i) => [branches[i], a, 'active']).sort(),
    );
    const rows = await sql<{ datname: string; datallowconn: boolean }>(
      'SELECT datname, datallowconn FROM pg_database WHERE datname = ANY($1)',
      [branches],
    );
    expect(rows.map((r) => r.datallowconn)).toEqual(Array(20).fill(true));
    const outcomes = logLines(p.home).map((l) => l.outcome);
    expect(outcomes).toEqual(Array(20).fill('ok:clone'));
    // Branches are working databases of their own (a sample: two that got the short name's slot or a hash name each).
    const sample = [0, 1, 2, 3];
    await mapLimit(sample, 4, async (i) => {
      const a = agents[i]!;
      const { run } = await routeAndRun(p, s, a, `psql -X -qc 'create table mine_${a} (x int)'`);
      expect(run.status, run.stderr).toBe(0);
      expect(await publicTables(branches[i]!)).toEqual([`mine_${a}`]);
    });
  });

  it('SessionStart writes the env file (no password; a 0600 PGPASSFILE); resume reattaches and revives the same branch', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const pw = pgInfo().password;
    const envFile = join(p.dir, 'env-startup.sh');
    writeFileSync(envFile, '# written by Claude Code\n');
    const started = await hook('session-start', sessionStart(s, 'startup'), p, { env: { CLAUDE_ENV_FILE: envFile } });
    const branch = branchFromContext(started);
    const text = readFileSync(envFile, 'utf8');
    expect(text.startsWith('# written by Claude Code\n')).toBe(true); // appended, not overwritten
    const exported = Object.fromEntries(
      [...text.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1], m[2]!.replace(/^'(.*)'$/, '$1')]),
    );
    const pgi = pgInfo();
    // The parent session's branch has a role of its own too: its credentials, never the admin's.
    const role = (await registryRows(p.name)).find((b) => b.name === branch)!.role!;
    expect(role).toMatch(/^pgx_role_/);
    expect(exported).toMatchObject({
      PGHOST: pgi.host,
      PGPORT: String(pgi.port),
      PGUSER: role,
      PGDATABASE: branch,
      DATABASE_URL: `postgresql://${role}@${pgi.host}:${pgi.port}/${branch}`,
    });
    expect(text).not.toContain(pw);
    expect(text).not.toMatch(/PGPASSWORD=/);
    const passfile = exported.PGPASSFILE!;
    expect(statSync(passfile).mode & 0o777).toBe(0o600);
    expect(readFileSync(passfile, 'utf8')).toContain(`:${branch}:${role}:`);
    expect(readFileSync(passfile, 'utf8')).not.toContain(pw);

    // Claude Code sources the file before each Bash command: with decoys (and a wrong PGPASSWORD) in the shell,
    // psql lands on the session branch, authenticated by the passfile.
    const decoys = {
      PGDATABASE: 'postgres',
      PGPASSWORD: 'wrong',
      PGSERVICE: 'nothere',
      DATABASE_URL: `postgresql://${pgi.user}@${pgi.host}:${pgi.port}/postgres`,
      CLAUDE_ENV_FILE: envFile,
    };
    const cmd = `source "$CLAUDE_ENV_FILE"; psql -X -v ON_ERROR_STOP=1 -qc 'create table session_work (x int)' && psql "$DATABASE_URL" -X -Atc 'select current_database()'`;
    const r = await bash(cmd, { cwd: p.dir, env: bashEnv(p, s, decoys) });
    expect([r.status, r.stdout.trim()], r.stderr).toEqual([0, branch]);
    expect(await publicTables(branch)).toEqual(['session_work']);
    // The admin password is in no variable of the session's Bash (PGX_DATABASE_URL, inherited, is unset too).
    const env = await bash('source "$CLAUDE_ENV_FILE"; env', {
      cwd: p.dir,
      env: bashEnv(p, s, { CLAUDE_ENV_FILE: envFile }),
    });
    expect(bashEnv(p, s, {}).PGX_DATABASE_URL).toContain(pw); // the decoy was there
    expect(env.stdout).not.toContain(pw);
    expect(env.stdout).toContain(`PGUSER=${role}`);
    // … and pgx itself, run from that shell (a routed command is), still finds the server through PGX_DATABASE_URL_FILE.
    const routed = await bash(
      `source "$CLAUDE_ENV_FILE"; node ${JSON.stringify(LAUNCHER)} agent exec --session ${s.sessionId} -- psql -X -Atc 'select current_user'`,
      { cwd: p.dir, env: bashEnv(p, s, { CLAUDE_ENV_FILE: envFile }) },
    );
    expect([routed.status, routed.stdout.trim()], routed.stderr).toEqual([0, expect.stringMatching(/^pgx_role_/)]);

    // The session ends (retired: no connections), then is resumed: same branch, active again, data intact.
    await hook('session-end', sessionEnd(s, 'other'), p);
    expect(await dbState(branch)).toEqual({ exists: true, allowConn: false });
    expect((await registryRows(p.name)).map((b) => [b.name, b.state])).toEqual([[branch, 'retiring']]);
    const envFile2 = join(p.dir, 'env-resume.sh');
    const resumed = await hook('session-start', sessionStart(s, 'resume'), p, { env: { CLAUDE_ENV_FILE: envFile2 } });
    expect(branchFromContext(resumed)).toBe(branch);
    expect(await dbState(branch)).toEqual({ exists: true, allowConn: true });
    expect((await registryRows(p.name)).map((b) => [b.name, b.state])).toEqual([[branch, 'active']]);
    expect(await publicTables(branch)).toEqual(['session_work']);
    expect(readFileSync(envFile2, 'utf8')).toMatch(new RegExp(`^export PGDATABASE='?${branch}'?$`, 'm'));
    expect(
      logLines(p.home)
        .filter((l) => l.event === 'session-start')
        .map((l) => l.outcome),
    ).toEqual(['ok:clone', 'ok:revive']);
  });

  for (const [how, args] of [
    ['retired by `down --session`', ['--session']],
    ['dropped by `down --session --now`', ['--now', '--session']],
  ] as const) {
    it(`SessionEnd removes the passfile when the session branch was already ${how}`, async () => {
      const p = makeProject();
      const s = session(p.dir, p.dir);
      const envFile = join(p.dir, 'env.sh');
      writeFileSync(envFile, '');
      await hook('session-start', sessionStart(s, 'startup'), p, { env: { CLAUDE_ENV_FILE: envFile } });
      const passfile = /^export PGPASSFILE='?([^'\n]+)'?$/m.exec(readFileSync(envFile, 'utf8'))![1]!;
      expect(existsSync(passfile)).toBe(true);
      const down = spawnSync(process.execPath, [LAUNCHER, 'agent', 'down', ...args, s.sessionId], {
        cwd: p.cwd,
        env: p.env,
        encoding: 'utf8',
      });
      expect(down.status, down.stdout + down.stderr).toBe(0);
      const end = await hook('session-end', sessionEnd(s, 'other'), p);
      expect(end.status).toBe(0);
      expect(existsSync(passfile)).toBe(false);
    });
  }

  it('SessionEnd removes the passfile even when the server cannot be reached', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const envFile = join(p.dir, 'env.sh');
    writeFileSync(envFile, '');
    await hook('session-start', sessionStart(s, 'startup'), p, { env: { CLAUDE_ENV_FILE: envFile } });
    const passfile = /^export PGPASSFILE='?([^'\n]+)'?$/m.exec(readFileSync(envFile, 'utf8'))![1]!;
    await hook('session-end', sessionEnd(s, 'other'), {
      ...p,
      env: { ...p.env, PGX_DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/postgres?connect_timeout=1' },
    });
    expect(existsSync(passfile)).toBe(false);
  });

  it("SessionEnd retires the session's branch and its subagents', not another session's", async () => {
    const p = makeProject();
    const s1 = session(p.dir, p.dir);
    const s2 = session(p.dir, p.dir);
    const own = branchFromContext(await hook('session-start', sessionStart(s1), p));
    const subs = await Promise.all(
      [newAgentId(), newAgentId()].map(async (a) =>
        branchFromContext(await hook('subagent-start', subagentStart(s1, a), p)),
      ),
    );
    const other = branchFromContext(await hook('session-start', sessionStart(s2), p));
    const otherSub = branchFromContext(await hook('subagent-start', subagentStart(s2, newAgentId()), p));
    const end = await hook('session-end', sessionEnd(s1), p);
    expect(end.stdout).toBe('');
    for (const b of [own, ...subs]) expect(await dbState(b), b).toEqual({ exists: true, allowConn: false });
    for (const b of [other, otherSub]) expect(await dbState(b), b).toEqual({ exists: true, allowConn: true });
    const state = Object.fromEntries((await registryRows(p.name)).map((r) => [r.name, r.state]));
    expect(state).toEqual({
      [own]: 'retiring',
      [subs[0]!]: 'retiring',
      [subs[1]!]: 'retiring',
      [other]: 'active',
      [otherSub]: 'active',
    });
  });

  it('UserPromptSubmit moves last_seen_at (and the idle deadline) of the session branch', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const branch = branchFromContext(await hook('session-start', sessionStart(s), p));
    const row = async () => (await registryRows(p.name)).find((r) => r.name === branch)!;
    const before = await row();
    await untilServerTimePast(before.last_seen_at); // a heartbeat now is measurably later, by the server's clock
    const r = await hook('user-prompt-submit', userPromptSubmit(s), p);
    expect(r.stdout).toBe('');
    const after = await row();
    expect(after.last_seen_at.getTime()).toBeGreaterThan(before.last_seen_at.getTime());
    expect(after.deadline.getTime()).toBeGreaterThan(before.deadline.getTime());
    expect(logLines(p.home).at(-1)).toMatchObject({ event: 'user-prompt-submit', branch, outcome: 'heartbeat' });
  });

  it('identity: the same agent id in another project or another session gets a different branch', async () => {
    const p1 = makeProject();
    const p2 = makeProject();
    const a = newAgentId();
    const s1 = session(p1.dir, p1.dir);
    const s1InP2 = session(p2.dir, p2.dir, s1.sessionId); // same session id, other project
    const s2 = session(p1.dir, p1.dir);
    const cases = [
      { p: p1, s: s1, tag: 'p1s1' },
      { p: p2, s: s1InP2, tag: 'p2s1' },
      { p: p1, s: s2, tag: 'p1s2' },
    ];
    const branches = await Promise.all(
      cases.map(async (c) => branchFromContext(await hook('subagent-start', subagentStart(c.s, a), c.p))),
    );
    expect(new Set(branches).size).toBe(3);
    // All three PreToolUse first, THEN the commands: when p1s1's command runs, p1s2's branch (same project, same
    // agent id) is the most recently used one, so only the session id can tell them apart.
    const rewrites = [];
    for (const c of cases)
      rewrites.push(
        rewriteOf(
          await hook(
            'pre-tool-use',
            preToolUseBash(c.s, `psql -X -qc 'create table only_${c.tag} (x int)'`, { agentId: a }),
            c.p,
          ),
        ),
      );
    expect(rewrites.map((r) => r.branch)).toEqual(branches);
    for (const [i, c] of cases.entries()) {
      const run = await bash(rewrites[i]!.command, { cwd: c.p.dir, env: bashEnv(c.p, c.s) });
      expect(run.status, run.stderr).toBe(0);
    }
    for (const [i, c] of cases.entries()) expect(await publicTables(branches[i]!)).toEqual([`only_${c.tag}`]);
  });
});
