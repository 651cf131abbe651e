/**
 * The Claude Code plugin, loaded the way Claude Code loads it: the REAL binary with `--plugin-dir
 * <repo>/plugins/claude/pgx`, in a project with a .pgx.toml and NO hooks in any settings file. Two subagents each
 * create a marker table with psql; each table must land in that subagent's own branch (and nowhere else), and both
 * branches must be retired by the plugin's SubagentStop hook.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, pgInfo, REPO, runPgx, sql } from '../helpers/pgx.js';
import { CLAUDE_CODE_VERSION, claudeMissing, findClaudeBinary, runClaude } from './claude.js';
import { startFakeModel, type SubagentScript } from './fake-model.js';

const bin = findClaudeBinary();
if (!bin) console.warn(`SKIPPED tests/e2e/plugin.test.ts: ${claudeMissing()}`);

const PLUGIN_DIR = join(REPO, 'plugins', 'claude', 'pgx');
const roots: string[] = [];
afterAll(() => {
  if (process.env.PGX_E2E_KEEP) console.warn(`kept e2e dirs: ${roots.join(' ')}`);
  else for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** Public tables of a database that refuses connections (a retired branch): read through a throwaway clone. */
async function tablesOf(db: string): Promise<string[]> {
  const probe = `probe_${Math.random().toString(36).slice(2, 10)}`;
  await sql(`CREATE DATABASE ${probe} TEMPLATE ${db}`);
  try {
    return (
      await sql<{ t: string }>("select tablename as t from pg_tables where schemaname = 'public' order by 1", [], probe)
    ).map((r) => r.t);
  } finally {
    await sql(`DROP DATABASE ${probe}`);
  }
}

describe.skipIf(!bin)(
  `the pgx plugin in real Claude Code ${CLAUDE_CODE_VERSION} (--plugin-dir, no settings hooks)`,
  () => {
    it('routes two subagents to two branches of their own and retires both', async () => {
      const root = mkdtempSync(join(tmpdir(), 'pgx-e2e-plugin-'));
      roots.push(root);
      const cwd = join(root, 'project');
      const home = join(root, 'home');
      const pgxHome = join(root, 'pgx-home');
      mkdirSync(cwd);
      mkdirSync(home);
      const name = `plug${Math.random().toString(36).slice(2, 8)}`;
      writeFileSync(join(cwd, '.pgx.toml'), `[project]\nname = "${name}"\n`);
      const pgxEnv = { PGX_DATABASE_URL: pgInfo().url, PGX_HOME: pgxHome, PGX_HOST: 'plugin' };

      const markers = ['m_alpha', 'm_beta'];
      const subagents: SubagentScript[] = markers.map((m) => ({
        marker: m,
        commands: [
          `psql -X -q -At -v ON_ERROR_STOP=1 -c "create table ${m}(x int); select 'db=' || current_database();"`,
        ],
      }));
      const fake = await startFakeModel({ subagents });
      let out;
      try {
        out = await runClaude({
          bin: bin!,
          cwd,
          home,
          modelUrl: fake.url,
          prompt: 'Start the two e2e subagents.',
          sessionId: randomUUID(),
          pluginDir: PLUGIN_DIR,
          env: pgxEnv,
          timeoutMs: 90_000,
        });
      } finally {
        await fake.close();
      }
      const context = JSON.stringify(
        { code: out.code, stderr: out.stderr.slice(0, 2000), errors: fake.errors, log: fake.log },
        null,
        1,
      );
      expect(out.code, context).toBe(0);
      expect(fake.errors, context).toEqual([]);
      // Nothing but the plugin could have routed these commands.
      expect(existsSync(join(cwd, '.claude', 'settings.json'))).toBe(false);
      expect(
        existsSync(join(home, '.claude', 'settings.json')) &&
          readFileSync(join(home, '.claude', 'settings.json'), 'utf8').includes('agent hook'),
      ).toBe(false);

      // What each subagent's psql reported: its own branch.
      const reported = new Map(
        markers.map((m) => [m, /db=([a-z0-9_]+)/.exec((fake.toolResults.get(m) ?? []).join('\n'))?.[1]]),
      );
      for (const m of markers)
        expect(reported.get(m), `${m}: ${fake.toolResults.get(m)}`).toMatch(/^agent_plugin_[a-z0-9]{8}_[a-z0-9]{1,8}$/);
      expect(new Set(reported.values()).size).toBe(2);

      // The registry: two subagent branches, both retired (SubagentStop ran from the plugin's hooks.json).
      const ls = jsonOf(
        runPgx(['agent', 'ls', '--json'], { cwd, env: { PATH: process.env.PATH, HOME: home, ...pgxEnv } }),
      );
      const subs = ls.branches.filter((b: { kind: string }) => b.kind === 'subagent');
      expect(subs.map((b: { name: string }) => b.name).sort(), JSON.stringify(ls)).toEqual(
        [...reported.values()].sort(),
      );
      for (const b of subs) expect(b.state, b.name).toBe('retiring');
      for (const m of markers) {
        const agentId = fake.agentIds.get(m);
        if (agentId) expect(subs.find((b: { agent_id: string }) => b.agent_id === agentId)?.name).toBe(reported.get(m));
      }

      // The database itself: each marker table only in its own subagent's branch, never in the server's postgres db.
      for (const m of markers) {
        const mine = await tablesOf(reported.get(m)!);
        expect(mine, reported.get(m)).toEqual([m]);
      }
      const leaked = await sql("select tablename from pg_tables where tablename like 'm\\_%'");
      expect(leaked).toEqual([]);

      // The plugin's hooks logged the routing (ids and outcomes only).
      const log = readFileSync(join(pgxHome, 'agent', 'hooks.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(log.filter((l) => l.event === 'pre-tool-use' && String(l.outcome).startsWith('rewritten')).length).toBe(2);
      expect(log.filter((l) => l.event === 'subagent-stop' && String(l.outcome).startsWith('retired')).length).toBe(2);
    });
  },
);
