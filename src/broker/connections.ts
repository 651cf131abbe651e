// The broker's registry connections, kept between requests so that a routed command's attach is one statement on
// an open connection instead of a TCP connect, a backend start and a SCRAM login (engine/attach.ts). The attach is a
// single autocommit statement, so requests may share a connection: node-postgres queues them, and a burst of 20
// hooks costs the server 2 backends, not 20.
import type { ConnectionReuse } from '../engine/api.js';
import type { ConnParams, Db } from '../server/db.js';

/** Connections per server, role and timeout. */
const PER_KEY = 2;
/** Unused this long, a connection closes (the broker itself lives on until its own idle exit). */
export const KEPT_IDLE_MS = 60_000;

interface Kept {
  db: Promise<Db>;
  users: number;
  lastUsed: number;
}

export class KeptConnections implements ConnectionReuse {
  private readonly byKey = new Map<string, Kept[]>();

  private static key(p: ConnParams): string {
    // The password is part of what makes two connections interchangeable; the key stays in this process.
    return JSON.stringify([p.host, p.port, p.user, p.password ?? '', p.database, p.sslmode ?? '', p.statementTimeoutMs ?? null, p.channelBinding ?? false]);
  }

  async acquire(p: ConnParams, open: () => Promise<Db>) {
    const k = KeptConnections.key(p);
    const list = this.byKey.get(k) ?? [];
    this.byKey.set(k, list);
    let kept = list.length >= PER_KEY ? list.reduce((a, b) => (b.users < a.users ? b : a)) : undefined;
    const reused = kept !== undefined;
    if (!kept) {
      kept = { db: open(), users: 0, lastUsed: Date.now() };
      list.push(kept);
    }
    const c = kept;
    c.users++;
    c.lastUsed = Date.now();
    let db: Db;
    try {
      db = await c.db;
    } catch (e) {
      c.users--;
      this.drop(k, c);
      throw e;
    }
    let released = false;
    return {
      db,
      reused,
      release: (healthy: boolean) => {
        if (released) return;
        released = true;
        c.users--;
        c.lastUsed = Date.now();
        if (!healthy) this.drop(k, c);
      },
    };
  }

  private drop(k: string, c: Kept): void {
    const list = this.byKey.get(k) ?? [];
    const i = list.indexOf(c);
    if (i < 0) return;
    list.splice(i, 1);
    if (!list.length) this.byKey.delete(k);
    // Requests still queued on it finish or fail on their own; it closes after them.
    void c.db.then((d) => d.close()).catch(() => {});
  }

  /** Closes connections nobody used for KEPT_IDLE_MS. */
  sweep(now = Date.now()): void {
    for (const [k, list] of this.byKey) for (const c of [...list]) if (c.users === 0 && now - c.lastUsed >= KEPT_IDLE_MS) this.drop(k, c);
  }

  get size(): number {
    let n = 0;
    for (const l of this.byKey.values()) n += l.length;
    return n;
  }

  async closeAll(): Promise<void> {
    const all = [...this.byKey.values()].flat();
    this.byKey.clear();
    await Promise.all(all.map((c) => c.db.then((d) => d.close()).catch(() => {})));
  }
}
