// pgx with the real GitHub Copilot CLI (scripts/install-copilot.sh), offline against a scripted chat-completions
// endpoint on 127.0.0.1: `pgx agent install copilot` writes .github/hooks/pgx.json (pgx found on PATH), and a `copilot
// -p` root that runs one psql and then three `task` subagents gets its own psql on the session branch and each
// subagent's on a branch of its own, retired at subagentStop, the source untouched. pgx never answers "allow": the
// user's --deny-tool still stops a routed command, and without --allow-all Copilot refuses the routed command as it
// refuses the original (decisions 471, 472). A subagent whose branch can't be made is refused.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx, schemaMd5, sql } from '../helpers/pgx.js';
import { lsBranches, publicTables } from '../helpers/hooks.js';
import {
  copilotEnv,
  findCopilotBinary,
  PINNED_COPILOT,
  runCopilot,
  startFakeChat,
  toolResultsOf,
  type Step,
} from './copilot.js';

const copilotBin = findCopilotBinary();
if (!copilotBin)
  console.warn(
    `e2e: the GitHub Copilot CLI ${PINNED_COPILOT} is not installed (run scripts/install-copilot.sh): its tests are skipped`,
  );

const made: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
const sources: string[] = [];
afterAll(async () => {
  for (const p of made) runPgx(['agent', 'down', '--project', '--now', '--yes'], { ...p, timeout: 120_000 });
  for (const s of sources) await sql(`DROP DATABASE IF EXISTS ${s} WITH (FORCE)`).catch(() => undefined);
});

type LogLine = {
  event: string;
  outcome: string;
  branch: string | null;
  agent_id: string | null;
  session_id?: string;
  runtime?: string;
  elapsed_ms?: number;
};
const hookLog = (home: string): LogLine[] =>
  existsSync(join(home, 'agent', 'hooks.log'))
    ? readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LogLine)
        .filter((l) => l.runtime === 'copilot')
    : [];

/** A project with a source database, pgx on PATH (a link to this checkout), Copilot's home trusting the project. */
async function copilotProject(o: { trust?: boolean } = {}) {
  const src = `src_cp_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${src}`);
  sources.push(src);
  await sql('CREATE TABLE items (id int PRIMARY KEY); INSERT INTO items VALUES (1), (2)', [], src);
  const p = makeProject({ source: src, toml: '[agent]\nsession_branch = true\n' });
  made.push(p);
  const bin = join(p.dir, '.bin');
  mkdirSync(bin);
  symlinkSync(LAUNCHER, join(bin, 'pgx'));
  const copilotHome = join(p.dir, '.copilot-home');
  mkdirSync(join(copilotHome, '.copilot'), { recursive: true });
  // Prompt mode runs a project's hooks only in a trusted folder: the test is the user who trusted it (pgx never does).
  if (o.trust !== false)
    writeFileSync(join(copilotHome, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [p.dir] }));
  const env = { ...p.env, PATH: `${bin}:${process.env.PATH}` };
  return { p, src, copilotHome, env };
}

const psqlMark = (table: string) =>
  `psql -X -v ON_ERROR_STOP=1 -qc 'create table ${table} (x int)' && psql -X -Atc 'select current_database()'`;

