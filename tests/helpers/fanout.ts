// The end of a fan-out test (tests/blackbox/hooks-broker-fanout.test.ts, through the broker):
// every agent's branch created and retired, then nothing left.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { sessionEnd, type SessionCtx } from './hook-payloads.js';
import { backendsOn, hook, hookEnv, registryRows, type Project } from './hooks.js';
import { runPgx, sql } from './pgx.js';

/**
 * One record per agent, none active, no backend left on any of them; then the session ends, `agent down` leaves no
 * database of theirs, and SubagentStop dropped every agent's routing tickets (routing-ticket.ts: a directory per agent).
 */
export async function expectFanOutRetiredAndLeftNothing(
  p: Project,
  s: SessionCtx,
  branches: string[],
  agents: number,
): Promise<void> {
  const rows = (await registryRows(p.name)).filter((r) => r.kind === 'subagent');
  expect(rows.length).toBe(agents);
  expect(rows.filter((r) => r.state === 'active').map((r) => r.name)).toEqual([]);
  expect(new Set(rows.map((r) => r.name))).toEqual(new Set(branches));
  for (const b of branches) expect(await backendsOn(b)).toEqual([]);

  await hook('session-end', sessionEnd(s), p);
  const down = runPgx(['agent', 'down', '--project', '--now', '--yes', '--json'], {
    cwd: p.dir,
    env: { ...hookEnv(p, {}), PGX_BROKER: '0' },
    timeout: 120_000,
  });
  expect(down.status, down.stderr).toBe(0);
  const left = await sql<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY ($1)', [branches]);
  expect(left).toEqual([]);
  const tickets = join(p.home, 'agent', 'tickets');
  expect(existsSync(tickets) ? readdirSync(tickets) : []).toEqual([]);
}
