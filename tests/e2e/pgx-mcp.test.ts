/**
 * Database MCP servers with the real Claude Code (the pinned release and the newest) and real servers from npm
 * (@modelcontextprotocol/server-postgres and @bytebase/dbhub, configured in the project's .mcp.json with the database
 * URL and its password in their args, as their READMEs say), offline (issue 40):
 *  1. routed (what `pgx agent install claude` does by default): three subagents each create tables through both
 *     servers' tools and through Monitor running psql; each table lands on that subagent's own branch, none on the
 *     session's branch or the source (here the dev database itself, on pgx's server); the parent's MCP call reaches
 *     the session's branch, where its Bash goes too; a subagent's resource read of a database server is refused; a
 *     tiny server that reaches no database works as before; no password in any process's argv while it runs; every
 *     copy and front gone at the end.
 *  2. not routed (`--no-mcp`): every subagent's database MCP call is refused with the reason, and the dev database
 *     is untouched.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pgInfo } from '../helpers/pgx.js';
import { passwordsInArgv } from '../helpers/argv-scan.js';
import {
  branches,
  cleanupRoots,
  describeRun,
  hookLog,
  latency,
  makeE2eProject,
  makeSource,
  pgxJson,
  publicTables,
  recordFigures,
  runScenario,
  type E2eProject,
} from './pgx-harness.js';
import { claudeMissing, findClaudeBinary, findRunProcesses, NEWEST_CLAUDE_CODE, PINNED_CLAUDE_CODE } from './claude.js';
import type { Step } from './fake-model.js';

afterAll(cleanupRoots);

const require = createRequire(import.meta.url);
const SERVER_POSTGRES = require.resolve('@modelcontextprotocol/server-postgres/dist/index.js');
const DBHUB = require.resolve('@bytebase/dbhub/dist/index.js');
const TINY = join(import.meta.dirname, 'mcp', 'tiny-server.mjs');
const WORKLOADS = ['users', 'account', 'booking'];

/** The dev database's URL as a README has it: user, password, host, port, database. */
function devUrl(database: string): string {
  const p = pgInfo();
  return `postgresql://${encodeURIComponent(p.user)}:${encodeURIComponent(p.password)}@${p.host}:${p.port}/${database}`;
}

function writeMcpJson(cwd: string, database: string, tinyLog: string): void {
  const url = devUrl(database);
  writeFileSync(
    join(cwd, '.mcp.json'),
    JSON.stringify(
      {
        mcpServers: {
          pg: { command: process.execPath, args: [SERVER_POSTGRES, url] },
          dbhub: { command: process.execPath, args: [DBHUB, '--transport', 'stdio', '--dsn', url] },
          tiny: { command: process.execPath, args: [TINY], env: { TINY_MCP_LOG: tinyLog } },
        },
      },
      null,
      2,
    ),
  );
}

/** Project MCP servers run without a prompt once approved: what the user's "trust this project" answer records. */
function approveProjectServers(p: E2eProject): void {
  const file = join(p.cwd, '.claude', 'settings.local.json');
  const local = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  writeFileSync(file, JSON.stringify({ ...local, enableAllProjectMcpServers: true }, null, 2));
}

const psqlCreate = (t: string) => `psql -X -q -v ON_ERROR_STOP=1 -c "create table ${t} (id int)"`;
const tool = (name: string, input: Record<string, unknown>): Step => ({ tool: name, input });
const SELECT = tool('ToolSearch', {
  query: 'select:mcp__pg__query,mcp__dbhub__execute_sql,mcp__tiny__echo,ReadMcpResourceTool,Monitor',
});

/** Counts the run's MCP processes (fronts, copies, the tiny server) while it runs: the most seen at once. */
function sampleProcesses(runIdOf: () => string | undefined): { stop(): Record<string, number> } {
  const most: Record<string, number> = { fronts: 0, server_postgres: 0, dbhub: 0, tiny: 0 };
  const timer = setInterval(() => {
    const id = runIdOf();
    if (!id) return;
    const now: Record<string, number> = { fronts: 0, server_postgres: 0, dbhub: 0, tiny: 0 };
    for (const pid of findRunProcesses(id)) {
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        continue;
      }
      if (cmd.includes('mcp\0serve')) now.fronts!++;
      else if (cmd.includes('server-postgres')) now.server_postgres!++;
      else if (cmd.includes('dbhub')) now.dbhub!++;
      else if (cmd.includes('tiny-server')) now.tiny!++;
    }
    for (const k of Object.keys(most)) most[k] = Math.max(most[k]!, now[k]!);
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return most;
    },
  };
}

