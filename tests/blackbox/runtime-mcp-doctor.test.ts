// `pgx agent doctor` on a Codex or Copilot install with a database MCP server configured for that CLI: a `codex-mcp`
// / `copilot-mcp` line, a choice (decide), naming the servers and the file (decision 530); none without such a
// server. And a Codex install from before MCP calls were judged (PreToolUse matcher "Bash"): the codex check fails.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, LAUNCHER, makeProject, runPgx } from '../helpers/pgx.js';
import { CODEX_PRE_TOOL_USE_MATCHER } from '../../src/install/codex-entries.js';

type P = ReturnType<typeof makeProject>;
const doctor = (p: P, env: NodeJS.ProcessEnv) =>
  Object.fromEntries(
    (
      jsonOf(runPgx(['agent', 'doctor', '--json'], { cwd: p.dir, env })).checks as {
        name: string;
        status: string;
        detail: string;
        fix?: string;
        decide?: boolean;
      }[]
    ).map((c) => [c.name, c]),
  );

const PG = ['-y', '@modelcontextprotocol/server-postgres', 'postgresql://app:s3cret@127.0.0.1:5432/app_dev'];

describe('doctor: database MCP servers of Codex and Copilot', () => {
  it('codex: a database server is said as a choice, another server is not; an old matcher fails the codex check', () => {
    const p = makeProject();
    const codexHome = join(p.dir, 'codex-home');
    const env = { ...p.env, CODEX_HOME: codexHome };
    expect(runPgx(['agent', 'install', 'codex'], { cwd: p.dir, env }).status).toBe(0);
    const config = join(codexHome, 'config.toml');
    writeFileSync(
      config,
      `${readFileSync(config, 'utf8')}\n[mcp_servers.tiny]\ncommand = "node"\nargs = ["tiny.mjs"]\n`,
    );
    expect(doctor(p, env)['codex-mcp']).toBeUndefined();
    writeFileSync(
      config,
      `${readFileSync(config, 'utf8')}\n[mcp_servers.pg]\ncommand = "npx"\nargs = ${JSON.stringify(PG)}\n`,
    );
    const d = doctor(p, env);
    expect(d['codex-mcp']).toMatchObject({ status: 'warn', decide: true });
    expect(d['codex-mcp']!.detail).toContain(`an MCP server "pg" configured for Codex (${config})`);
    expect(d['codex-mcp']!.detail).toContain("its hook refuses a subagent's call to it");
    expect(d['codex-mcp']!.detail).not.toContain('s3cret');
    expect(d['codex-mcp']!.fix).toContain(`remove "pg" from ${config}`);

    const hooks = join(codexHome, 'hooks.json');
    writeFileSync(hooks, readFileSync(hooks, 'utf8').replace(JSON.stringify(CODEX_PRE_TOOL_USE_MATCHER), '"Bash"'));
    expect(doctor(p, env).codex).toMatchObject({ status: 'fail', fix: 'pgx agent install codex --scope user' });
    expect(doctor(p, env).codex!.detail).toContain('matches "Bash", not MCP tool calls');
  });

  it("copilot: the project's .mcp.json database server is said as a choice; no line without a Copilot install", () => {
    const p = makeProject();
    const bin = join(p.dir, '.bin');
    mkdirSync(bin);
    symlinkSync(LAUNCHER, join(bin, 'pgx'));
    const copilotHome = join(p.dir, '.copilot');
    mkdirSync(copilotHome);
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}`, COPILOT_HOME: copilotHome };
    writeFileSync(join(p.dir, '.mcp.json'), JSON.stringify({ mcpServers: { pg: { command: 'npx', args: PG } } }));
    expect(doctor(p, env)['copilot-mcp']).toBeUndefined(); // no Copilot install
    expect(runPgx(['agent', 'install', 'copilot'], { cwd: p.dir, env }).status).toBe(0);
    const d = doctor(p, env);
    expect(d['copilot-mcp']).toMatchObject({ status: 'warn', decide: true });
    expect(d['copilot-mcp']!.detail).toContain(
      `an MCP server "pg" configured for Copilot (${join(p.dir, '.mcp.json')})`,
    );
  });
});
