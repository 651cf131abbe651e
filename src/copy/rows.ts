// The rows half of the Node copy: each table streamed by `COPY … TO STDOUT` on a reader that shares the copy's
// snapshot into `COPY … FROM STDIN` on a writer of the copy, a few tables at a time (biggest first, so the last one
// to finish is a small one). Into a table truncated in the same transaction, FREEZE: the rows are written frozen, so
// neither the first read nor the foreign keys' validation rewrites every page for hint bits.
import type { Client } from 'pg';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import * as copySql from '../server/copy-catalog.js';
import type { RowTable } from '../server/copy-catalog.js';
import type { Db, StatementGate } from '../server/db.js';

export interface Connection {
  db: Db;
  client: Client;
}

export interface RowsCopied {
  tables: number;
  rows: number;
  bytes: number;
}

/**
 * Copies every table's rows, `pairs.length` tables at once. The first failure stops the others taking a new table
 * and is thrown once all have stopped (the caller drops the unfinished copy).
 */
export async function copyRows(
  tables: RowTable[],
  pairs: { reader: Connection; writer: Connection }[],
  o: { binary: boolean; gate?: StatementGate; progress?: (copied: RowsCopied, total: number) => void },
): Promise<RowsCopied> {
  const queue = [...tables];
  const done: RowsCopied = { tables: 0, rows: 0, bytes: 0 };
  let failure: unknown;
  const worker = async ({ reader, writer }: { reader: Connection; writer: Connection }) => {
    for (let t = queue.shift(); t && failure === undefined; t = queue.shift()) {
      try {
        const rows = await copyTable(t, reader, writer, o.binary && t.binary, o.gate, (n) => (done.bytes += n));
        done.rows += rows; // not `+= await`: that would read the sum before another worker added to it
        done.tables++;
        o.progress?.(done, tables.length);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(pairs.map(worker));
  if (failure !== undefined) throw failure;
  return done;
}

async function copyTable(
  t: RowTable,
  reader: Connection,
  writer: Connection,
  binary: boolean,
  gate: StatementGate | undefined,
  onBytes: (n: number) => void,
): Promise<number> {
  const out = copySql.copyOut(t, binary);
  const into = copySql.copyIn(t, binary);
  await writer.db.query('BEGIN');
  await writer.db.query(copySql.truncateForFreeze(t));
  await gate?.before(into, writer.db);
  await gate?.before(out, reader.db);
  const sink = writer.client.query(copyFrom(into));
  const counted = new Transform({
    transform(chunk: Buffer, _enc, next) {
      onBytes(chunk.length);
      next(null, chunk);
    },
  });
  try {
    await pipeline(reader.client.query(copyTo(out)), counted, sink);
  } catch (err) {
    await writer.db.query('ROLLBACK').catch(() => {});
    throw err;
  }
  await writer.db.query('COMMIT');
  return sink.rowCount;
}
