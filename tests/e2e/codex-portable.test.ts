// The portable Codex project install with the real Codex CLI (scripts/install-codex.sh), offline against a scripted
// Responses API (decisions/206-codex-portable-project-install.md): `.codex/hooks.json` written in one checkout finds
// pgx on PATH, so a second checkout at another path, with its own CODEX_HOME, gets the same bytes; `pgx agent install
// codex --scope project` there records this user's trust without touching the file, Codex's own hooks/list calls all
// five trusted with the hash pgx recorded, and a subagent's command is routed to its branch. Where pgx is not on PATH
// (a teammate who hasn't installed it), the hooks' sh fallback refuses the subagent's command, lets the parent's run,
// and says why.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx, sql } from '../helpers/pgx.js';
import {
  fakeModelConfig,
  findCodexBinary,
  PINNED_CODEX,
  runCodexExec,
  startFakeResponses,
  toolOutputsOf,
  type Step,
} from './codex.js';

const codexBin = findCodexBinary();
if (!codexBin)
  console.warn(
    `e2e: the Codex CLI ${PINNED_CODEX} is not installed (run scripts/install-codex.sh): its tests are skipped`,
  );

const projects: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
const dirs: string[] = [];
const sources: string[] = [];
// Codex 0.171.0 makes these in /tmp whatever TMPDIR says (codex-isolation.test.ts): the ones this file made go with it.
const CODEX_TMP = [
  `/tmp/codex-daemon-${process.getuid?.() ?? 0}`,
  `/tmp/codex-bwrap-synthetic-mount-targets-${process.getuid?.() ?? 0}`,
];
const codexTmpBefore = new Set(CODEX_TMP.filter((d) => existsSync(d)));
afterAll(async () => {
  for (const p of projects) runPgx(['agent', 'down', '--project', '--now', '--yes'], { ...p, timeout: 120_000 });
  for (const s of sources) await sql(`DROP DATABASE IF EXISTS ${s} WITH (FORCE)`).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const d of CODEX_TMP) if (!codexTmpBefore.has(d)) rmSync(d, { recursive: true, force: true });
});

/** A PATH whose first entry holds a `pgx` (a link to this checkout's launcher), as an npm install leaves it. */
function pathWithPgx(root: string): string {
  const bin = join(root, 'bin');
  mkdirSync(bin);
  symlinkSync(LAUNCHER, join(bin, 'pgx'));
  return `${bin}:${process.env.PATH}`;
}

/** Codex runs a project's hooks only in a project the user trusts: the test is that user (pgx never grants it). */
const trustProject = (dir: string) => `\n[projects.${JSON.stringify(dir)}]\ntrust_level = "trusted"\n`;

/** `codex app-server`'s hooks/list for `cwd`: each hook's key, the hash Codex computes, and whether it is trusted. */
function codexHooksList(
  bin: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ key: string; currentHash: string; trustStatus: string }[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"id":2,'));
      if (!line) return;
      clearTimeout(timer);
      child.stdin.end();
      child.kill();
      resolve(
        (
          JSON.parse(line) as {
            result: { data: { hooks: { key: string; currentHash: string; trustStatus: string }[] }[] };
          }
        ).result.data[0]!.hooks,
      );
    });
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`app-server closed before answering hooks/list: ${out.slice(-2000)}`));
    });
    const send = (o: object) => child.stdin.write(JSON.stringify(o) + '\n');
    send({ id: 1, method: 'initialize', params: { clientInfo: { name: 'pgx-test', version: '1' } } });
    send({ method: 'initialized' });
    send({ id: 2, method: 'hooks/list', params: { cwds: [cwd] } });
  });
}

const hookLog = (home: string) =>
  existsSync(join(home, 'agent', 'hooks.log'))
    ? readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
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
            },
        )
    : [];

