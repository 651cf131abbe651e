// The broker's registry connections, kept between requests so that a routed command's attach is one statement on
// an open connection instead of a TCP connect, a backend start and a SCRAM login (engine/attach.ts).
import type { ConnectionReuse } from '../engine/context.js';
import type { ConnParams, Db } from '../server/db.js';

/** More than this many idle per server and role, the extra ones close (a burst of 20 needs no 20 kept). */
const MAX_IDLE_PER_KEY = 4;

export class KeptConnections implements ConnectionReuse {
  private readonly idle = new Map<string, Db[]>();

  private static key(p: ConnParams): string {
    // The password is part of what makes two connections interchangeable; the key stays in this process.
    return JSON.stringify([p.host, p.port, p.user, p.password ?? '', p.database, p.sslmode ?? '', p.statementTimeoutMs ?? null, p.channelBinding ?? false]);
  }

  async acquire(p: ConnParams, open: () => Promise<Db>): Promise<{ db: Db; reused: boolean }> {
    const db = this.idle.get(KeptConnections.key(p))?.pop();
    return db ? { db, reused: true } : { db: await open(), reused: false };
  }

  release(p: ConnParams, db: Db, healthy: boolean): void {
    const k = KeptConnections.key(p);
    const list = this.idle.get(k) ?? [];
    if (!healthy || list.length >= MAX_IDLE_PER_KEY) {
      void db.close();
      return;
    }
    list.push(db);
    this.idle.set(k, list);
  }

  get size(): number {
    let n = 0;
    for (const l of this.idle.values()) n += l.length;
    return n;
  }

  async closeAll(): Promise<void> {
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.all(all.map((db) => db.close()));
  }
}
