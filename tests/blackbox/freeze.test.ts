// The frozen copy as a user and a command hook reach it (the wiring; the rules and crash windows are
// tests/engine/freeze.test.ts): `pgx agent freeze` makes the copy, a second one finds it; a SubagentStart for a large
// parent (PGX_FREEZE_DETACH_FROM_BYTES=0 makes any parent large) has it made by a detached `pgx agent freeze`, waits
// for it, and its branch holds the parent's migration while the parent holds its connection.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { jsonOf, makeProject, pgInfo, runPgxAsync, sql } from '../helpers/pgx.js';
import { newAgentId, session, sessionStart, subagentStart } from '../helpers/hook-payloads.js';
import { branchFromContext, hook } from '../helpers/hooks.js';
import { pollUntil } from '../helpers/poll.js';
import { smallCopyMethod } from '../helpers/client-programs.js';

/** Is a `pgx agent freeze` of this branch still running (read with pgrep; nothing is signalled)? */
const freezerRunning = (branch: string) => spawnSync('pgrep', ['-f', `agent freeze --branch ${branch} `]).status === 0;

describe('frozen copies from the CLI and a command hook', () => {
  it('pgx agent freeze makes the copy; a second finds it; a SubagentStart of a large parent has it made detached', async () => {
    const p = makeProject({ toml: `[server]\nurl = "${pgInfo().url}"\n` });
    const s = session(p.dir, p.dir);
    const sessionBranch = branchFromContext(await hook('session-start', sessionStart(s), p));
    const parent = new pg.Client({ connectionString: pgInfo().url.replace(/\/[^/?]*(\?|$)/, `/${sessionBranch}$1`) });
    parent.on('error', () => {});
    await parent.connect();
    try {
      await parent.query('CREATE TABLE parent_mig (x int); INSERT INTO parent_mig VALUES (1)');
      const a = jsonOf(
        await runPgxAsync(['agent', 'freeze', '--branch', sessionBranch, '--json'], { cwd: p.dir, env: p.env }),
      );
      const made = smallCopyMethod();
      expect(a).toMatchObject({ branch: sessionBranch, reused: false, made });
      const b = jsonOf(
        await runPgxAsync(['agent', 'freeze', '--branch', sessionBranch, '--json'], { cwd: p.dir, env: p.env }),
      );
      expect(b).toMatchObject({ copy: a.copy, reused: true, why: 'unchanged' });
      expect(
        (
          await runPgxAsync(['agent', 'freeze', '--branch', sessionBranch, '--after-ticket', 'x'], {
            cwd: p.dir,
            env: p.env,
          })
        ).status,
      ).toBe(2);
      expect(
        (await runPgxAsync(['agent', 'freeze', '--branch', `nosuch_${p.host}`], { cwd: p.dir, env: p.env })).status,
      ).toBe(5);
      const ls = jsonOf(await runPgxAsync(['agent', 'ls', '--json'], { cwd: p.dir, env: p.env }));
      expect(ls.frozen.map((f: { name: string }) => f.name)).toContain(a.copy);
      const all = await runPgxAsync(['agent', 'ls', '--all'], { cwd: p.dir, env: p.env });
      expect(all.stdout).toContain(`frozen copy ${a.copy} of ${sessionBranch}: ${made}`);
      const doctor = JSON.parse((await runPgxAsync(['agent', 'doctor', '--json'], { cwd: p.dir, env: p.env })).stdout);
      expect(doctor.checks.find((c: { name: string }) => c.name === 'frozen-copies')).toMatchObject({
        status: 'ok',
        detail: expect.stringMatching(/^1 for 1 branch\(es\), \d+ MB$/),
      });

      await parent.query('INSERT INTO parent_mig VALUES (10)'); // a change: the next fork needs a new copy
      const r = await hook('subagent-start', subagentStart(s, newAgentId()), p, {
        env: { PGX_FREEZE_DETACH_FROM_BYTES: '0' },
      });
      expect(r.json.hookSpecificOutput.additionalContext).toContain(
        `a copy of your session's branch "${sessionBranch}"`,
      );
      const branch = branchFromContext(r);
      expect((await sql<{ n: number }>('SELECT sum(x)::int AS n FROM parent_mig', [], branch))[0]!.n).toBe(11);
      const copies = await sql<{ name: string; state: string }>(
        `SELECT name, state FROM pgx_frozen WHERE parent = $1`,
        [sessionBranch],
        'pgx_registry',
      );
      expect(copies).toHaveLength(1); // the detached freezer's, the superseded one dropped
      expect(copies[0]!.name).not.toBe(a.copy);
      // The detached freezer is gone once its copy is ready (nothing left running), and so is its pid file.
      expect(await pollUntil(async () => !freezerRunning(sessionBranch), 10_000, 100)).toBe(true);
      expect(readdirSync(join(p.home, 'agent')).filter((f) => f.startsWith('freeze-'))).toEqual([]);

      // Three at once after another change: one freezer's copy serves them all.
      await parent.query('INSERT INTO parent_mig VALUES (100)');
      const three = await Promise.all(
        [0, 1, 2].map(() =>
          hook('subagent-start', subagentStart(s, newAgentId()), p, { env: { PGX_FREEZE_DETACH_FROM_BYTES: '0' } }),
        ),
      );
      for (const h of three)
        expect(
          (await sql<{ n: number }>('SELECT sum(x)::int AS n FROM parent_mig', [], branchFromContext(h)))[0]!.n,
        ).toBe(111);
      const now = await sql<{ name: string }>(
        `SELECT name FROM pgx_frozen WHERE parent = $1`,
        [sessionBranch],
        'pgx_registry',
      );
      // The new copy, and the superseded one kept as the fork point of the subagent cloned from it (decision 500).
      expect(now).toHaveLength(2);
      expect(now.map((c) => c.name)).toContain(copies[0]!.name);
      expect(await pollUntil(async () => !freezerRunning(sessionBranch), 10_000, 100)).toBe(true);
    } finally {
      await parent.end();
    }
    await runPgxAsync(['agent', 'down', '--session', s.sessionId, '--now'], { cwd: p.dir, env: p.env });
    const gc = jsonOf(await runPgxAsync(['agent', 'gc', '--json'], { cwd: p.dir, env: p.env }));
    expect(gc.frozen_dropped.length).toBeGreaterThan(0);
  });
});
