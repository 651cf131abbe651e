// pgx with the real Codex CLI (scripts/install-codex.sh), offline against a scripted Responses API: `pgx agent install
// codex` makes its hooks trusted the way Codex records trust (no --dangerously-bypass-hook-trust), and a `codex exec`
// parent that spawns three subagents gets each one's psql on its own branch, retired at SubagentStop, the source
// untouched; and the parent's own command lands on the session branch (decision 205). And the sandbox fact decision
// 203 rests on: under the default workspace-write sandbox no socket opens (so the parent's routed commands run
// unrouted there, with pgx's warning).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, makeProject, runPgx, schemaMd5, sql } from '../helpers/pgx.js';
import { lsBranches, publicTables } from '../helpers/hooks.js';
import { routedCommandIn } from '../../src/hooks/codex/handlers.js';
import {
  commandsOf,
  fakeModelConfig,
  toolOutputsOf,
  findCodexBinary,
  PINNED_CODEX,
  runCodexExec,
  startFakeResponses,
  type Step,
} from './codex.js';

const codexBin = findCodexBinary();
if (!codexBin)
  console.warn(
    `e2e: the Codex CLI ${PINNED_CODEX} is not installed (run scripts/install-codex.sh): its tests are skipped`,
  );

const made: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
const sources: string[] = [];
// Codex 0.171.0 makes these in /tmp whatever TMPDIR says (measured: /tmp/codex-daemon-0 after a `codex exec`; the
// sandbox's mount targets directory under -s workspace-write). The ones this file made go with it.
const CODEX_TMP = [
  `/tmp/codex-daemon-${process.getuid?.() ?? 0}`,
  `/tmp/codex-bwrap-synthetic-mount-targets-${process.getuid?.() ?? 0}`,
];
const codexTmpBefore = new Set(CODEX_TMP.filter((d) => existsSync(d)));
afterAll(async () => {
  for (const p of made) runPgx(['agent', 'down', '--project', '--now', '--yes'], { ...p, timeout: 120_000 });
  for (const s of sources) await sql(`DROP DATABASE IF EXISTS ${s} WITH (FORCE)`).catch(() => undefined);
  for (const d of CODEX_TMP) if (!codexTmpBefore.has(d)) rmSync(d, { recursive: true, force: true });
});

const hookLog = (home: string) =>
  readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          event: string;
          outcome: string;
          branch: string | null;
          agent_id: string | null;
          runtime?: string;
          permission_mode?: string | null;
        },
    );

async function codexProject() {
  const src = `src_cx_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${src}`);
  sources.push(src);
  await sql('CREATE TABLE items (id int PRIMARY KEY); INSERT INTO items VALUES (1), (2)', [], src);
  // session_branch on (the default, said here because the parent's routing depends on it: decision 205)
  const p = makeProject({ source: src, toml: '[agent]\nsession_branch = true\n' });
  made.push(p);
  const codexHome = join(p.dir, '.codex-home');
  mkdirSync(codexHome);
  return { p, src, codexHome, env: { ...p.env, CODEX_HOME: codexHome } };
}

