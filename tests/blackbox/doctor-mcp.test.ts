// The doctor's MCP check (decision 495), run as the user runs it: a database MCP server that reaches this project's
// database and is not routed warns with `pgx mcp route NAME`; once routed it is ok and says so; a server that reaches
// another database is the user's choice; servers that reach no database are left alone; and pgx's PreToolUse hook
// from an install that matched Bash alone fails with the install that fixes it. No password in any of it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, pgInfo, runPgx } from '../helpers/pgx.js';

type Check = { name: string; status: string; detail: string; fix?: string; decide?: boolean };
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function project() {
  const p = makeProject({ source: 'shop' });
  dirs.push(p.dir, p.env.HOME!);
  return p;
}

function mcpCheck(p: ReturnType<typeof makeProject>): Check {
  const r = runPgx(['agent', 'doctor', '--json'], p);
  const c = (jsonOf(r).checks as Check[]).find((x) => x.name === 'mcp');
  expect(c, r.stdout + r.stderr).toBeDefined();
  expect(JSON.stringify(c)).not.toContain('s3cret');
  return c!;
}

function mcpJson(p: ReturnType<typeof makeProject>, servers: Record<string, unknown>): void {
  writeFileSync(join(p.dir, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
}

const files = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] };

describe('pgx agent doctor: the mcp check', () => {
  it('a project database server not routed warns with the route command; routed, it is ok and named', () => {
    const p = project();
    const u = new URL(pgInfo().url);
    const url = `postgresql://me:s3cret@${u.hostname}:${u.port}/shop`;
    mcpJson(p, { pg: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-postgres', url] }, files });
    const before = mcpCheck(p);
    expect(before).toMatchObject({ status: 'warn', fix: 'pgx mcp route pg' });
    expect(before.detail).toContain(
      "reach this project's database, NOT routed (subagents' calls refused): pg (project)",
    );
    expect(before.detail).not.toContain('files');

    const r = runPgx(['mcp', 'route', 'pg'], p);
    expect(r.status, r.stderr).toBe(0);
    const after = mcpCheck(p);
    expect(after).toMatchObject({ status: 'ok', detail: 'routed (each agent reaches its own branch): pg (project)' });
  });

  it("another database's server is the user's choice; servers that reach no database are ok", () => {
    const p = project();
    mcpJson(p, { files });
    expect(mcpCheck(p)).toMatchObject({
      status: 'ok',
      detail: 'no MCP server reaches a database (1 server(s) left alone)',
    });
    mcpJson(p, { files, other: { command: 'node', args: ['s.js', 'postgresql://me:s3cret@db.example:5432/crm'] } });
    const c = mcpCheck(p);
    expect(c).toMatchObject({ status: 'warn', decide: true });
    expect(c.detail).toContain('database servers pgx does not route');
    expect(c.detail).toContain('other (db.example:5432/crm)');
    expect(c.fix).toContain('pgx mcp route other');
  });

  it("pgx's PreToolUse hook matching Bash alone (an older install) fails with the install that fixes it", () => {
    const p = project();
    mcpJson(p, { files });
    mkdirSync(join(p.dir, '.claude'));
    const settings = join(p.dir, '.claude', 'settings.json');
    const old = { type: 'command', command: `'${LAUNCHER}' agent hook pre-tool-use`, timeout: 60 };
    writeFileSync(settings, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [old] }] } }));
    const c = mcpCheck(p);
    expect(c).toMatchObject({ status: 'fail', fix: 'pgx agent install claude' });
    expect(c.detail).toContain(`${settings} (matcher "Bash")`);
    expect(c.detail).toContain(
      "subagents' Monitor, MCP, CronCreate, Skill or REPL calls are not all routed or refused",
    );
  });
});