describe.skipIf(!copilotBin)(`pgx with the real GitHub Copilot CLI ${PINNED_COPILOT}`, () => {
  it('install copilot; the root psql on the session branch, three task subagents each on their own branch, retired at stop; the source untouched', async () => {
    const { p, src, copilotHome, env } = await copilotProject();
    const baseline = schemaMd5(src);
    const model = await startFakeChat((user): Step[] => {
      const k = /^SUBAGENT (\d)/.exec(user)?.[1];
      if (k) return [{ bash: psqlMark(`marker_${k}`) }, { say: `subagent ${k} done` }];
      // after its subagents, the root lists its own branch's tables
      const listing = `psql -X -Atc "select 'tables=' || string_agg(tablename, ',' order by tablename) from pg_tables where schemaname = 'public'"`;
      return [
        { bash: psqlMark('rootmark') },
        ...[1, 2, 3].map((k): Step => ({ task: `SUBAGENT ${k}: make your marker table` })),
        { bash: listing },
        { say: 'all done' },
      ];
    });
    try {
      const install = jsonOf(
        runPgx(['agent', 'install', 'copilot', '--json'], {
          cwd: p.dir,
          env: { ...env, COPILOT_HOME: join(copilotHome, '.copilot') },
        }),
      );
      expect(install).toMatchObject({ scope: 'project', changed: true, project_trusted: true, hooks_launcher: 'pgx' });
      expect(install.added).toHaveLength(6);
      const file = readFileSync(join(p.dir, '.github', 'hooks', 'pgx.json'), 'utf8');
      expect(file).not.toContain(p.dir); // no machine path in the committed file
      expect(file).not.toContain(LAUNCHER);
      const t0 = performance.now();
      const run = await runCopilot(copilotBin!, 'PARENT: a table, then three agents', {
        cwd: p.dir,
        env: copilotEnv(env, model.url, copilotHome),
        args: ['--allow-all'],
      });
      const ms = Math.round(performance.now() - t0);
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const log = hookLog(p.home);
      // figures only (never asserted): the run, and what pgx's hooks took inside it, by event
      const byEvent = [...new Set(log.map((l) => l.event))].map(
        (e) =>
          `${e} ${log
            .filter((l) => l.event === e)
            .map((l) => l.elapsed_ms)
            .join('/')}`,
      );
      console.log(`e2e copilot: one root psql + 3 task subagents: ${ms} ms; hooks (elapsed_ms): ${byEvent.join(', ')}`);
      const starts = log.filter((l) => l.event === 'subagent-start');
      expect(
        starts.map((l) => l.outcome),
        JSON.stringify(log),
      ).toEqual([1, 2, 3].map(() => expect.stringMatching(/^ok:/)));
      const branches = starts.map((l) => l.branch!);
      expect(new Set(branches).size).toBe(3);
      // subagentStart's additionalContext reaches each subagent's model (measured: Copilot takes it from a native answer)
      for (const b of branches)
        expect(
          model.requests.some((m) =>
            JSON.stringify(m).includes(`you have your own PostgreSQL database branch \\"${b}\\"`),
          ),
          b,
        ).toBe(true);
      // the subagents' bash, rewritten with no decision of pgx's (Copilot's --allow-all judged it)
      const subPre = log.filter((l) => l.event === 'pre-tool-use' && l.agent_id);
      expect(subPre.map((l) => [l.outcome.split(':')[0], l.branch])).toEqual(branches.map((b) => ['rewritten', b]));
      // the root's own psql: rewritten to the session branch (session_branch = true), its `task` calls left alone
      const rootPre = log.filter((l) => l.event === 'pre-tool-use' && !l.agent_id);
      expect(rootPre.map((l) => l.outcome.split(':')[0])).toEqual([
        'rewritten',
        'skipped',
        'skipped',
        'skipped',
        'rewritten',
      ]);
      const sessionBranch = rootPre[0]!.branch!;
      expect(branches).not.toContain(sessionBranch);
      // every psql printed its own branch (current_database()), as the model got it back
      const results = toolResultsOf(model).join('\n');
      for (const b of [sessionBranch, ...branches]) expect(results, results).toContain(b);
      expect(results).not.toMatch(/WARNING|denied|Denied/);
      // the session's branch, after the three subagents: the root's table, none of theirs
      expect(results).toMatch(/^tables=items,rootmark$/m);
      // subagentStop retired each branch; each changed its own marker only
      expect(log.filter((l) => l.event === 'subagent-stop').map((l) => l.outcome)).toEqual(
        [1, 2, 3].map(() => expect.stringMatching(/^retire/)),
      );
      const ls = await lsBranches(p);
      const markers = branches.map((b) => {
        const row = ls.find((r) => r.name === b);
        expect(row?.state, b).not.toBe('active');
        return [...new Set((row?.changes?.lines ?? []).join('\n').match(/marker_\d|rootmark/g) ?? [])];
      });
      expect(markers).toEqual([['marker_1'], ['marker_2'], ['marker_3']]);
      // each forked from the session's branch as it was (with the root's table), as under Claude Code
      for (const b of branches) expect(ls.find((r) => r.name === b)?.parent, b).toBe(sessionBranch);
      for (const b of branches)
        expect((await sql('SELECT datallowconn FROM pg_database WHERE datname = $1', [b]))[0]).toEqual({
          datallowconn: false,
        });
      // the session's branch holds the root's table and no subagent's; sessionEnd retired it
      expect(log.filter((l) => l.event === 'session-end').map((l) => l.outcome)).toEqual([
        expect.stringMatching(/^retired:/),
      ]);
      const session = ls.find((r) => r.name === sessionBranch);
      expect(session?.kind).toBe('session');
      expect(await sql('SELECT count(*)::int AS n FROM pg_database WHERE datname = $1', [sessionBranch])).toEqual([
        { n: 1 },
      ]);
      // the source: untouched
      expect(schemaMd5(src)).toBe(baseline);
      expect(await publicTables(src)).toEqual(['items']);
    } finally {
      await model.close();
    }
  }, 240_000);

  it("the user's --deny-tool still stops a routed command; without --allow-all Copilot refuses the routed command as it refuses the original", async () => {
    const { p, src, copilotHome, env } = await copilotProject();
    const model = await startFakeChat((user): Step[] =>
      user.startsWith('SUBAGENT')
        ? [{ bash: psqlMark('denied_sub') }, { say: 'done' }]
        : [{ bash: psqlMark('denied_root') }, { task: 'SUBAGENT 1: try' }, { say: 'done' }],
    );
    try {
      expect(runPgx(['agent', 'install', 'copilot', '--json'], { cwd: p.dir, env }).status).toBe(0);
      const cenv = copilotEnv(env, model.url, copilotHome);
      // --allow-all, but psql denied by the user's rule: pgx routes (rewrites) both, Copilot still refuses both
      const denied = await runCopilot(copilotBin!, 'PARENT: deny', {
        cwd: p.dir,
        env: cenv,
        args: ['--allow-all', '--deny-tool=shell(psql)'],
      });
      expect(denied.status, denied.stderr.slice(-2000)).toBe(0);
      const pre = hookLog(p.home).filter((l) => l.event === 'pre-tool-use' && l.outcome !== 'skipped:not-bash');
      expect(pre.map((l) => [!!l.agent_id, l.outcome.split(':')[0]])).toEqual([
        [false, 'rewritten'],
        [true, 'rewritten'],
      ]);
      const deniedResults = toolResultsOf(model).filter((r) => /shell\(psql\)/.test(r));
      expect(deniedResults, JSON.stringify(toolResultsOf(model))).toHaveLength(2);
      for (const r of deniedResults)
        expect(r).toMatch(/^Permission to run this tool was denied due to the following rules: `shell\(psql\)`/);
      // no allow flag at all (-p can't ask): Copilot refuses the routed command, as it refuses the original without pgx
      const before = model.requests.length;
      const strict = await runCopilot(copilotBin!, 'PARENT: no flags', { cwd: p.dir, env: cenv });
      expect(strict.status, strict.stderr.slice(-2000)).toBe(0);
      const strictResults = toolResultsOf(model, before);
      expect(
        strictResults.filter((r) =>
          r.startsWith('Permission denied because no interactive user response was available'),
        ).length,
        JSON.stringify(strictResults),
      ).toBe(2);
      // nothing ran anywhere: no table on any branch, none in the source
      expect(await publicTables(src)).toEqual(['items']);
      for (const b of (await lsBranches(p)).filter((r) => r.state === 'active'))
        expect(await publicTables(b.name)).toEqual(['items']);
    } finally {
      await model.close();
    }
  }, 240_000);

  it("a subagent whose branch can't be made is refused, with the reason, and its command never runs", async () => {
    const { p, copilotHome, env } = await copilotProject();
    const model = await startFakeChat((user): Step[] =>
      user.startsWith('SUBAGENT')
        ? [{ bash: `psql -X -Atc 'select 1' && echo RAN` }, { say: 'done' }]
        : [{ task: 'SUBAGENT 1: try the database' }, { say: 'done' }],
    );
    try {
      expect(runPgx(['agent', 'install', 'copilot', '--json'], { cwd: p.dir, env }).status).toBe(0);
      // nobody listens on port 1: pgx cannot ensure any branch
      const run = await runCopilot(copilotBin!, 'PARENT: one agent', {
        cwd: p.dir,
        env: copilotEnv(
          { ...env, PGX_DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/postgres' },
          model.url,
          copilotHome,
        ),
        args: ['--allow-all'],
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const pre = hookLog(p.home).filter((l) => l.event === 'pre-tool-use' && l.agent_id);
      expect(pre.map((l) => l.outcome)).toEqual(['denied:error']);
      const results = toolResultsOf(model).join('\n');
      expect(results).toMatch(/Denied by preToolUse hook: pgx could not ensure this subagent's own database branch/);
      expect(results).not.toMatch(/RAN/);
    } finally {
      await model.close();
    }
  }, 240_000);

  it('an untrusted folder: install says so, and `copilot -p` runs no project hook there (Copilot loads none), which the doctor reports', async () => {
    const { p, copilotHome, env } = await copilotProject({ trust: false });
    const cenv = { ...env, COPILOT_HOME: join(copilotHome, '.copilot') };
    const install = jsonOf(runPgx(['agent', 'install', 'copilot', '--json'], { cwd: p.dir, env: cenv }));
    expect(install.project_trusted).toBe(false);
    const doctor = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: cenv }));
    const check = doctor.checks.find((c: { name: string }) => c.name === 'copilot');
    expect(check, JSON.stringify(doctor.checks)).toMatchObject({ status: 'warn' });
    expect(check.detail).toMatch(/not a trusted folder/);
    // the opt-in variable makes the doctor content
    const optIn = jsonOf(
      runPgx(['agent', 'doctor', '--json'], {
        cwd: p.dir,
        env: { ...cenv, GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS: 'true' },
      }),
    );
    expect(optIn.checks.find((c: { name: string }) => c.name === 'copilot')).toMatchObject({ status: 'ok' });
    const model = await startFakeChat((): Step[] => [{ bash: 'echo untrusted' }, { say: 'done' }]);
    try {
      const run = await runCopilot(copilotBin!, 'PARENT: untrusted', {
        cwd: p.dir,
        env: copilotEnv(env, model.url, copilotHome),
        args: ['--allow-all'],
      });
      expect(run.status).toBe(0);
      expect(hookLog(p.home)).toEqual([]);
    } finally {
      await model.close();
    }
    // uninstall: pgx's own file goes, and the doctor has no Copilot install to check
    const un = jsonOf(runPgx(['agent', 'uninstall', 'copilot', '--json'], { cwd: p.dir, env: cenv }));
    expect(un).toMatchObject({ changed: true, file_removed: true });
    expect(existsSync(join(p.dir, '.github'))).toBe(false);
    const after = jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env: cenv }));
    expect(after.checks.some((c: { name: string }) => c.name === 'copilot')).toBe(false);
  }, 240_000);
});

