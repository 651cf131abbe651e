// Database MCP servers under the real Codex CLI and the real Copilot CLI, offline (scripted model APIs), with pgx's
// hooks installed by `pgx agent install` (decision 530): the real `@modelcontextprotocol/server-postgres` from npm on
// a throwaway "dev" database, and a tiny server that reaches none. A subagent's database MCP call (`COMMIT; CREATE
// TABLE …`, which server-postgres commits despite its read-only transaction) is refused by pgx's PreToolUse with the
// reason, and the dev database is untouched; the session's own call runs, as the user set it up; the tiny server's
// call of the same subagent runs. And a fork miss under the real Codex CLI (issue 39, decision 532). Skipped, with
// the reason, where a binary is not installed.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';
import * as codex from './codex.js';
import * as copilot from './copilot.js';
import { LOCK } from '../../src/registry/locks.js';

const codexBin = codex.findCodexBinary();
const copilotBin = copilot.findCopilotBinary();
if (!codexBin) console.warn(`e2e: the Codex CLI ${codex.PINNED_CODEX} is not installed: its MCP test is skipped`);
if (!copilotBin)
  console.warn(`e2e: the Copilot CLI ${copilot.PINNED_COPILOT} is not installed: its MCP test is skipped`);

const SERVER_POSTGRES = join(
  process.cwd(),
  'node_modules',
  '@modelcontextprotocol',
  'server-postgres',
  'dist',
  'index.js',
);
const TINY = join(process.cwd(), 'tests', 'e2e', 'mcp', 'tiny-server.mjs');

const made: { cwd: string; env: NodeJS.ProcessEnv }[] = [];
const dbs: string[] = [];
const CODEX_TMP = [
  `/tmp/codex-daemon-${process.getuid?.() ?? 0}`,
  `/tmp/codex-bwrap-synthetic-mount-targets-${process.getuid?.() ?? 0}`,
];
const codexTmpBefore = new Set(CODEX_TMP.filter((d) => existsSync(d)));
afterAll(async () => {
  for (const p of made) runPgx(['agent', 'down', '--project', '--now', '--yes'], { ...p, timeout: 120_000 });
  for (const d of dbs) await sql(`DROP DATABASE IF EXISTS ${d} WITH (FORCE)`).catch(() => undefined);
  for (const d of CODEX_TMP) if (!codexTmpBefore.has(d)) rmSync(d, { recursive: true, force: true });
});

/** A project (its source) and the user's own "dev" database the MCP server reaches, its URL without the password. */
async function project() {
  const rand = Math.random().toString(36).slice(2, 10);
  const src = `src_rmcp_${rand}`;
  const dev = `dev_rmcp_${rand}`;
  for (const d of [src, dev]) {
    await sql(`CREATE DATABASE ${d}`);
    dbs.push(d);
  }
  const p = makeProject({ source: src });
  made.push(p);
  const i = pgInfo();
  const url = `postgresql://${i.user}@${i.host}:${i.port}/${dev}`;
  return { p, dev, url, password: i.password, tinyLog: join(p.dir, 'tiny.log') };
}

