// PreToolUse routing through the real rewrite: the rewritten command is run by a real `bash -c`, as Claude Code's
// Bash tool does, and every claim is checked in the database.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, makeProject, pgInfo, sql } from '../helpers/pgx.js';
import { newAgentId, preToolUseBash, session, subagentStart } from '../helpers/hook-payloads.js';
import {
  bash,
  bashEnv,
  branchFromContext,
  hook,
  launcherReal,
  lsBranches,
  mapLimit,
  publicTables,
  rewriteOf,
  routeAndRun,
} from '../helpers/hooks.js';
import { shellQuote } from '../../src/lib/shell.js';

describe('PreToolUse routing', () => {
  it('three subagents of one session: three branches, each holding only its own marker table', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const agents = [newAgentId(), newAgentId(), newAgentId()];
    // Claude Code starts the three in parallel.
    const started = await Promise.all(agents.map((a) => hook('subagent-start', subagentStart(s, a), p)));
    const branches = started.map(branchFromContext);
    expect(new Set(branches).size).toBe(3);

    const runs = await Promise.all(
      agents.map((a) =>
        routeAndRun(
          p,
          s,
          a,
          `psql -X -v ON_ERROR_STOP=1 -qc 'create table marker_${a} (x int)' && psql -X -Atc 'select current_database()'`,
        ),
      ),
    );
    for (const [i, { rewrite, run }] of runs.entries()) {
      expect(run.status, run.stderr).toBe(0);
      expect(rewrite.branch).toBe(branches[i]);
      expect(run.stdout.trim()).toBe(branches[i]);
    }
    // The database: each branch has exactly its own agent's table.
    for (const [i, a] of agents.entries()) expect(await publicTables(branches[i]!)).toEqual([`marker_${a}`]);
    const ls = await lsBranches(p);
    expect(ls.map((b) => [b.name, b.agent_id, b.session_id, b.state]).sort()).toEqual(
      agents.map((a, i) => [branches[i], a, s.sessionId, 'active']).sort(),
    );
  });

  it('the rewrite is `<launcher> agent exec --agent <id> --cwd <project> -- <shell> -c <original>; exit # pgx-routed <branch>` + a verbatim copy, every other field kept', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const original = `psql -X -Atc "select 'it''s'" | tr a-z A-Z`;
    const r = await hook(
      'pre-tool-use',
      preToolUseBash(s, original, {
        agentId: a,
        input: { description: 'Shout', timeout: 45000, run_in_background: false },
      }),
      p,
    );
    const rw = rewriteOf(r);
    expect(rw.command).toBe(
      `${shellQuote(launcherReal())} agent exec --agent ${a} --cwd ${p.dir} -- /bin/bash -c ${shellQuote(original)}; exit # pgx-routed ${rw.branch}\n${original}`,
    );
    expect(rw.updatedInput).toEqual({
      command: rw.command,
      description: 'Shout',
      timeout: 45000,
      run_in_background: false,
    });
    expect(r.json.hookSpecificOutput).not.toHaveProperty('permissionDecision');
    // PreToolUse made the branch itself (no SubagentStart seen: SubagentStart can be missing for background agents).
    const out = await bash(rw.command, { cwd: p.dir, env: bashEnv(p, s) });
    expect(out.stdout).toBe("IT'S\n");
    expect((await sql('SELECT 1 FROM pg_database WHERE datname = $1', [rw.branch])).length).toBe(1);
  });

  it('decoy DATABASE_URL / PGDATABASE / PGSERVICE+PGSERVICEFILE in the shell: psql lands on the branch, the source is unchanged', async () => {
    const src = `src_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${src}`);
    await sql('CREATE TABLE src_rows (x int); INSERT INTO src_rows VALUES (1), (2), (3)', [], src);
    const p = makeProject({ source: src });
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const pg = pgInfo();
    const serviceFile = join(p.dir, 'pg_service.conf');
    writeFileSync(serviceFile, `[decoy]\nhost=${pg.host}\nport=${pg.port}\nuser=${pg.user}\ndbname=${src}\n`);
    // Everything a user's shell could carry that points at the source, with a working password, so a leak WOULD land.
    const decoys: NodeJS.ProcessEnv = {
      DATABASE_URL: `postgresql://${pg.user}@${pg.host}:${pg.port}/${src}`,
      PGDATABASE: src,
      PGHOST: pg.host,
      PGPORT: String(pg.port),
      PGUSER: pg.user,
      PGPASSWORD: pg.password,
      PGSERVICE: 'decoy',
      PGSERVICEFILE: serviceFile,
    };
    // Control: the decoys do reach the source when nothing reroutes the command (each one on its own, too).
    const direct = (env: NodeJS.ProcessEnv, cmd = `psql -X -Atc 'select current_database()'`) =>
      bash(cmd, { cwd: p.dir, env: bashEnv(p, s, env) });
    expect((await direct(decoys)).stdout.trim()).toBe(src);
    const { PGSERVICE, PGSERVICEFILE, PGHOST, PGPORT, PGUSER, PGPASSWORD } = decoys;
    expect((await direct({ PGSERVICE, PGSERVICEFILE, PGPASSWORD })).stdout.trim()).toBe(src);
    expect(
      (
        await direct(
          { DATABASE_URL: decoys.DATABASE_URL, PGPASSWORD },
          `psql "$DATABASE_URL" -X -Atc 'select current_database()'`,
        )
      ).stdout.trim(),
    ).toBe(src);
    expect((await direct({ PGDATABASE: src, PGHOST, PGPORT, PGUSER, PGPASSWORD })).stdout.trim()).toBe(src);

    const cmds = [
      `psql -X -v ON_ERROR_STOP=1 -qc 'insert into src_rows values (100)' && psql -X -Atc 'select current_database()'`,
      `psql "$DATABASE_URL" -X -v ON_ERROR_STOP=1 -qc 'insert into src_rows values (200)' && psql "$DATABASE_URL" -X -Atc 'select current_database()'`,
    ];
    let branch = '';
    for (const cmd of cmds) {
      const { rewrite, run } = await routeAndRun(p, s, a, cmd, { env: decoys });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe(rewrite.branch);
      branch = rewrite.branch;
    }
    expect(branch).not.toBe(src);
    const rows = async (db: string) =>
      (await sql<{ x: number }>('SELECT x FROM src_rows ORDER BY x', [], db)).map((r) => r.x);
    expect(await rows(branch)).toEqual([1, 2, 3, 100, 200]);
    expect(await rows(src)).toEqual([1, 2, 3]);
    expect(await publicTables(src)).toEqual(['src_rows']);
  });

  it('shell semantics survive the rewrite: pipes, heredocs, redirects, quotes, $(…), background + wait, exit status, cwd', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    await hook('subagent-start', subagentStart(s, a), p);
    const cases: string[] = [
      `printf 'b\\na\\nc\\n' | sort | head -2 | tr a-z A-Z`,
      `cat <<'EOF'\nliteral $HOME and $(echo no) and \`echo no\` and 'q' "dq"\nEOF`,
      `n=3; cat <<EOF\nsum=$((n+4)) word=$(echo sub) home=\${HOME##*/}\nEOF`,
      `echo out > f1.txt; echo err 1>&2; echo more >> f1.txt; cat < f1.txt; ls nope 2>/dev/null || echo missing; { echo a; echo b >&2; } 2>&1 | wc -l`,
      `echo 'single $HOME "dq" \\n' "double 'sq' \\"esc\\" $((6*7))" it\\'s 'a'"'"'b' ''`,
      `echo "outer $(echo "inner $(printf '%s' deep)") $(( $(echo 2) + 3 ))" \`echo back\``,
      `(sleep 0.2; echo bg-done) & pid=$!; echo fg; wait $pid; echo "waited $?"`,
      `echo before; false || echo recovered; exit 7`,
      `for i in 1 2 3; do\n  echo "line $i"\ndone; pwd; test -t 0 || echo no-tty`,
      `printf '%s\\n' 'héllo wörld ✓' '!bang' '$dollar' 'back\\slash' "tab\tin"; set -- x y; echo "$# $@"`,
    ];
    await mapLimit(cases, 4, async (cmd, i) => {
      const dir = join(p.dir, `case${i}`, 'work'); // a subdirectory: the command must run where Claude Code's shell is
      mkdirSync(dir, { recursive: true });
      const env = bashEnv(p, s);
      const want = await bash(cmd, { cwd: dir, env });
      const r = await hook('pre-tool-use', preToolUseBash(s, cmd, { agentId: a }), p);
      const got = await bash(rewriteOf(r).command, { cwd: dir, env });
      expect({ cmd, status: got.status, stdout: got.stdout, stderr: got.stderr }).toEqual({
        cmd,
        status: want.status,
        stdout: want.stdout,
        stderr: want.stderr,
      });
    });
    // Non-trivial expectations really were exercised (a rewrite that ran nothing would have matched nothing above).
    const exit7 = await bash(
      rewriteOf(await hook('pre-tool-use', preToolUseBash(s, cases[7]!, { agentId: a }), p)).command,
      { cwd: p.dir, env: bashEnv(p, s) },
    );
    expect([exit7.status, exit7.stdout]).toEqual([7, 'before\nrecovered\n']);
  });

  it('psql inside pipes, heredocs, background jobs and $(…) all reach the branch', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const { rewrite } = await routeAndRun(
      p,
      s,
      a,
      `psql -X -v ON_ERROR_STOP=1 -q <<'SQL'\ncreate table t (x int, note text);\ninsert into t values (1, 'it''s'), (2, '"dq"');\nSQL`,
    );
    const cmd = [
      `psql -X -Atc 'select x from t order by x' | awk '{s+=$1} END {print "sum=" s}'`,
      `echo "db=$(psql -X -Atc 'select current_database()')"`,
      `psql -X -Atc "select note from t where x = 1" > note.txt & psql -X -Atc 'select note from t where x = 2' & wait; cat note.txt`,
      `psql -X -v ON_ERROR_STOP=1 -c 'select * from missing_table' 2>/dev/null; echo "psql=$?"; exit 3`,
    ].join('\n');
    const { run } = await routeAndRun(p, s, a, cmd);
    expect(run.status).toBe(3);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('sum=3');
    expect(lines[1]).toBe(`db=${rewrite.branch}`);
    expect(lines.slice(2, 4).sort()).toEqual(['"dq"', "it's"]);
    expect(lines[4]).toBe('psql=1');
    expect(await publicTables(rewrite.branch)).toEqual(['t']);
  });

  it('idempotent: the rewritten command fed back is left alone; a command that merely contains the marker is wrapped', async () => {
    const p = makeProject();
    const s = session(p.dir, p.dir);
    const a = newAgentId();
    const first = rewriteOf(
      await hook('pre-tool-use', preToolUseBash(s, `psql -X -qc 'create table once (x int)'`, { agentId: a }), p),
    );
    const again = await hook('pre-tool-use', preToolUseBash(s, first.command, { agentId: a }), p);
    expect(again.stdout).toBe('');
    // Running it once (as Claude Code would, unchanged) creates the table once, on the branch.
    const run = await bash(first.command, { cwd: p.dir, env: bashEnv(p, s) });
    expect(run.status, run.stderr).toBe(0);
    expect(await publicTables(first.branch)).toEqual(['once']);

    // The marker text typed by the model (even with the right branch name) does not exempt a command from routing.
    const sneaky = `psql -X -qc 'create table sneaky (x int)' # pgx-routed ${first.branch}`;
    const wrapped = rewriteOf(await hook('pre-tool-use', preToolUseBash(s, sneaky, { agentId: a }), p));
    expect(wrapped.command).not.toBe(sneaky);
    expect(wrapped.command.startsWith(`${shellQuote(launcherReal())} agent exec --agent ${a} `)).toBe(true);
    const decoyDb = `decoy_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${decoyDb}`);
    const pg = pgInfo();
    const r = await bash(wrapped.command, {
      cwd: p.dir,
      env: bashEnv(p, s, {
        PGDATABASE: decoyDb,
        PGHOST: pg.host,
        PGPORT: String(pg.port),
        PGUSER: pg.user,
        PGPASSWORD: pg.password,
      }),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(await publicTables(first.branch)).toEqual(['once', 'sneaky']);
    expect(await publicTables(decoyDb)).toEqual([]);
    // Another agent's routed command is not "already routed" for this agent: it invokes the launcher, so it is denied.
    const b = newAgentId();
    const other = await hook('pre-tool-use', preToolUseBash(s, first.command, { agentId: b }), p);
    expect(other.json.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(other.json.hookSpecificOutput).not.toHaveProperty('updatedInput');
  });

  it('a project dir and a launcher path with spaces and quotes: the rewrite runs, lands on the branch, and is recognised as routed', async () => {
    const base = makeProject();
    const dir = mkdtempSync(join(tmpdir(), `pgx proj's "q" $x `));
    writeFileSync(join(dir, '.pgx.toml'), `[project]\nname = "${base.name}"\n`);
    const launcherDir = mkdtempSync(join(tmpdir(), `pgx launcher's dir `));
    const launcher = join(launcherDir, 'pgx.js');
    symlinkSync(LAUNCHER, launcher);
    const p = { ...base, dir, cwd: dir, env: { ...base.env, PGX_LAUNCHER: launcher } };
    const s = session(dir, base.home);
    const a = newAgentId();
    const r = rewriteOf(
      await hook(
        'pre-tool-use',
        preToolUseBash(s, `psql -X -qc 'create table spaced (x int)' && pwd`, { agentId: a }),
        p,
      ),
    );
    expect(r.command.startsWith(`${shellQuote(launcher)} agent exec --agent ${a} --cwd ${shellQuote(dir)} -- `)).toBe(
      true,
    );
    const run = await bash(r.command, { cwd: dir, env: bashEnv(p, s) });
    expect([run.status, run.stdout], run.stderr).toEqual([0, `${dir}\n`]);
    expect(await publicTables(r.branch)).toEqual(['spaced']);
    expect((await hook('pre-tool-use', preToolUseBash(s, r.command, { agentId: a }), p)).stdout).toBe('');
  });
});
