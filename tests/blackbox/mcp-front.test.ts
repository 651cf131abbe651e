// pgx's front for a database MCP server (`pgx mcp serve`, the built CLI), driven as Claude Code drives it, in front of
// the real @modelcontextprotocol/server-postgres from npm: every tools/call lands on the branch of the agent the
// hook's record names (the session's for the parent), one copy per branch, none on the source; a call with no record
// is refused and reaches no database; a retired branch's copy stops; the password is in no process's argv.
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { LAUNCHER, jsonOf, makeProject, pgInfo, runPgx, sql } from '../helpers/pgx.js';
import { CLIENT_INIT, resultText, startMcp, type McpClient } from '../helpers/mcp-client.js';
import { recordCall } from '../../src/mcp/calls.js';
import { noteRetired } from '../../src/mcp/retire-notices.js';
import { pidAlive } from '../../src/lib/fsutil.js';
import { pollUntil } from '../helpers/poll.js';
import { passwordsInArgv } from '../helpers/argv-scan.js';

const require = createRequire(import.meta.url);
const SERVER_POSTGRES = require.resolve('@modelcontextprotocol/server-postgres/dist/index.js');

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** The URL a user's .mcp.json would hold: the database, with the password, as the server's README says. */
function devUrl(database: string): string {
  const p = pgInfo();
  return `postgresql://${encodeURIComponent(p.user)}:${encodeURIComponent(p.password)}@${p.host}:${p.port}/${database}`;
}

async function tables(database: string): Promise<string[]> {
  return (
    await sql<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
      [],
      database,
    )
  ).map((r) => r.t);
}

function frontState(home: string): { copies: { branch: string; pid: number; agent_id: string | null }[] } | undefined {
  const dir = join(home, 'mcp', 'fronts');
  if (!existsSync(dir)) return undefined;
  const f = readdirSync(dir)[0];
  return f ? JSON.parse(readFileSync(join(dir, f), 'utf8')) : undefined;
}

describe("pgx mcp serve: one copy of the user's server per branch", () => {
  it("routes each call to its caller's branch, refuses an unrecorded one, stops a retired branch's copy", async () => {
    const source = `src_mcp_${Math.random().toString(36).slice(2, 8)}`;
    await sql(`CREATE DATABASE ${source}`);
    await sql(`CREATE TABLE items (id int)`, [], source);
    const p = makeProject({ source });
    cleanups.push(() => void runPgx(['agent', 'down', '--project', '--now', '--yes'], { cwd: p.cwd, env: p.env }));
    cleanups.push(() => sql(`DROP DATABASE IF EXISTS ${source}`).then(() => undefined));
    const session = randomUUID();
    const url = devUrl(source);
    const env = {
      ...p.env,
      CLAUDE_PROJECT_DIR: p.dir,
      CLAUDE_CODE_SESSION_ID: session,
      PGX_MCP_COMMAND: process.execPath,
      PGX_MCP_ARG_0: SERVER_POSTGRES,
      PGX_MCP_ARG_1: url,
      PGX_MCP_ARGC: '2',
      PGX_MCP_ENV: '0',
    };
    const front: McpClient = startMcp(process.execPath, [LAUNCHER, 'mcp', 'serve', 'pg'], { env, cwd: p.dir });
    cleanups.push(() => void front.close());

    const init = await front.request('initialize', CLIENT_INIT, 60_000);
    expect(init.result?.serverInfo?.name, front.stderr()).toBe('example-servers/postgres');
    front.notify('notifications/initialized');
    const list = await front.request('tools/list');
    expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(['query']);

    const call = (who: string, agent: string | null, text: string, record = true) => {
      const id = `toolu_${randomUUID().replace(/-/g, '')}`;
      if (record) recordCall(p.home, id, { session_id: session, agent_id: agent, server: 'pg', project_dir: p.dir });
      return front.request(
        'tools/call',
        { name: 'query', arguments: { sql: text }, _meta: { 'claudecode/toolUseId': id } },
        60_000,
      );
    };
    // While the copies run: no process holds the password in its argv (the user's URL had it; the copies get none).
    const scan = passwordsInArgv([pgInfo().password]);
    const agents = ['a1aaaaaaaaaaaaaaa', 'a2bbbbbbbbbbbbbbb'];
    // server-postgres calls its tool read-only: `COMMIT;` ends its read-only transaction, and the CREATE commits.
    // The agents first: a subagent's branch is a copy of the session's as it is when the branch is made.
    const answers = await Promise.all(
      agents.map((a, i) => call(a, a, `COMMIT; CREATE TABLE mcp_agent${i + 1} (id int)`)),
    );
    answers.push(await call('parent', null, 'COMMIT; CREATE TABLE mcp_parent (id int)'));
    for (const a of answers) expect(a.result?.isError ?? false, resultText(a)).toBe(false);
    const who = await call('x', null, 'select current_database()');
    expect(resultText(who)).toContain('agent_');

    const refused = await call('nobody', 'a9zzzzzzzzzzzzzzz', 'COMMIT; CREATE TABLE mcp_unrecorded (id int)', false);
    expect(refused.result.isError).toBe(true);
    expect(resultText(refused)).toMatch(/pgx refused this call .* did not record which agent/);

    const ls = jsonOf<{ branches: { name: string; kind: string; agent_id: string | null }[] }>(
      runPgx(['agent', 'ls', '--json'], { cwd: p.cwd, env: p.env }),
    ).branches;
    const sessionBranch = ls.find((b) => b.kind === 'session')!.name;
    const branchOf = (a: string) => ls.find((b) => b.agent_id === a)!.name;
    expect(await tables(sessionBranch)).toEqual(['items', 'mcp_parent']);
    expect(await tables(branchOf(agents[0]!))).toEqual(['items', 'mcp_agent1']);
    expect(await tables(branchOf(agents[1]!))).toEqual(['items', 'mcp_agent2']);
    expect(await tables(source)).toEqual(['items']);

    const state = frontState(p.home)!;
    expect(state.copies.map((c) => c.branch).sort()).toEqual(
      [sessionBranch, branchOf(agents[0]!), branchOf(agents[1]!)].sort(),
    );
    expect(await scan.stop()).toEqual([]);

    // The branch retires (SubagentStop's notice): its copy stops; the others run on.
    const retired = state.copies.find((c) => c.agent_id === agents[0])!;
    noteRetired(p.home, retired.branch);
    expect(
      await pollUntil(async () => !pidAlive(retired.pid) && frontState(p.home)!.copies.length === 2, 15_000),
      'the copy stopped',
    ).toBe(true);
    // Its next call starts a copy again (a revived branch).
    expect((await call('a1', agents[0]!, 'select 1')).result.isError ?? false).toBe(false);

    const pids = frontState(p.home)!.copies.map((c) => c.pid);
    expect(await front.close()).toBe(0);
    for (const pid of pids) expect(pidAlive(pid), `copy ${pid} left running`).toBe(false);
    expect(existsSync(join(p.home, 'mcp', 'fronts', `${front.child.pid}.json`))).toBe(false);
  }, 120_000);
});