const hookLog = (home: string) =>
  readFileSync(join(home, 'agent', 'hooks.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; outcome: string; agent_id: string | null });

const devTable = async (dev: string) =>
  (await sql<{ t: string | null }>(`SELECT to_regclass('public.sub_mcp')::text AS t`, [], dev))[0]!.t;

const WRITE = 'COMMIT; CREATE TABLE sub_mcp (x int)';

describe.skipIf(!codexBin)(`database MCP servers under the real Codex CLI ${codex.PINNED_CODEX}`, () => {
  it("a subagent's server-postgres call is refused by pgx's hook, the dev database untouched; the session's call and the tiny server's run", async () => {
    const { p, dev, url, password, tinyLog } = await project();
    const codexHome = join(p.dir, '.codex-home');
    mkdirSync(codexHome);
    const env = { ...p.env, CODEX_HOME: codexHome };
    const model = await codex.startFakeResponses((user): codex.Step[] =>
      /^SUBAGENT/.test(user)
        ? [
            { mcp: { server: 'pg', tool: 'query', args: { sql: WRITE } } },
            { mcp: { server: 'tiny', tool: 'echo', args: { text: 'from-sub' } } },
            { say: 'sub done' },
          ]
        : [
            { mcp: { server: 'pg', tool: 'query', args: { sql: "select 'parent_' || 'ok' as r" } } },
            { spawn: 'SUBAGENT one' },
            { wait: 0 },
            { say: 'all done' },
          ],
    );
    try {
      writeFileSync(join(codexHome, 'config.toml'), codex.fakeModelConfig(model.url));
      const install = jsonOf(runPgx(['agent', 'install', 'codex', '--json'], { cwd: p.dir, env }));
      expect(install.trusted).toHaveLength(5); // trusted as Codex records it, the new matcher included
      const servers = [
        '[mcp_servers.pg]',
        `command = "${process.execPath}"`,
        `args = ["${SERVER_POSTGRES}", "${url}"]`,
        `env = { PGPASSWORD = "${password}" }`,
        'default_tools_approval_mode = "approve"',
        '[mcp_servers.tiny]',
        `command = "${process.execPath}"`,
        `args = ["${TINY}"]`,
        `env = { TINY_MCP_LOG = "${tinyLog}" }`,
        'default_tools_approval_mode = "approve"',
        '',
      ].join('\n');
      writeFileSync(join(codexHome, 'config.toml'), readFileSync(join(codexHome, 'config.toml'), 'utf8') + servers);
      const run = await codex.runCodexExec(codexBin!, 'PARENT: one agent', { cwd: p.dir, env });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      // an MCP tool's output is a list of text parts, not a string: every output as its text
      const outputs = model.requests
        .flat()
        .filter((i) => i.type === 'function_call_output')
        .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)))
        .join('\n');
      expect(outputs).toContain('parent_ok');
      expect(outputs).toContain('Tool call blocked by PreToolUse hook: pgx: the MCP server "pg" reaches a PostgreSQL');
      expect(outputs).toContain('echo: from-sub');
      expect(await devTable(dev)).toBeNull();
      const log = hookLog(p.home).filter((l) => l.event === 'pre-tool-use');
      expect(log.map((l) => `${l.agent_id ? 'sub' : 'parent'} ${l.outcome}`)).toEqual([
        'parent skipped:mcp-parent',
        'sub denied:mcp-unrouted:pg',
        'sub skipped:mcp-not-database',
      ]);
    } finally {
      await model.close();
    }
  });
});

