// Clean-up commands that do what a user expects, on the real server: `down` on a branch that is already retiring
// (as `exec --id` leaves its branch) says until when and offers --now; `down --project` lists every branch of this
// project on this host and asks (no terminal: refused, exit 2, unless --yes) before retiring or dropping them, and
// leaves other hosts' branches alone; gc's "nothing" says what is waiting; `ls` outside a project is exit 3, as exec.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx, sql } from '../helpers/pgx.js';

const dirs: string[] = [];
const projects: ReturnType<typeof makeProject>[] = [];
function project(): ReturnType<typeof makeProject> {
  const p = makeProject();
  projects.push(p);
  dirs.push(p.dir);
  return p;
}
afterAll(() => {
  for (const p of projects) runPgx(['agent', 'down', '--project', '--now', '--yes'], p);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `agent gc` until one run drops nothing (at most 5): that run's output. */
function gcQuiet(p: ReturnType<typeof makeProject>): ReturnType<typeof runPgx> {
  for (let i = 0; ; i++) {
    const r = runPgx(['agent', 'gc'], { ...p, timeout: 180_000 });
    expect(r.status, r.stderr).toBe(0);
    if (r.stdout.startsWith('nothing past its deadline') || i === 4) return r;
  }
}

const exists = async (name: string) => (await sql('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1;

describe('down on a retiring branch, and gc', () => {
  it('says it is already retiring until its deadline and offers --now; gc names what waits; --now drops it', async () => {
    const p = project();
    // gc is server-wide, and the test server is shared by the files run before this one: what they left can pass its
    // deadline at any moment. gcQuiet sweeps until a gc finds nothing past its deadline; below, only this project's
    // branches (host label) are compared among the retiring ones.
    gcQuiet(p);
    const ours = (bs: { name: string }[]) => bs.map((b) => b.name).filter((n) => n.includes(`_${p.host}_`));
    expect(runPgx(['agent', 'exec', '--id', 'a', '--', 'true'], p).status).toBe(0); // retires at once
    const branch = `exec_${p.host}_a`;
    const text = runPgx(['agent', 'down', '--id', 'a'], p);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `${branch} is already retiring until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\(in \\d+m( \\d+s)?\\); gc drops it then\\. To drop it now: pgx agent down --id a --now`,
      ),
    );
    const json = jsonOf(runPgx(['agent', 'down', '--id', 'a', '--json'], p));
    expect(json.next).toBe('pgx agent down --id a --now');
    expect(json.branches[0]).toMatchObject({ name: branch, action: 'already-retiring' });
    expect(Date.parse(json.branches[0].deadline)).toBeGreaterThan(Date.now());

    const gc = gcQuiet(p);
    expect(gc.stdout).toMatch(
      /^nothing past its deadline; \d+ retiring branch\(es\) wait for their grace period to end:/,
    );
    expect(gc.stdout).toContain(`${branch}  until `);
    expect(gc.stdout).toContain('pgx agent down --project --now');
    expect(ours(jsonOf(runPgx(['agent', 'gc', '--json'], p)).retiring)).toEqual([branch]);

    expect(jsonOf(runPgx(['agent', 'down', '--id', 'a', '--now', '--json'], p)).branches[0]).toMatchObject({
      name: branch,
      action: 'dropped',
    });
    expect(await exists(branch)).toBe(false);
    expect(ours(jsonOf(runPgx(['agent', 'gc', '--json'], p)).retiring)).toEqual([]);
    const after = gcQuiet(p).stdout;
    expect(after).toMatch(/^nothing past its deadline/);
    expect(after).not.toContain(branch);
  });
});

describe('down --project', () => {
  it("lists this host's branches, refuses without a terminal or --yes (exit 2, nothing done), then drops them; other hosts stay", async () => {
    const p = project();
    for (const id of ['p1', 'p2'])
      expect(runPgx(['agent', 'exec', '--id', id, '--keep', '--', 'true'], p).status).toBe(0);
    const other = { ...p, env: { ...p.env, PGX_HOST: `${p.host}x` } }; // a teammate's machine on the same server
    expect(runPgx(['agent', 'exec', '--id', 'o1', '--keep', '--', 'true'], other).status).toBe(0);
    const mine = [`exec_${p.host}_p1`, `exec_${p.host}_p2`];
    const theirs = `exec_${p.host}x_o1`;

    const refused = runPgx(['agent', 'down', '--project', '--now'], p); // stdin is not a TTY
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /--project would drop 2 branch\(es\) of project ".*" on host \S+ \(1 branch\(es\) of other hosts are left alone/,
    );
    for (const b of mine) expect(refused.stderr).toContain(b);
    expect(refused.stderr).not.toContain(theirs);
    expect(refused.stderr).toMatch(/hint: Pass --yes to confirm \(nothing was changed\)/);
    const refusedJson = runPgx(['agent', 'down', '--project', '--json'], p);
    expect(refusedJson.status).toBe(2);
    expect(jsonOf(refusedJson).error.code).toBe('USAGE');
    for (const b of [...mine, theirs]) expect(await exists(b)).toBe(true);

    const r = runPgx(['agent', 'down', '--project', '--now', '--yes', '--json'], p);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const out = jsonOf(r);
    expect(out.planned.sort()).toEqual(mine);
    expect(out.left_other_hosts).toBe(1);
    expect(out.branches.map((b: { action: string }) => b.action)).toEqual(['dropped', 'dropped']);
    for (const b of mine) expect(await exists(b)).toBe(false);
    expect(await exists(theirs)).toBe(true);

    // retire (no --now) on the other host's own run: retiring, not dropped; then nothing left to do
    const retire = jsonOf(runPgx(['agent', 'down', '--project', '--yes', '--json'], other));
    expect(retire.branches).toMatchObject([{ name: theirs, action: 'retired' }]);
    expect(runPgx(['agent', 'down', '--project', '--now', '--yes'], other).status).toBe(0);
    expect(await exists(theirs)).toBe(false);
    const none = runPgx(['agent', 'down', '--project', '--yes'], p);
    expect(none.status).toBe(0);
    expect(none.stdout).toMatch(/^no branches of project/);
  });

  it('flags: exactly one selector, --yes only with --project', () => {
    const p = project();
    expect(runPgx(['agent', 'down', '--project', '--id', 'x'], p).status).toBe(2);
    const yes = runPgx(['agent', 'down', '--id', 'x', '--yes'], p);
    expect(yes.status).toBe(2);
    expect(yes.stderr).toMatch(/--yes only applies to --project/);
  });
});

describe('agent ls outside a project', () => {
  it('exits 3 with the same hint as exec; --all still lists from anywhere', () => {
    const p = project();
    const bare = mkdtempSync(join(tmpdir(), 'pgx-bare-'));
    dirs.push(bare);
    const at = { cwd: bare, env: { ...p.env, HOME: bare } };
    const ls = runPgx(['agent', 'ls'], at);
    const exec = runPgx(['agent', 'exec', '--', 'true'], at);
    expect(ls.status).toBe(3);
    expect(exec.status).toBe(3);
    expect(ls.stderr).toMatch(/this is not a pgx project/);
    expect(ls.stderr.split('\n').find((l) => l.startsWith('hint:'))).toBe(
      exec.stderr.split('\n').find((l) => l.startsWith('hint:')),
    );
    expect(ls.stdout).not.toMatch(/tmp/);
    const all = runPgx(['agent', 'ls', '--all', '--json'], at);
    expect(all.status, all.stderr).toBe(0);
    expect(Array.isArray(jsonOf(all).branches)).toBe(true);
  });
});
