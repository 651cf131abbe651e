// The broker's kept registry connections (src/broker/connections.ts) under the one-statement attach: reused while
// healthy, shared by concurrent requests, and replaced (the attach still answers) when the server ended one.
import { afterAll, describe, expect, it } from 'vitest';
import { attachFast } from '../../src/engine/attach.js';
import { Engine } from '../../src/engine/api.js';
import { KeptConnections } from '../../src/broker/connections.js';
import { sql } from '../helpers/pgx.js';
import { testProject } from '../helpers/engine.js';

const kept = new KeptConnections();
afterAll(() => kept.closeAll());

describe('broker: kept registry connections', () => {
  it('attach reuses them, 20 at once share at most 2, and a terminated one is replaced without failing the attach', async () => {
    const p = testProject();
    const id = { project: p.config.project, host: p.config.host, sessionId: 's-kept', agentId: 'akept0000000000001' };
    const made = await p.run((e) => e.ensure({ sessionId: id.sessionId, agentId: id.agentId }));
    const opts = { quiet: true, reuse: kept };
    const backends = async () =>
      (
        await sql<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = 'pgx_registry' AND application_name = 'pgx' AND pid <> pg_backend_pid()",
        )
      ).map((r) => r.pid);
    const before = new Set(await backends());

    const first = await attachFast(p.config, id, opts);
    expect(first?.record.name).toBe(made.branch);
    expect(kept.size).toBe(1);
    const burst = await Promise.all(Array.from({ length: 20 }, () => attachFast(p.config, id, opts)));
    expect(burst.every((a) => a?.record.name === made.branch)).toBe(true);
    expect(kept.size).toBe(2); // the burst opened the second; the rest queued on the two
    const ours = (await backends()).filter((pid) => !before.has(pid));
    expect(ours.length).toBeGreaterThanOrEqual(1);

    // The server ends the kept connections (a restart, an admin's pg_terminate_backend): the next attach still
    // answers, on a new connection.
    for (const pid of ours) await sql('SELECT pg_terminate_backend($1)', [pid]);
    await new Promise((r) => setTimeout(r, 200));
    const after = await attachFast(p.config, id, opts);
    expect(after?.record.name).toBe(made.branch);
    const now = (await backends()).filter((pid) => !before.has(pid));
    expect(now.some((pid) => !ours.includes(pid))).toBe(true);

    // Unused past KEPT_IDLE_MS, they close.
    kept.sweep(Date.now() + 61_000);
    expect(kept.size).toBe(0);
  });
});

describe('broker: lent registry connections (a whole engine piece of work)', () => {
  it('an engine gives its connection back clean and the next one reuses it; one left in a transaction, or ended by the server, is never reused', async () => {
    const p = testProject();
    const lender = new KeptConnections();
    try {
      const pidOf = async (e: import('../../src/engine/api.js').Engine) =>
        (e as unknown as { ctx: { registry: { backendPid: number } } }).ctx.registry.backendPid;
      const opts = { quiet: true, reuse: lender };
      const e1 = await Engine.open(p.config, opts);
      const pid1 = await pidOf(e1);
      await e1.ensure({ sessionId: 's-lend', agentId: 'alend000000000001' });
      await e1.close();
      await new Promise((r) => setTimeout(r, 100)); // the give-back's unlock runs after close()
      const e2 = await Engine.open(p.config, opts);
      expect(await pidOf(e2)).toBe(pid1);
      // Left inside a transaction (a piece of work cut off mid-way): closed, not kept.
      const reg = (e2 as unknown as { ctx: { registry: { query(s: string): Promise<unknown> } } }).ctx.registry;
      await reg.query('BEGIN');
      await e2.close();
      await new Promise((r) => setTimeout(r, 100));
      const e3 = await Engine.open(p.config, opts);
      const pid3 = await pidOf(e3);
      expect(pid3).not.toBe(pid1);
      await e3.close();
      await new Promise((r) => setTimeout(r, 100));
      // Ended by the server while idle: the next engine gets a new one and works.
      await sql('SELECT pg_terminate_backend($1)', [pid3]);
      await new Promise((r) => setTimeout(r, 200));
      const e4 = await Engine.open(p.config, opts);
      expect(await pidOf(e4)).not.toBe(pid3);
      const r = await e4.ensure({ sessionId: 's-lend', agentId: 'alend000000000001' });
      expect(r.branch).toBeTruthy();
      await e4.close();
    } finally {
      await lender.closeAll();
    }
  });
});