// Copilot's permission modes and flags (docs/pgx/local-dev/permissions-copilot.md), each run twice on the same root
// psql: without pgx's hooks, and with them (routed to the session branch). pgx never makes a command run that
// Copilot would have refused: ran with pgx ⇒ ran without. Where it differs, pgx is the stricter.
const MATRIX: { flags: string[]; env?: NodeJS.ProcessEnv; without: boolean; withPgx: boolean }[] = [
  { flags: ['--allow-all'], without: true, withPgx: true },
  { flags: [], env: { COPILOT_ALLOW_ALL: 'true' }, without: true, withPgx: true },
  { flags: ['--allow-all-tools'], without: true, withPgx: true },
  { flags: ['--allow-tool=shell'], without: true, withPgx: true },
  { flags: ['--allow-all', '--deny-tool=shell(psql)'], without: false, withPgx: false },
  { flags: ['--allow-tool=shell', '--deny-tool=shell(psql)'], without: false, withPgx: false },
  { flags: [], without: false, withPgx: false },
  // the user allowed psql only: the routed command also runs pgx, which they did not allow, so -p refuses it (stricter)
  { flags: ['--allow-tool=shell(psql)'], without: true, withPgx: false },
];

describe.skipIf(!copilotBin)(`Copilot ${PINNED_COPILOT}'s permission matrix, with and without pgx`, () => {
  it('ran with pgx ⇒ ran without, for every mode and flag', async () => {
    // two projects: one without pgx's hooks, one with them; every row runs once in each (each run's prompt carries
    // its tag, which its command echoes)
    const plain = await copilotProject();
    const routed = await copilotProject();
    expect(runPgx(['agent', 'install', 'copilot', '--json'], { cwd: routed.p.dir, env: routed.env }).status).toBe(0);
    const model = await startFakeChat((user): Step[] => {
      const tag = /^PARENT: (\S+)/.exec(user)?.[1] ?? 'none';
      return [{ bash: `psql -X -Atc 'select current_database()'; echo RAN-${tag}` }, { say: 'done' }];
    });
    try {
      const run = async (tag: string, row: (typeof MATRIX)[number], where: typeof plain) => {
        const r = await runCopilot(copilotBin!, `PARENT: ${tag}`, {
          cwd: where.p.dir,
          env: { ...copilotEnv(where.env, model.url, where.copilotHome), ...row.env },
          args: row.flags,
        });
        expect(r.status, r.stderr.slice(-1000)).toBe(0);
        return toolResultsOf(model).find((o) => o.includes(`RAN-${tag}`));
      };
      const outs: { without?: string; withPgx?: string }[] = MATRIX.map(() => ({}));
      // a row's two runs at once: one per project, so no two runs share a COPILOT_HOME (its session store)
      for (const [i, row] of MATRIX.entries()) {
        [outs[i]!.without, outs[i]!.withPgx] = await Promise.all([run(`w${i}`, row, plain), run(`p${i}`, row, routed)]);
      }
      const sessionBranches = new Set(
        hookLog(routed.p.home)
          .filter((l) => l.event === 'pre-tool-use' && l.branch)
          .map((l) => l.branch!),
      );
      const seen = MATRIX.map((row, i) => ({
        flags: [...row.flags, ...Object.entries(row.env ?? {}).map(([k, v]) => `${k}=${v}`)].join(' ') || '(none)',
        without: outs[i]!.without !== undefined,
        withPgx: outs[i]!.withPgx !== undefined,
        // what the routed psql printed: its session's branch
        branch: sessionBranches.has(outs[i]!.withPgx?.split('\n')[0] ?? ''),
      }));
      console.log(
        `copilot permission matrix:\n${seen.map((s) => `  ${s.flags.padEnd(48)} without pgx: ${s.without ? 'runs' : 'refused'}  with pgx: ${s.withPgx ? 'runs' : 'refused'}`).join('\n')}`,
      );
      expect(seen.map((s) => [s.flags, s.without, s.withPgx])).toEqual(
        MATRIX.map((m, i) => [seen[i]!.flags, m.without, m.withPgx]),
      );
      for (const s of seen) if (s.withPgx) expect([s.flags, s.without, s.branch]).toEqual([s.flags, true, true]); // and on the session branch
      // every run with pgx was routed by the hook (rewritten), whatever Copilot then decided
      const pre = hookLog(routed.p.home).filter((l) => l.event === 'pre-tool-use');
      expect(pre.map((l) => l.outcome.split(':')[0])).toEqual(MATRIX.map(() => 'rewritten'));
      expect(hookLog(plain.p.home)).toEqual([]);
    } finally {
      await model.close();
    }
  }, 300_000);
});
