// The fault-injection gate (src/server/db.ts StatementGate) for in-process engine tests. It can fail one chosen
// statement (the error paths then run, as they would on a server error), or "crash": every connection of the engine
// is cut at once and nothing more is sent, as if the process were killed between two steps. The server then ends
// those sessions and releases their advisory locks, exactly as it does for a dead pgx.
import type { Client } from 'pg';
import type { Db, StatementGate } from '../../src/server/db.js';
import { pollUntil } from './poll.js';
import { sql } from './pgx.js';

export class InjectedFault extends Error {}

type Rule = { at?: number; match?: RegExp; action: 'fail' | 'crash' };

export class Faults implements StatementGate {
  /** Every statement sent (or refused), in order. */
  readonly statements: string[] = [];
  crashed = false;
  private rule: Rule | undefined;
  private readonly conns: { db: Db; client: Client }[] = [];

  /** Fail the n-th statement (1-based) or the first matching one; later statements run. */
  fail(on: number | RegExp): this {
    this.rule = { ...(typeof on === 'number' ? { at: on } : { match: on }), action: 'fail' };
    return this;
  }

  /** Kill every connection instead of sending the n-th (or first matching) statement; nothing runs after it. */
  crash(on: number | RegExp): this {
    this.rule = { ...(typeof on === 'number' ? { at: on } : { match: on }), action: 'crash' };
    return this;
  }

  opened(db: Db, client: Client): void {
    this.conns.push({ db, client });
  }

  async before(text: string): Promise<void> {
    if (this.crashed) throw new InjectedFault('the process is gone (injected crash)');
    this.statements.push(text);
    const r = this.rule;
    if (!r || !((r.at !== undefined && r.at === this.statements.length) || (r.match && r.match.test(text)))) return;
    this.rule = undefined;
    if (r.action === 'fail') throw new InjectedFault(`injected failure of: ${text.slice(0, 80)}`);
    this.crashed = true;
    for (const { client } of this.conns)
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    throw new InjectedFault(`injected crash before: ${text.slice(0, 80)}`);
  }

  /** After a crash: until the server has ended the dead sessions (and so released their locks). */
  async settled(): Promise<void> {
    const pids = this.conns.map((c) => c.db.backendPid);
    const gone = await pollUntil(
      async () =>
        (await sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)', [pids]))[0]!
          .n === 0,
      10_000,
      20,
    );
    if (!gone) throw new Error('the crashed sessions did not end');
  }
}
