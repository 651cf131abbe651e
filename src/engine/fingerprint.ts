// The schema fingerprint: how doctor tells whether the template is still in step with the source.
import { connect, type StatementGate } from '../server/db.js';
import type { ConnParams } from '../server/conn-params.js';
import type { EngineContext } from './context.js';

/**
 * A fingerprint of the source's schema (relations with their columns, functions), read from the catalogs.
 * Stored in the template's stamp at refresh, compared by `doctor` to say whether the template is in step.
 */
export async function schemaFingerprint(e: Pick<EngineContext, 'admin' | 'gate'>, database: string): Promise<string> {
  return fingerprintAt({ ...e.admin, database }, e.gate);
}

/** The same fingerprint of any database pgx can connect to (an imported source's origin, on another server). */
export async function fingerprintAt(p: ConnParams, gate?: StatementGate): Promise<string> {
  const db = await connect(p, { gate });
  try {
    const [row] = await db.query<{ fp: string | null }>(
      `SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) AS fp FROM (
         SELECT c.relkind::text || ' ' || n.nspname || '.' || c.relname || '(' || coalesce((
                  SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' AS x
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
         UNION ALL
         SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
       ) s`,
    );
    return row!.fp ?? '';
  } finally {
    await db.close();
  }
}
