// `pgx local sql`: SQL on the local server through pgx's own driver, for a machine with no psql (issue 39): the demo
// and a user's quick look need nothing but Node. Each -c (or the file, or stdin) is sent as it is, in order; the first
// statement the server refuses stops the run (psql's ON_ERROR_STOP), and what ran before it is still reported.
import { PgxError } from '../lib/errors.js';
import { connect, type ScriptResult } from './db.js';
import { sqlstateOf } from './sqlstate.js';
import { localParams } from './local-access.js';

export interface LocalSqlRun {
  database: string;
  results: ScriptResult[];
  /** The refusal that stopped the run (its results are those before it). */
  error?: PgxError;
}

export async function runLocalSql(home: string, database: string, scripts: string[]): Promise<LocalSqlRun> {
  const db = await connect({ ...(await localParams(home, database)), application_name: 'pgx local sql' });
  const results: ScriptResult[] = [];
  try {
    for (const text of scripts) {
      try {
        results.push(...(await db.script(text)));
      } catch (err) {
        const code = sqlstateOf(err);
        return {
          database,
          results,
          error: new PgxError(
            'SQL_FAILED',
            `ERROR: ${(err as Error).message} (${code ? `SQLSTATE ${code}, ` : ''}database "${database}")`,
            'Fix the statement; the ones before it ran (each -c is its own transaction unless it says BEGIN).',
          ),
        };
      }
    }
    return { database, results };
  } finally {
    await db.close();
  }
}

/** psql -At's form: each row's values joined by `sep` (NULL as empty), one row a line; `header`: the column names first. */
export function unalignedRows(results: ScriptResult[], opts: { sep?: string; header?: boolean } = {}): string[] {
  const sep = opts.sep ?? '|';
  return results.flatMap((r) => [
    ...(opts.header && r.columns.length ? [r.columns.join(sep)] : []),
    ...r.rows.map((row) => row.map((v) => v ?? '').join(sep)),
  ]);
}
