// The plugin as Claude Code runs it: copied somewhere with no node_modules above it, hooks invoked through
// "${CLAUDE_PLUGIN_ROOT}/bin/pgx.js", and the rewritten command (whose launcher is the plugin's real path) run by a
// shell. Proves the bundle needs nothing from node_modules at run time, pg included.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeProject, REPO, sql } from '../helpers/pgx.js';
import { withPsql } from '../helpers/psql-stand-in.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'pgx-plugin-run-')));
const PLUGIN = join(root, 'pgx');
cpSync(join(REPO, 'plugins', 'claude', 'pgx'), PLUGIN, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

function hook(event: string, payload: object, env: NodeJS.ProcessEnv) {
  // Exactly the command line hooks.json gives Claude Code, run by a shell with CLAUDE_PLUGIN_ROOT set.
  // TMPDIR: the file's temp dir (tests/helpers/file-hygiene.ts), where the hook's broker puts its socket directory.
  const r = spawnSync('sh', ['-c', `"\${CLAUDE_PLUGIN_ROOT}/bin/pgx.js" agent hook ${event}`], {
    env: { TMPDIR: tmpdir(), ...env, CLAUDE_PLUGIN_ROOT: PLUGIN },
    input: JSON.stringify(payload),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    json: r.stdout.trim() ? JSON.parse(r.stdout) : undefined,
  };
}

describe('the plugin bundle, run from a copy with no node_modules', () => {
  it('has no node_modules in any ancestor directory (else this test proves nothing)', () => {
    for (let d = PLUGIN; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules')), d).toBe(false);
  });

  it('--help runs; an out-of-scope hook prints nothing and exits 0', () => {
    const help = spawnSync(join(PLUGIN, 'bin', 'pgx.js'), ['--help'], { encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('agent');
    const r = hook(
      'pre-tool-use',
      { session_id: 's', cwd: root, agent_id: 'a', tool_name: 'Bash', tool_input: { command: 'ls' } },
      { PATH: process.env.PATH, HOME: root, PGX_HOME: join(root, 'home') },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('in scope: SubagentStart makes the branch, PreToolUse rewrites to the plugin launcher, and the rewrite runs there', async () => {
    const p = makeProject();
    const env = { ...p.env, CLAUDE_PROJECT_DIR: p.dir };
    const ids = { session_id: 'plugsess-0001', agent_id: 'plugagent01' };
    const start = hook('subagent-start', { ...ids, cwd: p.dir, agent_type: 'general-purpose' }, env);
    expect(start.status, start.stderr).toBe(0);
    expect(start.json.hookSpecificOutput.additionalContext).toContain(`agent_${p.host}_plugsess_plugagen`);

    const pre = hook(
      'pre-tool-use',
      {
        ...ids,
        cwd: p.dir,
        tool_name: 'Bash',
        tool_input: { command: 'psql -X -q -c "create table from_plugin(x int)"', description: 'make a table' },
      },
      env,
    );
    expect(pre.status, pre.stderr).toBe(0);
    const updated = pre.json.hookSpecificOutput.updatedInput;
    expect(updated.description).toBe('make a table');
    expect(updated.command.startsWith(`'${join(PLUGIN, 'bin', 'pgx.js')}' agent exec --agent plugagent01 `)).toBe(true);

    const run = spawnSync('sh', ['-c', updated.command], {
      env: withPsql({ ...env, CLAUDE_CODE_SESSION_ID: ids.session_id }), // the stand-in where there is no psql
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const rows = await sql(
      "select count(*)::int as n from pg_tables where tablename = 'from_plugin'",
      [],
      `agent_${p.host}_plugsess_plugagen`,
    );
    expect(rows[0].n).toBe(1);
    expect((await sql("select count(*)::int as n from pg_tables where tablename = 'from_plugin'"))[0].n).toBe(0);
  });
});
