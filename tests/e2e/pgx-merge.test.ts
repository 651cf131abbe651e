/**
 * Merging back (issue 42) with the real Claude Code CLI, offline: the parent migrates its session branch while a
 * connection is held on it (so its subagents fork through a frozen copy); three subagents each add a different table or
 * column and rows; a fourth changes a row. After they return, the parent changes that same row itself and merges every
 * subagent from its own Bash, `--dry-run` first as the handoff tells it: the first three land on top of its own work,
 * the fourth is refused (exit 9) with that row named, and nothing of it is applied.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  branches,
  claudeBin,
  cleanupRoots,
  CLAUDE_CODE_VERSION,
  describeRun,
  makeE2eProject,
  makeSource,
  pgx,
  pgxJson,
  publicTables,
  recordFigures,
  runScenario,
  warnIfSkipped,
} from './pgx-harness.js';
import { pgInfo, sql } from '../helpers/pgx.js';

warnIfSkipped();
afterAll(cleanupRoots);

const psql = (text: string) => `psql -X -q -At -v ON_ERROR_STOP=1 -c "${text}"`;

/** The parent's merge of every subagent of its session: a dry run, then the merge; each one's exit status printed. */
const MERGE_ALL = `set -u
ids=$(pgx agent ls --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const b of JSON.parse(s).branches)if(b.kind==="subagent"&&b.session_id===process.env.CLAUDE_CODE_SESSION_ID)console.log(b.agent_id)})')
for a in $ids; do
  pgx agent merge --agent "$a" --dry-run > /dev/null; echo "dry $a rc=$?"
  pgx agent merge --agent "$a"; echo "merge $a rc=$?"
done
`;

describe.skipIf(!claudeBin)(`pgx with real Claude Code ${CLAUDE_CODE_VERSION}: merging back`, () => {
  it("three subagents' work merged on top of the parent's own; the fourth, which changed the parent's row, refused", async () => {
    const source = await makeSource();
    const p = makeE2eProject({ source });
    writeFileSync(join(p.cwd, 'merge-all.sh'), MERGE_ALL);
    const sessionId = crypto.randomUUID();
    // The session's branch made up front, so the test can hold a connection on it from before the parent's migration.
    const s = pgxJson<{ branch: string }>(p, ['agent', 'up', '--session', sessionId]).branch;
    const info = pgInfo();
    const held = new pg.Client({ ...info, database: s });
    held.on('error', () => {}); // SessionEnd terminates it
    await held.connect();
    const subagents = [
      {
        marker: 'm1',
        commands: [
          psql(
            `create table invoices (id int primary key, order_id int references orders); insert into invoices values (1, 1), (2, 2);`,
          ),
        ],
      },
      {
        marker: 'm2',
        commands: [
          psql(
            `alter table orders add column priority int not null default 0; update orders set priority = 5 where id <= 3;`,
          ),
        ],
      },
      {
        marker: 'm3',
        commands: [
          psql(
            `create table notes (k text primary key, body text); insert into notes values ('a', 'first'); insert into orders values (11, 'new');`,
          ),
        ],
      },
      {
        marker: 'm4',
        commands: [
          psql(`update orders set status = 'from-m4' where id = 5; create table m4_extra (x int primary key);`),
        ],
      },
    ];
    const t0 = Date.now();
    const run = await runScenario(
      p,
      {
        subagents,
        background: false,
        parentCommands: [
          psql(
            `create table orders (id int primary key, status text not null); insert into orders select g, 'new' from generate_series(1, 10) g;`,
          ),
        ],
        parentCommandsAfter: [
          psql(
            `alter table orders add column paid boolean not null default false; update orders set status = 'from-parent', paid = true where id = 5;`,
          ),
          'sh merge-all.sh',
        ],
      },
      { sessionId, allowedTools: 'Agent,Bash(psql:*),Bash(sh:*)', timeoutMs: 240_000 },
    );
    const wall = Date.now() - t0;
    await held.end().catch(() => {});
    expect(run.out.code, describeRun(run)).toBe(0);
    expect(run.fake.errors).toEqual([]);

    const ids = new Map(subagents.map((x) => [x.marker, run.fake.agentIds.get(x.marker)!]));
    const subs = branches(p).filter((b) => b.kind === 'subagent' && b.session_id === sessionId);
    expect(subs).toHaveLength(4);
    // each forked through a frozen copy of the connected, migrated session branch: its fork point
    const fps = pgxJson<{ branches: { agent_id: string | null; fork_point: string | null }[] }>(p, ['agent', 'ls'])
      .branches.filter((b) => [...ids.values()].includes(b.agent_id ?? ''))
      .map((b) => b.fork_point);
    expect(fps).toEqual([
      expect.stringMatching(/^pgx_frz_/),
      expect.any(String),
      expect.any(String),
      expect.any(String),
    ]);
    const merges = run.fake.parentBashResults.at(-1) ?? '';
    for (const m of ['m1', 'm2', 'm3']) {
      expect(merges, m).toContain(`dry ${ids.get(m)} rc=0`);
      expect(merges, m).toContain(`merge ${ids.get(m)} rc=0`);
    }
    expect(merges).toContain(`dry ${ids.get('m4')} rc=9`);
    expect(merges).toContain(`merge ${ids.get('m4')} rc=9`);
    expect(merges).toMatch(/public\.orders \(5\): both updated this row/);
    expect(merges).toMatch(/branch: .*"status":"from-m4"/);
    expect(merges).toMatch(/parent: .*"status":"from-parent"/);

    const ls = pgxJson<{ branches: { agent_id: string | null; merged_into: string | null }[] }>(p, [
      'agent',
      'ls',
    ]).branches;
    for (const m of ['m1', 'm2', 'm3']) expect(ls.find((b) => b.agent_id === ids.get(m))?.merged_into, m).toBe(s);
    expect(ls.find((b) => b.agent_id === ids.get('m4'))?.merged_into).toBeNull();

    // The session's branch: all three subagents' changes plus the parent's own, none of the fourth's.
    pgxJson(p, ['agent', 'up', '--session', sessionId]); // SessionEnd retired it: revive to look
    expect(await publicTables(s)).toEqual(['invoices', 'items', 'notes', 'orders']);
    expect(
      await sql(`SELECT id, status, priority, paid FROM orders WHERE id IN (1, 5, 11) ORDER BY id`, [], s),
    ).toEqual([
      { id: 1, status: 'new', priority: 5, paid: false },
      { id: 5, status: 'from-parent', priority: 0, paid: true },
      { id: 11, status: 'new', priority: 0, paid: false },
    ]);
    expect(await sql(`SELECT count(*)::int AS n FROM invoices`, [], s)).toEqual([{ n: 2 }]);
    expect(await sql(`SELECT body FROM notes`, [], s)).toEqual([{ body: 'first' }]);

    recordFigures('merge-four-subagents', { wall_ms: wall });
    expect(pgx(p, ['agent', 'down', '--session', sessionId, '--now']).status).toBe(0);
  }, 300_000);
});