describe.skipIf(!codexBin)(`pgx with the real Codex CLI ${PINNED_CODEX}`, () => {
  it('install codex: hooks trusted as Codex records it; three subagents each on their own branch, retired at stop; the source untouched', async () => {
    const { p, src, codexHome, env } = await codexProject();
    const baseline = schemaMd5(src);
    // what each shell saw of Codex's environment: the thread id (exec's ticket check keys on it) and the sandbox flag
    const seen = `echo "thread=\${CODEX_THREAD_ID:-none} sandbox=\${CODEX_SANDBOX_NETWORK_DISABLED:-none}"`;
    const marker = (k: number) =>
      `psql -X -v ON_ERROR_STOP=1 -qc 'create table marker_${k} (x int)' && psql -X -Atc 'select current_database()' && ${seen}`;
    const parentMark = `psql -X -v ON_ERROR_STOP=1 -qc 'create table parentmark (x int)' && psql -X -Atc 'select current_database()' && ${seen}`;
    const model = await startFakeResponses((user): Step[] => {
      const k = /^SUBAGENT (\d)/.exec(user)?.[1];
      if (k) return [{ exec: marker(Number(k)) }, { say: `subagent ${k} done` }];
      return [1, 2, 3]
        .map((k): Step => ({ spawn: `SUBAGENT ${k}: make your marker table` }))
        .concat([{ wait: 0 }, { wait: 1 }, { wait: 2 }, { exec: parentMark }, { say: 'all done' }]);
    });
    try {
      writeFileSync(join(codexHome, 'config.toml'), fakeModelConfig(model.url));
      const install = jsonOf(runPgx(['agent', 'install', 'codex', '--json'], { cwd: p.dir, env }));
      expect(install.scope).toBe('user');
      expect(install.trusted).toHaveLength(5);
      // network for the agents' commands: the sandbox decision (203) leaves this to the user; the test is that user
      const run = await runCodexExec(codexBin!, 'PARENT: run three agents', {
        cwd: p.dir,
        env,
        args: ['-c', 'sandbox_workspace_write.network_access=true'],
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const cmds = commandsOf(run);
      const log = hookLog(p.home).filter((l) => l.runtime === 'codex');
      const starts = log.filter((l) => l.event === 'subagent-start');
      expect(
        starts.map((l) => l.outcome),
        JSON.stringify(log),
      ).toEqual([1, 2, 3].map(() => expect.stringMatching(/^ok:/)));
      const branches = starts.map((l) => l.branch!);
      expect(new Set(branches).size).toBe(3);
      // codex exec sends bypassPermissions: pgx allows the rewrite there (and only there)
      const pre = log.filter((l) => l.event === 'pre-tool-use' && l.agent_id);
      expect(pre.map((l) => [l.outcome.split(':')[0], l.permission_mode])).toEqual(
        [1, 2, 3].map(() => ['rewritten', 'bypassPermissions']),
      );
      // what each subagent's psql printed (current_database()), as the model got it back
      const outputs = toolOutputsOf(model);
      for (const b of branches)
        expect(
          outputs.some((o) => o.includes(b)),
          `${b} in ${JSON.stringify(outputs)}`,
        ).toBe(true);
      expect(cmds.filter((c) => c.command?.includes('marker_'))).toEqual([]); // the parent ran none itself
      // subagents' commands ran with their own thread id (so exec's ticket check applied to them, and passed)
      expect(
        outputs.filter((o) => /thread=(?!none)\S+ sandbox=none/.test(o) && !o.includes('parentmark')).length,
        JSON.stringify(outputs),
      ).toBeGreaterThanOrEqual(3);
      // the parent's own command lands on the session branch, not the source (decision 205): rewritten (bypassPermissions)
      const parentPre = log.filter((l) => l.event === 'pre-tool-use' && !l.agent_id);
      expect(parentPre.map((l) => [l.outcome.split(':')[0], l.permission_mode])).toEqual([
        ['rewritten', 'bypassPermissions'],
      ]);
      const sessionBranch = parentPre[0]!.branch!;
      const own = (await lsBranches(p)).filter((b) => b.kind === 'session');
      expect(own.map((b) => b.name)).toEqual([sessionBranch]);
      const parentRun = cmds.find((c) => c.command?.includes('parentmark'));
      expect(parentRun?.command, JSON.stringify(cmds)).toMatch(/ agent exec --session \S+ --fail-open --cwd /);
      expect(parentRun?.aggregated_output?.trim().split('\n')[0]).toBe(sessionBranch);
      expect(parentRun?.aggregated_output).not.toMatch(/WARNING/);
      expect(await publicTables(sessionBranch)).toEqual(['items', 'parentmark']);
      expect(branches).not.toContain(sessionBranch);
      // SubagentStop retired both (no connections any more); what each branch changed is its own marker table only
      expect(log.filter((l) => l.event === 'subagent-stop').map((l) => l.outcome)).toEqual(
        [1, 2, 3].map(() => expect.stringMatching(/^retire/)),
      );
      const ls = await lsBranches(p);
      const markers = branches.map((b) => {
        const row = ls.find((r) => r.name === b);
        expect(row?.state, b).not.toBe('active');
        return (row?.changes?.lines ?? []).join('\n').match(/marker_\d/g) ?? [];
      });
      expect(markers.map((m) => [...new Set(m)].length)).toEqual([1, 1, 1]);
      expect(new Set(markers.flat()).size).toBe(3);
      for (const b of branches)
        expect((await sql('SELECT datallowconn FROM pg_database WHERE datname = $1', [b]))[0]).toEqual({
          datallowconn: false,
        });
      expect(schemaMd5(src)).toBe(baseline);
      expect(await publicTables(src)).toEqual(['items']);
    } finally {
      await model.close();
    }
  }, 240_000);

  it("Codex's default sandbox (workspace-write) lets no socket open, TCP or Unix: a routed psql fails there (decision 203)", async () => {
    const { p, codexHome, env } = await codexProject();
    const tcp = `python3 -c "import socket; socket.socket()" 2>&1 | tail -1`;
    const unix = `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('/nonexistent-but-allowed.sock')" 2>&1 | tail -1`;
    const model = await startFakeResponses((user): Step[] => {
      if (user.startsWith('SUBAGENT')) return [{ exec: `psql -X -Atc 'select 1' 2>&1` }, { say: 'done' }];
      // the parent's commands, routed (decision 205) but run unrouted in the sandbox: a bare Unix-socket connect, and a TCP one
      return [{ spawn: 'SUBAGENT 1: try the database' }, { wait: 0 }, { exec: unix }, { exec: tcp }, { say: 'done' }];
    });
    try {
      writeFileSync(join(codexHome, 'config.toml'), fakeModelConfig(model.url));
      expect(runPgx(['agent', 'install', 'codex', '--json'], { cwd: p.dir, env }).status).toBe(0);
      const run = await runCodexExec(codexBin!, 'PARENT: one agent', { cwd: p.dir, env });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const outs = toolOutputsOf(model).join('\n---\n');
      // the routed command: pgx's own exec cannot reach the server either (it connects before psql runs)
      expect(outs).toMatch(/Cannot reach PostgreSQL at [^\n]*connect EPERM/);
      const parent = commandsOf(run).map((c) => c.aggregated_output ?? '');
      expect(parent[0]).toMatch(/PermissionError: \[Errno 1\] Operation not permitted/); // a Unix socket: not ENOENT, the connect itself is refused
      expect(parent[1]).toMatch(/PermissionError: \[Errno 1\] Operation not permitted/); // a TCP socket: not even created
      // the parent's commands were routed, and in the sandbox ran unrouted at once, with pgx's warning (decision 205)
      const parentPre = hookLog(p.home).filter(
        (l) => l.runtime === 'codex' && l.event === 'pre-tool-use' && !l.agent_id,
      );
      expect(parentPre.map((l) => l.outcome.split(':')[0])).toEqual(['rewritten', 'rewritten']);
      for (const out of parent.slice(0, 2))
        expect(out).toMatch(
          /pgx: WARNING: this command runs unrouted, NOT on this session's database branch: Codex's sandbox blocks the network here/,
        );
    } finally {
      await model.close();
    }
  }, 240_000);

  it('the deny shape with the real binary: the reason hands the model its routed command, which passes the hook and runs on the branch', async () => {
    // codex exec always sends bypassPermissions (also with -c approval_policy="on-request" or "never", measured), so
    // PGX_CODEX_ALLOW=never (stricter only) makes pgx answer there as it does in every approval mode.
    const { p, src, codexHome, env } = await codexProject();
    const marker = `psql -X -v ON_ERROR_STOP=1 -qc 'create table marker_9 (x int)' && psql -X -Atc 'select current_database()'`;
    const seen: string[] = [];
    const model = await startFakeResponses((user): Step[] => {
      if (!user.startsWith('SUBAGENT'))
        return [{ spawn: 'SUBAGENT 9: make your marker table' }, { wait: 0 }, { say: 'done' }];
      return [
        { exec: marker },
        {
          execFrom: (denied) => {
            seen.push(denied);
            return routedCommandIn(denied) ?? 'echo no routed command in the deny';
          },
        },
        { say: 'done' },
      ];
    });
    try {
      writeFileSync(join(codexHome, 'config.toml'), fakeModelConfig(model.url));
      expect(runPgx(['agent', 'install', 'codex', '--json'], { cwd: p.dir, env }).status).toBe(0);
      const run = await runCodexExec(codexBin!, 'PARENT: one agent', {
        cwd: p.dir,
        env: { ...env, PGX_CODEX_ALLOW: 'never' },
        args: ['-c', 'sandbox_workspace_write.network_access=true'],
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const log = hookLog(p.home).filter((l) => l.runtime === 'codex' && l.event === 'pre-tool-use' && l.agent_id);
      expect(
        log.map((l) => l.outcome),
        JSON.stringify(seen),
      ).toEqual([expect.stringMatching(/^denied:run-routed:/), 'already-routed']);
      const branch = log[0]!.branch!;
      expect(
        toolOutputsOf(model).some((o) => o.includes(`Output:\n${branch}`)),
        JSON.stringify(toolOutputsOf(model)),
      ).toBe(true);
      expect(await publicTables(src)).toEqual(['items']);
    } finally {
      await model.close();
    }
  }, 240_000);

  it("a subagent whose branch can't be made is denied, with the reason, and its command never runs", async () => {
    const { p, codexHome, env } = await codexProject();
    const model = await startFakeResponses((user): Step[] => {
      if (user.startsWith('SUBAGENT')) return [{ exec: `psql -X -Atc 'select 1'` }, { say: 'done' }];
      return [{ spawn: 'SUBAGENT 1: try the database' }, { wait: 0 }, { say: 'done' }];
    });
    try {
      writeFileSync(join(codexHome, 'config.toml'), fakeModelConfig(model.url));
      expect(runPgx(['agent', 'install', 'codex', '--json'], { cwd: p.dir, env }).status).toBe(0);
      // nobody listens on port 1: pgx cannot ensure any branch
      const run = await runCodexExec(codexBin!, 'PARENT: one agent', {
        cwd: p.dir,
        env: { ...env, PGX_DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/postgres' },
        args: ['-c', 'sandbox_workspace_write.network_access=true'],
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const pre = hookLog(p.home).filter((l) => l.runtime === 'codex' && l.event === 'pre-tool-use' && l.agent_id);
      expect(pre.map((l) => l.outcome)).toEqual(['denied:error']);
      const outs = toolOutputsOf(model).join('\n');
      expect(outs).toMatch(
        /Command blocked by PreToolUse hook: pgx could not ensure this subagent's own database branch/,
      );
      expect(outs).not.toMatch(/Process exited with code/); // the command itself never ran
    } finally {
      await model.close();
    }
  }, 240_000);
});