for (const version of [PINNED_CLAUDE_CODE, NEWEST_CLAUDE_CODE]) {
  const bin = findClaudeBinary(version);
  if (!bin) console.warn(`SKIPPED: ${claudeMissing(version)}`);

  describe.skipIf(!bin)(`database MCP servers with Claude Code ${version}`, () => {
    it("routed: every subagent's MCP and Monitor work lands on its own branch; the parent's on the session's", async () => {
      const source = await makeSource();
      let tinyFile = '';
      const p = makeE2eProject({
        source,
        beforeInstall: (cwd) => {
          tinyFile = join(cwd, '..', 'tiny.log');
          writeMcpJson(cwd, source.name, tinyFile);
        },
      });
      approveProjectServers(p);
      const mcp = p.install.mcp as { routed: string[] };
      expect(mcp.routed.sort()).toEqual(['dbhub', 'pg']);
      const routedJson = JSON.parse(readFileSync(join(p.cwd, '.mcp.json'), 'utf8'));
      expect(routedJson.mcpServers.pg.command).toBe('pgx');
      expect(routedJson.mcpServers.pg.args).toEqual(['mcp', 'serve', 'pg']);
      expect(JSON.stringify(routedJson.mcpServers.pg.args)).not.toContain(pgInfo().password);
      expect(routedJson.mcpServers.tiny.command).toBe(process.execPath); // reaches no database: left alone

      const subagents = WORKLOADS.map((w, i) => ({
        marker: w,
        commands: [
          SELECT,
          // Monitor first: its command runs in the background, and must be done before the subagent stops (SubagentStop
          // ends the branch's sessions); the MCP calls after it give a slower psql (the stand-in, decision 513) time.
          tool('Monitor', { description: 'create a table', timeout_ms: 30_000, command: psqlCreate(`mon_${w}`) }),
          tool('mcp__pg__query', { sql: `COMMIT; CREATE TABLE pg_${w} (id int)` }),
          tool('mcp__dbhub__execute_sql', { sql: `CREATE TABLE dbh_${w} (id int)` }),
          ...(i === 0
            ? [
                tool('mcp__tiny__echo', { text: 'hi' }),
                tool('ReadMcpResourceTool', { server: 'pg', uri: 'postgres://x/items/schema' }),
              ]
            : []),
        ],
      }));
      const scan = passwordsInArgv([pgInfo().password]);
      let runId: string | undefined;
      const procs = sampleProcesses(() => runId);
      const finding = setInterval(() => {
        // the run's id: the one claude process of this project (its environment names the project's PGX_HOME)
        runId ??= findRunIdOf(p);
      }, 100);
      const run = await runScenario(
        p,
        {
          subagents,
          background: false,
          parentCommands: [
            SELECT,
            tool('mcp__pg__query', { sql: `COMMIT; CREATE TABLE mcp_parent (id int)` }),
            tool('mcp__pg__query', { sql: `select current_database() as db` }),
            `psql -X -At -c "select 'db=' || current_database()"`,
          ],
        },
        {
          bin,
          waitMcp: ['pg', 'dbhub', 'tiny'],
          allowedTools: 'Agent,ToolSearch,Bash(psql:*),Monitor,mcp__pg,mcp__dbhub,mcp__tiny,ReadMcpResourceTool',
          timeoutMs: 240_000,
        },
      );
      clearInterval(finding);
      const most = procs.stop();
      const leaked = await scan.stop();
      expect(run.out.code, describeRun(run)).toBe(0);
      expect(run.fake.errors).toEqual([]);
      expect(leaked, "a password in some process's argv").toEqual([]);

      const rows = branches(p);
      const session = rows.find((b) => b.kind === 'session')!;
      // The parent: its MCP query and its Bash both name the session's branch.
      // (server-postgres answers a multi-statement query with a result Claude Code calls malformed: the CREATE
      // committed all the same, which the tables below show.)
      const [, , dbRow, bash] = run.fake.parentBashResults;
      expect(dbRow, describeRun(run)).toContain(session.name);
      expect(bash).toContain(`db=${session.name}`);
      const mine = new Map<string, string>();
      for (const w of WORKLOADS) {
        const b = rows.find((r) => r.agent_id === run.fake.agentIds.get(w));
        expect(b, `${w}'s branch: ${describeRun(run)}`).toBeTruthy();
        mine.set(w, b!.name);
      }
      const results = (w: string) => run.fake.toolResults.get(w)!;
      expect(results('users')[4]).toContain('echo: hi');
      expect(results('users')[5]).toMatch(/pgx: "pg" is an MCP server that reaches a PostgreSQL database/);
      // Revive each branch to look at it: its own three tables, no other agent's.
      for (const w of WORKLOADS) {
        pgxJson(p, ['agent', 'up', '--agent', run.fake.agentIds.get(w)!, '--session', run.sessionId]);
        const t = await publicTables(mine.get(w)!);
        expect(t, `${w}: ${JSON.stringify(results(w))}`).toEqual(
          ['dbh_' + w, 'items', 'mcp_parent', 'mon_' + w, 'pg_' + w].sort(),
        );
      }
      pgxJson(p, ['agent', 'up', '--session', run.sessionId]);
      expect(await publicTables(session.name)).toEqual(['items', 'mcp_parent']);
      expect(await publicTables(source.name)).toEqual(['items']);

      const log = hookLog(p).filter((l) => l.event === 'pre-tool-use' && l.tool);
      const recorded = log.filter((l) => l.outcome.startsWith('recorded:mcp:'));
      expect(recorded.filter((l) => l.agent_id).length).toBe(6); // 3 agents × 2 routed servers
      expect(recorded.filter((l) => !l.agent_id).length).toBe(2); // the parent's two calls
      expect(log.filter((l) => l.outcome.startsWith('rewritten-monitor:')).length).toBe(3);
      expect(log.find((l) => l.tool === 'mcp__tiny__echo')?.outcome).toBe('skipped:mcp-other');
      expect(log.find((l) => l.tool === 'ReadMcpResourceTool')?.outcome).toBe('denied:mcp-resource');
      // The tiny server: one process for the session, not pgx's.
      const tiny = readFileSync(tinyFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(tiny.filter((l) => l.started).length).toBe(1);

      // Nothing of the run's MCP processes is left.
      expect(
        runId && findRunProcesses(runId).filter((pid) => /mcp\0serve|server-postgres|dbhub/.test(cmdlineOf(pid))),
      ).toEqual([]);
      recordFigures(`mcp-routed-${version}`, {
        wall_ms: run.out.durationMs,
        most_processes_at_once: most,
        mcp_hook_ms: latency(recorded.map((l) => l.elapsed_ms)),
        monitor_hook_ms: latency(log.filter((l) => l.tool === 'Monitor').map((l) => l.elapsed_ms)),
        argv_lines_scanned: scan.scanned(),
      });
    }, 300_000);

    it("not routed (--no-mcp): every subagent's database MCP call is refused with the reason; the dev database untouched", async () => {
      const source = await makeSource();
      const p = makeE2eProject({
        source,
        installArgs: ['--no-mcp'],
        beforeInstall: (cwd) => writeMcpJson(cwd, source.name, join(cwd, '..', 'tiny.log')),
      });
      approveProjectServers(p);
      expect((p.install.mcp as { routed: string[] }).routed).toEqual([]);
      const subagents = WORKLOADS.map((w) => ({
        marker: w,
        commands: [
          SELECT,
          tool('mcp__pg__query', { sql: `COMMIT; CREATE TABLE pg_${w} (id int)` }),
          tool('mcp__dbhub__execute_sql', { sql: `CREATE TABLE dbh_${w} (id int)` }),
        ],
      }));
      const run = await runScenario(
        p,
        { subagents, background: false },
        { bin, waitMcp: ['pg', 'dbhub'], allowedTools: 'Agent,ToolSearch,mcp__pg,mcp__dbhub', timeoutMs: 240_000 },
      );
      expect(run.out.code, describeRun(run)).toBe(0);
      for (const w of WORKLOADS) {
        const [, pgAnswer, dbhAnswer] = run.fake.toolResults.get(w)!;
        expect(pgAnswer, describeRun(run)).toMatch(
          /pgx: the MCP server "pg" reaches a PostgreSQL database that pgx does not route/,
        );
        expect(pgAnswer).toContain('pgx mcp route pg');
        expect(dbhAnswer).toMatch(/pgx: the MCP server "dbhub" reaches a PostgreSQL database/);
      }
      expect(await publicTables(source.name)).toEqual(['items']);
      const denied = hookLog(p).filter((l) => l.outcome.startsWith('denied:mcp-unrouted:'));
      expect(denied.length).toBe(6);
    }, 300_000);
  });
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
}

/** The run id of the claude process that runs in this project (its environment carries PGX_HOME). */
function findRunIdOf(p: E2eProject): string | undefined {
  for (const pid of findRunProcessesAnywhere()) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      if (!env.includes(`PGX_HOME=${p.pgxHome}`)) continue;
      const id = env.find((e) => e.startsWith('PGX_E2E_RUN_ID='));
      if (id) return id.slice('PGX_E2E_RUN_ID='.length);
    } catch {
      // gone
    }
  }
  return undefined;
}

function findRunProcessesAnywhere(): number[] {
  try {
    return require('node:fs')
      .readdirSync('/proc')
      .filter((e: string) => /^\d+$/.test(e))
      .map(Number);
  } catch {
    return [];
  }
}
