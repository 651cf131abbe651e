// The handoff at SubagentStop through the real hook processes: the change summary in the log and `agent ls --json`,
// names and counts only; a changed branch kept for [agent] keep_changed past its grace (gc honours it, `down --now`
// still drops it), an unchanged one not; the summary failing never fails the stop (and the branch is kept); the
// parent gets each summary once, at its next prompt or Bash command; `agent diff` inside a routed command diffs the
// caller's own branch.
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, pgInfo, runPgxAsync, serverMajor, sql } from '../helpers/pgx.js';
import {
  newAgentId,
  preToolUseBash,
  session,
  subagentStart,
  subagentStop,
  userPromptSubmit,
} from '../helpers/hook-payloads.js';
import { bash, bashEnv, dbState, hook, lsBranches, rewriteOf, routeAndRun } from '../helpers/hooks.js';

const rand = () => Math.random().toString(36).slice(2, 10);

async function withSource(): Promise<string> {
  const src = `src_handoff_${rand()}`;
  await sql(`CREATE DATABASE ${src}`);
  await sql(
    "CREATE TABLE items (id int PRIMARY KEY, secret text); INSERT INTO items VALUES (1, 'hunter2-row-content')",
    [],
    src,
  );
  return src;
}

const logLines = (home: string) =>
  readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('handoff at SubagentStop (hook processes)', () => {
  it('summary logged and listed (names and counts only); a changed branch kept for keep_changed past its grace, an unchanged one gc-dropped; the parent hears it once', async () => {
    const p = makeProject({ source: await withSource(), toml: '[agent]\ngrace = "0s"\nkeep_changed = "1h"\n' });
    const s = session(p.dir, p.dir);
    const [changer, idle] = [newAgentId(), newAgentId()];
    for (const a of [changer, idle]) await hook('subagent-start', subagentStart(s, a), p);
    const { run } = await routeAndRun(
      p,
      s,
      changer,
      `psql -X -qc "create table notes (id int primary key, body text); insert into notes values (1, 'another-row-secret'); update items set secret = 'changed-secret' where id = 1"`,
    );
    expect(run.status, run.stderr).toBe(0);
    expect((await routeAndRun(p, s, idle, `psql -X -qAtc "select count(*) from items"`)).run.stdout.trim()).toBe('1');

    const stopped = await hook('subagent-stop', subagentStop(s, changer), p);
    expect(stopped.stdout.trim(), 'SubagentStop answers nothing (its additionalContext would go to the subagent)').toBe(
      '',
    );
    await hook('subagent-stop', subagentStop(s, idle), p);
    const stops = logLines(p.home).filter((l) => l.event === 'subagent-stop');
    const byAgent = new Map(stops.map((l) => [l.agent_id, l]));
    expect(byAgent.get(changer).outcome).toMatch(/^retired:terminated=\d+:remaining=0:changes=yes:kept:handoff$/);
    // From PostgreSQL 18 on, a key's NOT NULL is a constraint of its own (pg_constraint), and the summary names it.
    const notNull = (await serverMajor()) >= 18;
    expect(byAgent.get(changer).changes).toMatchObject({
      changed: true,
      schema: { added: notNull ? 5 : 4, dropped: 0, altered: 0 },
      tables_changed: 1,
      rows: { added: 0, removed: 0, changed: 1 },
      partial: false,
    });
    expect(byAgent.get(changer).changes.lines).toEqual([
      'added: column public.notes.body, column public.notes.id, ' +
        `${notNull ? 'constraint public.notes.notes_id_not_null, ' : ''}constraint public.notes.notes_pkey, table public.notes`,
      'rows: public.items ~1',
    ]);
    expect(byAgent.get(idle).outcome).toMatch(/^retired:terminated=\d+:remaining=0:changes=none$/);
    const text = readFileSync(join(p.home, 'agent', 'hooks.log'), 'utf8');
    for (const secret of ['hunter2', 'another-row-secret', 'changed-secret']) expect(text).not.toContain(secret);

    const ls = await lsBranches(p);
    const kept = ls.find((b) => b.agent_id === changer);
    expect(kept.changes).toEqual(byAgent.get(changer).changes);
    const human = await runPgxAsync(['agent', 'ls'], { cwd: p.dir, env: p.env });
    expect(human.stdout).toContain(`${kept.name} changed: added: column public.notes.body`);
    // keep_changed: 1h from the stop. The unchanged one's grace (0s) was over at once: SubagentStop's own gc drops it
    // (bounded: the 2 oldest expired records of the server, so in a full run another test's may come first; then
    // `agent gc` does); gc leaves the changed one.
    expect(Date.parse(kept.deadline) - Date.parse(kept.changes.at)).toBeGreaterThan(55 * 60_000);
    const idleLeft = ls.find((b) => b.agent_id === idle);
    if (idleLeft) expect(idleLeft).toMatchObject({ state: 'retiring', deadline_kind: 'grace' });
    const gc = jsonOf(await runPgxAsync(['agent', 'gc', '--json'], { cwd: p.dir, env: p.env }));
    expect(gc.dropped.map((d: { name: string }) => d.name)).not.toContain(kept.name);
    expect(await dbState(kept.name)).toEqual({ exists: true, allowConn: false });
    expect((await lsBranches(p)).find((b) => b.agent_id === idle)).toBeUndefined();
    expect(await dbState(byAgent.get(idle).branch)).toEqual({ exists: false, allowConn: null });

    // The parent: its next prompt carries the summary, once; the next one nothing.
    const heard = await hook('user-prompt-submit', userPromptSubmit(s), p);
    expect(heard.json.hookSpecificOutput.additionalContext).toContain(`(branch "${kept.name}") changed its database`);
    expect(heard.json.hookSpecificOutput.additionalContext).toContain('rows: public.items ~1');
    expect(heard.json.hookSpecificOutput.additionalContext).not.toContain(byAgent.get(idle).branch); // nothing changed: nothing said
    expect((await hook('user-prompt-submit', userPromptSubmit(s), p)).stdout.trim()).toBe('');

    // The whole diff, of the retiring branch, is there for review; `down --now` drops it.
    const diff = jsonOf(
      await runPgxAsync(['agent', 'diff', '--agent', changer, '--session', s.sessionId, '--json'], {
        cwd: p.dir,
        env: p.env,
      }),
    );
    expect(diff.schema.added.map((c: { name: string }) => c.name)).toContain('public.notes');
    expect(await dbState(kept.name)).toEqual({ exists: true, allowConn: false });
    const down = jsonOf(
      await runPgxAsync(['agent', 'down', '--branch', kept.name, '--now', '--json'], { cwd: p.dir, env: p.env }),
    );
    expect(down.branches.map((b: { action: string }) => b.action)).toEqual(['dropped']);
  });

  it("the summary failing (the template gone) fails open: the stop retires and keeps the branch, the log says why; the parent's next Bash hears it", async () => {
    const p = makeProject({ source: await withSource() });
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    await hook('subagent-start', subagentStart(s, a), p);
    expect((await runPgxAsync(['template', 'drop', '--json'], { cwd: p.dir, env: p.env })).status).toBe(0);
    await hook('subagent-stop', subagentStop(s, a), p);
    const stop = logLines(p.home).find((l) => l.event === 'subagent-stop');
    expect(stop.outcome).toMatch(/^retired:.*:changes=failed\(NOT_FOUND\):kept:handoff$/);
    expect(stop.changes).toMatchObject({ changed: null, error: 'NOT_FOUND', lines: [] });
    const ls = (await lsBranches(p)).find((b) => b.agent_id === a);
    expect(ls.state).toBe('retiring');
    expect(Date.parse(ls.deadline) - Date.now()).toBeGreaterThan(23 * 3_600_000); // keep_changed's default, 24h
    // The parent's own Bash (not routed) carries it, and runs as before.
    const r = await hook('pre-tool-use', preToolUseBash(s, 'echo hi'), p);
    expect(r.json.hookSpecificOutput).toEqual({
      hookEventName: 'PreToolUse',
      additionalContext: expect.stringContaining('its change summary could not be made (NOT_FOUND)'),
    });
    expect((await hook('pre-tool-use', preToolUseBash(s, 'echo hi'), p)).stdout.trim()).toBe('');
    await runPgxAsync(['agent', 'down', '--session', s.sessionId, '--now'], { cwd: p.dir, env: p.env });
  });

  it("inside a routed command, `pgx agent diff` with no selector diffs that command's own branch", async () => {
    // The server in .pgx.toml, as a shared server is: a routed command never gets PGX_DATABASE_URL (the admin's
    // password), so pgx inside it finds the server the way the project names it.
    const p = makeProject({ toml: `[server]\nurl = "${pgInfo().url}"\n` });
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    await hook('subagent-start', subagentStart(s, a), p);
    const routed = rewriteOf(
      await hook(
        'pre-tool-use',
        preToolUseBash(s, `psql -X -qc 'create table mine (x int)' && pgx agent diff --json`, { agentId: a }),
        p,
      ),
    );
    // the routed command finds pgx on PATH and the server in its own config, as an agent's would
    const bin = mkdtempSync(join(tmpdir(), 'pgx-bin-'));
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    const env = bashEnv(p, s, { PATH: `${bin}:${process.env.PATH}` });
    const out = await bash(routed.command, { cwd: p.dir, env });
    expect(out.status, out.stderr).toBe(0);
    const diff = JSON.parse(out.stdout.slice(out.stdout.indexOf('{')));
    expect(diff.branch).toBe(routed.branch);
    expect(diff.schema.added.map((c: { name: string }) => c.name).sort()).toEqual(['public.mine', 'public.mine.x']);
    await hook('subagent-stop', subagentStop(s, a), p);
    await runPgxAsync(['agent', 'down', '--session', s.sessionId, '--now'], { cwd: p.dir, env: p.env });
  });
});