const stateOf = (config: string) =>
  [...config.matchAll(/^\[hooks\.state\."[^"]*:([a-z_]+):(\d+):(\d+)"\]\ntrusted_hash = "(sha256:[0-9a-f]+)"$/gm)].map(
    (m) => [`${m[1]}:${m[2]}:${m[3]}`, m[4]!],
  );

describe.skipIf(!codexBin)(`portable Codex project install with the real Codex CLI ${PINNED_CODEX}`, () => {
  it('hooks.json written in one checkout is byte-identical in another; install there records the same trusted_hash without rewriting it; Codex calls them trusted and runs them', async () => {
    const src = `src_cxp_${Math.random().toString(36).slice(2, 10)}`;
    await sql(`CREATE DATABASE ${src}`);
    sources.push(src);
    // Checkout A: the author installs and commits .pgx.toml and .codex/hooks.json.
    const a = makeProject({ source: src });
    projects.push(a);
    const aDir = realpathSync(a.dir);
    const aEnv = { ...a.env, PATH: pathWithPgx(aDir), CODEX_HOME: join(aDir, 'codex-home') };
    mkdirSync(aEnv.CODEX_HOME);
    const ia = jsonOf(runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: aDir, env: aEnv }));
    expect(ia).toMatchObject({
      hooks_launcher: 'pgx',
      pgx_on_path: realpathSync(LAUNCHER),
      added: expect.arrayContaining(['PreToolUse']),
    });
    const committed = readFileSync(join(aDir, '.codex', 'hooks.json'), 'utf8');
    expect(committed).not.toContain(aDir);
    expect(committed).not.toContain(LAUNCHER);

    // Checkout B: a teammate's clone at another path, their own HOME, CODEX_HOME and pgx home.
    const bDir = realpathSync(mkdtempSync(join(tmpdir(), 'pgx-clone-')));
    dirs.push(bDir);
    mkdirSync(join(bDir, '.codex'));
    cpSync(join(aDir, '.pgx.toml'), join(bDir, '.pgx.toml'));
    cpSync(join(aDir, '.codex', 'hooks.json'), join(bDir, '.codex', 'hooks.json'));
    mkdirSync(join(bDir, '.pgx-home'));
    const bHome = mkdtempSync(join(tmpdir(), 'pgx-clone-home-')); // a HOME that is not the project (install refuses that)
    dirs.push(bHome);
    const bEnv = {
      ...a.env,
      HOME: bHome,
      PGX_HOME: join(bDir, '.pgx-home'),
      PATH: pathWithPgx(bDir),
      CODEX_HOME: join(bDir, 'codex-home'),
    };
    mkdirSync(bEnv.CODEX_HOME);
    const b = { cwd: bDir, env: bEnv };
    projects.push(b);
    const model = await startFakeResponses((user): Step[] => {
      if (user.startsWith('SUBAGENT')) return [{ exec: `psql -X -Atc 'select current_database()'` }, { say: 'done' }];
      return [{ spawn: 'SUBAGENT 1: which database' }, { wait: 0 }, { say: 'all done' }];
    });
    try {
      writeFileSync(join(bEnv.CODEX_HOME, 'config.toml'), fakeModelConfig(model.url) + trustProject(bDir));
      // Before install, Codex knows the five hooks but trusts none: trust is each user's own.
      const untrusted = await codexHooksList(codexBin!, bDir, bEnv);
      expect(untrusted.map((h) => h.trustStatus)).toEqual(Array(5).fill('untrusted'));
      const ib = jsonOf(
        runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: bDir, env: bEnv }),
      );
      expect(ib).toMatchObject({ added: [], updated: [], trusted: expect.any(Array), hooks_launcher: 'pgx' });
      expect(ib.trusted).toHaveLength(5);
      expect(readFileSync(join(bDir, '.codex', 'hooks.json'), 'utf8')).toBe(committed); // not rewritten
      // The same hash per hook in both CODEX_HOMEs; only the key's file path differs.
      const stateA = stateOf(readFileSync(join(aEnv.CODEX_HOME, 'config.toml'), 'utf8'));
      const stateB = stateOf(readFileSync(join(bEnv.CODEX_HOME, 'config.toml'), 'utf8'));
      expect(stateA).toHaveLength(5);
      expect(stateB).toEqual(stateA);
      // What Codex itself computes and decides, in checkout B.
      const listed = await codexHooksList(codexBin!, bDir, bEnv);
      expect(listed.map((h) => h.trustStatus)).toEqual(Array(5).fill('trusted'));
      expect(
        Object.fromEntries(listed.map((h) => [h.key.slice(`${bDir}/.codex/hooks.json:`.length), h.currentHash])),
      ).toEqual(Object.fromEntries(stateA));
      // Idempotent: a second install changes nothing at all.
      const again = jsonOf(
        runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: bDir, env: bEnv }),
      );
      expect(again).toMatchObject({ changed: false, trusted: [] });
      // And they run: the subagent's psql lands on its own branch.
      const run = await runCodexExec(codexBin!, 'PARENT: one agent', {
        cwd: bDir,
        env: bEnv,
        args: ['-c', 'sandbox_workspace_write.network_access=true'],
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const log = hookLog(bEnv.PGX_HOME).filter((l) => l.runtime === 'codex');
      const start = log.find((l) => l.event === 'subagent-start');
      expect(start?.outcome, JSON.stringify(log)).toMatch(/^ok:/);
      expect(log.filter((l) => l.event === 'pre-tool-use' && l.agent_id).map((l) => l.outcome.split(':')[0])).toEqual([
        'rewritten',
      ]);
      expect(
        toolOutputsOf(model).some((o) => o.includes(start!.branch!)),
        JSON.stringify(toolOutputsOf(model)),
      ).toBe(true);
      expect(log.some((l) => l.event === 'session-start')).toBe(true);
    } finally {
      await model.close();
    }
  }, 240_000);

  it("pgx not on PATH (a teammate's clone): the subagent's command is refused and never runs, the parent's runs; both are told why", async () => {
    const p = makeProject();
    projects.push(p);
    const dir = realpathSync(p.dir);
    const codexHome = join(dir, 'codex-home');
    mkdirSync(codexHome);
    // The teammate's PATH: node, the system, no pgx. Install itself runs as `node …/bin/pgx.js` (it records the trust).
    const PATH = [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
    expect(
      spawnSync('/bin/sh', ['-c', 'command -v pgx'], { env: { PATH } }).status,
      'a pgx on the system PATH',
    ).not.toBe(0);
    const env = { ...p.env, PATH, CODEX_HOME: codexHome };
    const model = await startFakeResponses((user): Step[] => {
      if (user.startsWith('SUBAGENT')) return [{ exec: 'touch subagent-ran' }, { say: 'subagent done' }];
      return [{ spawn: 'SUBAGENT 1: touch a file' }, { wait: 0 }, { exec: 'touch parent-ran' }, { say: 'all done' }];
    });
    try {
      writeFileSync(join(codexHome, 'config.toml'), fakeModelConfig(model.url) + trustProject(dir));
      const install = jsonOf(runPgx(['agent', 'install', 'codex', '--scope', 'project', '--json'], { cwd: dir, env }));
      expect(install).toMatchObject({ pgx_on_path: null, hooks_launcher: 'pgx' });
      expect(install.trusted).toHaveLength(5);
      const run = await runCodexExec(codexBin!, 'PARENT: one agent', { cwd: dir, env });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const outs = toolOutputsOf(model).join('\n---\n');
      expect(outs).toMatch(/pgx is not on PATH on this machine: this subagent shell command is refused/);
      expect(readdirSync(dir)).not.toContain('subagent-ran');
      expect(readdirSync(dir)).toContain('parent-ran'); // the parent's work goes on
      // What the models were told: SessionStart's context (the parent) and SubagentStart's (the subagent).
      const told = JSON.stringify(model.requests);
      expect(told).toContain('subagents cannot run shell commands (refused, so that they never share one database)');
      expect(told).toContain('pgx is not on PATH on this machine: your shell commands will be refused');
      expect(hookLog(p.home)).toEqual([]); // pgx never ran under Codex
    } finally {
      await model.close();
    }
  }, 240_000);
});
