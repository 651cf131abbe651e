// The broker's registry connections, kept between requests so that a routed command's attach is one statement on
// an open connection instead of a TCP connect, a backend start and a SCRAM login (engine/attach.ts). The attach is a
// single autocommit statement, so requests may share a connection: node-postgres queues them, and a burst of 20
// hooks costs the server 2 backends, not 20.
import type { ConnectionReuse } from '../engine/api.js';
import type { Db } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';

/** Connections per server, role and timeout. */
const PER_KEY = 2;
/**
 * The most connections one broker keeps open, over every server and environment it serves (one broker per user:
 * decision 442). A request past it still gets a connection of its own, closed once the request is done.
 */
export const KEPT_LIMIT = 12;
/** Unused this long, a connection closes (the broker itself lives on until its own idle exit). */
export const KEPT_IDLE_MS = 60_000;

interface Kept {
  db: Promise<Db>;
  users: number;
  lastUsed: number;
}

/** Idle lent connections kept per key. */
const LENT_IDLE_PER_KEY = 4;

export class KeptConnections implements ConnectionReuse {
  private readonly byKey = new Map<string, Kept[]>();
  private readonly idleLent = new Map<string, { db: Db; since: number }[]>();
  /** After closeAll(): what is given back or released is closed, never kept. */
  private closed = false;

  private static key(p: ConnParams): string {
    // The password is part of what makes two connections interchangeable; the key stays in this process.
    return JSON.stringify([
      p.host,
      p.port,
      p.user,
      p.password ?? '',
      p.database,
      p.sslmode ?? '',
      p.statementTimeoutMs ?? null,
      p.channelBinding ?? false,
    ]);
  }

  async acquire(p: ConnParams, open: () => Promise<Db>) {
    const k = KeptConnections.key(p);
    const list = this.byKey.get(k) ?? [];
    this.byKey.set(k, list);
    for (const c of [...list]) if (c.users === 0 && !(await c.db.catch(() => undefined))?.isOpen()) this.drop(k, c); // ended while idle
    let kept = list.length >= PER_KEY ? list.reduce((a, b) => (b.users < a.users ? b : a)) : undefined;
    const reused = kept !== undefined;
    if (!kept && this.size >= this.limit) this.evictIdle();
    if (!kept && this.size >= this.limit) {
      // full of connections in use: one of the request's own, never kept
      if (!list.length) this.byKey.delete(k);
      const db = await open();
      return { db, reused: false, release: () => void db.close() };
    }
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
        if (!healthy || this.closed) this.drop(k, c);
      },
    };
  }

  async lend(p: ConnParams, open: () => Promise<Db>): Promise<{ db: Db; giveBack(): void }> {
    const k = KeptConnections.key(p);
    const idle = this.idleLent.get(k) ?? [];
    let kept = idle.pop();
    while (kept && !kept.db.isOpen()) kept = idle.pop(); // ended while idle (a server restart): forgotten
    const db = kept?.db ?? (await open());
    let given = false;
    return {
      db,
      giveBack: () => {
        if (given) return;
        given = true;
        // Kept only if the work left it clean: no transaction open or failed, and no session lock (a lock left by a
        // crash of the work would otherwise be held by the broker for good). Off the request's path.
        if (db.txStatus() !== 'I') return void db.close();
        void db
          .query('SELECT pg_advisory_unlock_all()')
          .then(() => {
            const idle = this.idleLent.get(k) ?? [];
            if (this.closed || idle.length >= LENT_IDLE_PER_KEY || this.size >= this.limit || db.txStatus() !== 'I')
              return void db.close();
            idle.push({ db, since: Date.now() });
            this.idleLent.set(k, idle);
          })
          .catch(() => void db.close());
      },
    };
  }

  private drop(k: string, c: Kept): void {
    const list = this.byKey.get(k) ?? [];
    const i = list.indexOf(c);
    if (i >= 0) list.splice(i, 1);
    if (!list.length) this.byKey.delete(k);
    // Requests still queued on it finish or fail on their own; it closes after them.
    void c.db.then((d) => d.close()).catch(() => {});
  }

  /** Closes connections nobody used for KEPT_IDLE_MS. */
  sweep(now = Date.now()): void {
    for (const [k, list] of this.byKey)
      for (const c of [...list]) if (c.users === 0 && now - c.lastUsed >= KEPT_IDLE_MS) this.drop(k, c);
    for (const [k, idle] of this.idleLent) {
      const old = idle.filter((x) => now - x.since >= KEPT_IDLE_MS);
      for (const x of old) void x.db.close();
      const left = idle.filter((x) => now - x.since < KEPT_IDLE_MS);
      if (left.length) this.idleLent.set(k, left);
      else this.idleLent.delete(k);
    }
  }

  constructor(readonly limit: number = KEPT_LIMIT) {}

  /** Closes the connection unused the longest (kept or lent), to make room under the limit. */
  private evictIdle(): void {
    let oldest: { at: number; close: () => void } | undefined;
    for (const [k, list] of this.byKey)
      for (const c of list)
        if (c.users === 0 && (!oldest || c.lastUsed < oldest.at))
          oldest = { at: c.lastUsed, close: () => this.drop(k, c) };
    for (const [k, idle] of this.idleLent)
      for (const x of idle)
        if (!oldest || x.since < oldest.at)
          oldest = {
            at: x.since,
            close: () => {
              idle.splice(idle.indexOf(x), 1);
              if (!idle.length) this.idleLent.delete(k);
              void x.db.close();
            },
          };
    oldest?.close();
  }

  /** How many servers (host, port, role, database…) the kept connections go to. */
  get servers(): number {
    return new Set([...this.byKey.keys(), ...this.idleLent.keys()]).size;
  }

  get size(): number {
    let n = 0;
    for (const l of this.byKey.values()) n += l.length;
    for (const l of this.idleLent.values()) n += l.length;
    return n;
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.byKey.values()].flat();
    const lent = [...this.idleLent.values()].flat();
    this.byKey.clear();
    this.idleLent.clear();
    await Promise.all([
      ...all.map((c) => c.db.then((d) => d.close()).catch(() => {})),
      ...lent.map((x) => x.db.close()),
    ]);
  }
}