describe.skipIf(!copilotBin)(`database MCP servers under the real Copilot CLI ${copilot.PINNED_COPILOT}`, () => {
  it("a subagent's server-postgres call is refused by pgx's hook, the dev database untouched; the root's call and the tiny server's run", async () => {
    const { p, dev, url, password, tinyLog } = await project();
    const bin = join(p.dir, '.bin');
    mkdirSync(bin);
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    const home = join(p.dir, '.copilot-home');
    mkdirSync(join(home, '.copilot'), { recursive: true });
    writeFileSync(join(home, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [p.dir] }));
    writeFileSync(
      join(home, '.copilot', 'mcp-config.json'),
      JSON.stringify({
        mcpServers: {
          pg: {
            type: 'local',
            command: process.execPath,
            args: [SERVER_POSTGRES, url],
            env: { PGPASSWORD: password },
            tools: ['*'],
          },
          tiny: {
            type: 'local',
            command: process.execPath,
            args: [TINY],
            env: { TINY_MCP_LOG: tinyLog },
            tools: ['*'],
          },
        },
      }),
    );
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}` };
    const model = await copilot.startFakeChat((user): copilot.Step[] =>
      /SUBAGENT/.test(user)
        ? [
            { mcp: { name: 'pg-query', args: { sql: WRITE } } },
            { mcp: { name: 'tiny-echo', args: { text: 'from-sub' } } },
            { say: 'sub done' },
          ]
        : [
            { mcp: { name: 'pg-query', args: { sql: "select 'parent_' || 'ok' as r" } } },
            { task: 'SUBAGENT one' },
            { say: 'all done' },
          ],
    );
    try {
      const install = jsonOf(
        runPgx(['agent', 'install', 'copilot', '--json'], {
          cwd: p.dir,
          env: { ...env, COPILOT_HOME: join(home, '.copilot') },
        }),
      );
      expect(install).toMatchObject({ scope: 'project', project_trusted: true });
      const run = await copilot.runCopilot(copilotBin!, 'PARENT: one agent', {
        cwd: p.dir,
        env: copilot.copilotEnv(env, model.url, home),
        args: ['--allow-all'],
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const results = copilot.toolResultsOf(model).join('\n');
      expect(results).toContain('parent_ok');
      expect(results).toContain('Denied by preToolUse hook: pgx: the MCP server "pg" reaches a PostgreSQL');
      expect(results).toContain('echo: from-sub');
      expect(await devTable(dev)).toBeNull();
      const log = hookLog(p.home).filter((l) => l.event === 'pre-tool-use' && /mcp/.test(l.outcome));
      expect(log.map((l) => `${l.agent_id ? 'sub' : 'parent'} ${l.outcome}`)).toEqual([
        'parent skipped:mcp-parent',
        'sub denied:mcp-unrouted:pg',
        'sub skipped:mcp-not-database',
      ]);
    } finally {
      await model.close();
    }
  });
});

// Issue 39 with the real Codex binary: the session's branch (made by the parent's first routed psql) is held by a
// connection and its copy's lock by the test, so the subagent's fork misses; the subagent's command is refused with
// why, and the parent's next command brings the miss into the model's context (decision 532).
describe.skipIf(!codexBin)(`a fork miss under the real Codex CLI ${codex.PINNED_CODEX}`, () => {
  it("the subagent's shell command is refused with why; the parent's next command tells the model", async () => {
    const { p } = await project();
    const codexHome = join(p.dir, '.codex-home');
    mkdirSync(codexHome);
    const env = { ...p.env, CODEX_HOME: codexHome, PGX_HOOK_DEADLINE_MS: '4000' };
    const model = await codex.startFakeResponses((user): codex.Step[] =>
      /^SUBAGENT/.test(user)
        ? [{ exec: 'echo sub-ran' }, { say: 'sub done' }]
        : [
            { exec: "psql -X -v ON_ERROR_STOP=1 -qc 'create table parent_mig (x int)'" },
            { exec: 'sleep 4' }, // the test takes the locks meanwhile
            { spawn: 'SUBAGENT one' },
            { wait: 0 },
            { exec: 'echo parent-next' },
            { say: 'all done' },
          ],
    );
    const holders: { end(): Promise<void> }[] = [];
    let running: Promise<unknown> = Promise.resolve();
    try {
      writeFileSync(join(codexHome, 'config.toml'), codex.fakeModelConfig(model.url));
      expect(runPgx(['agent', 'install', 'codex'], { cwd: p.dir, env }).status).toBe(0);
      running = codex.runCodexExec(codexBin!, 'PARENT: one agent', {
        cwd: p.dir,
        env,
        args: ['-c', 'sandbox_workspace_write.network_access=true'],
      });
      // the session's branch, once the parent's psql made it: a connection on it, and its copy's lock
      let branch: string | undefined;
      for (let i = 0; i < 300 && !branch; i++) {
        const rows = await sql<{ name: string }>(
          `SELECT name FROM pgx_branch WHERE project = $1 AND kind = 'session'`,
          [p.name],
          'pgx_registry',
        ).catch(() => []);
        branch = rows[0]?.name;
        if (!branch) await new Promise((r) => setTimeout(r, 100));
      }
      expect(branch, 'the session branch was never made').toBeDefined();
      const i = pgInfo();
      // the record comes before its database: connect once the database is there
      for (const database of [branch!, 'pgx_registry']) {
        for (let k = 0; ; k++) {
          const c = new pg.Client({ host: i.host, port: i.port, user: i.user, password: i.password, database });
          c.on('error', () => {});
          try {
            await c.connect();
            holders.push(c);
            break;
          } catch (e) {
            if (k > 100) throw e;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }
      await (holders[1] as pg.Client).query('SELECT pg_advisory_lock($1::bigint)', [LOCK.freeze(branch!)]);
      const run = (await running) as codex.CodexRun;
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      const outputs = codex.toolOutputsOf(model);
      // the command never ran: its only trace is the refusal, where Codex appends ". Command: <the command>"
      expect(outputs.filter((o) => o.includes('sub-ran') && !o.includes('blocked by PreToolUse hook'))).toEqual([]);
      const log = hookLog(p.home).map((l) => `${l.event} ${l.agent_id ? 'sub' : 'parent'} ${l.outcome}`);
      expect(log).toContain('subagent-start sub error:fork-unavailable:timeout');
      expect(log).toContain('pre-tool-use sub denied:fork-unavailable:timeout');
      expect(log.at(-1)).toMatch(/^pre-tool-use parent rewritten:attach:handoffs=1$/);
      expect(outputs.join('\n')).toContain('you have no database branch yet');
      // the parent's next command's answer carried the miss into the model's context
      const context = JSON.stringify(model.requests.at(-1));
      expect(context).toContain(`did NOT get a copy of your session's branch`);
    } finally {
      for (const h of holders) await h.end();
      await running.catch(() => undefined);
      await model.close();
    }
  });
});
