// The schema of a database as one text, for a test's "unchanged" check (schemaMd5) on a machine with no pg_dump
// (issue 39: `npm test` passes where there is no PostgreSQL program). A child node process (schemaMd5 is synchronous)
// reads the catalog with the repository's pg: every user relation with its owner and ACL, columns with type, default
// and nullability, constraints, indexes, views' and functions' definitions, sequences, types, triggers, policies.
// Coarser than pg_dump -s, but any DDL a test makes or must not make changes it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const USER_NS = `nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname !~ '^pg_(toast_)?temp_'`;

const QUERY = `
SELECT string_agg(l, E'\\n' ORDER BY l) AS schema FROM (
  SELECT format('ns %s %s %s', nspname, pg_get_userbyid(nspowner), nspacl) AS l FROM pg_namespace WHERE ${USER_NS}
  UNION ALL
  SELECT format('rel %s.%s %s %s %s %s', n.nspname, c.relname, c.relkind, pg_get_userbyid(c.relowner), c.relacl, c.relrowsecurity)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${USER_NS.replace(/nspname/g, 'n.nspname')}
  UNION ALL
  SELECT format('col %s.%s %s %s %s %s %s', n.nspname, c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
                a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE a.attnum > 0 AND NOT a.attisdropped AND ${USER_NS.replace(/nspname/g, 'n.nspname')}
  UNION ALL
  SELECT format('con %s.%s %s %s', n.nspname, conrelid::regclass, conname, pg_get_constraintdef(co.oid))
    FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE ${USER_NS.replace(/nspname/g, 'n.nspname')}
  UNION ALL
  SELECT format('idx %s', indexdef) FROM pg_indexes WHERE ${USER_NS.replace(/nspname/g, 'schemaname')}
  UNION ALL
  SELECT format('view %s.%s %s', schemaname, viewname, definition) FROM pg_views WHERE ${USER_NS.replace(/nspname/g, 'schemaname')}
  UNION ALL
  SELECT format('mview %s.%s %s', schemaname, matviewname, definition) FROM pg_matviews
  UNION ALL
  SELECT format('fn %s %s %s', p.oid::regprocedure, pg_get_userbyid(p.proowner), CASE WHEN p.prokind = 'a' THEN '' ELSE pg_get_functiondef(p.oid) END)
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_NS.replace(/nspname/g, 'n.nspname')}
  UNION ALL
  SELECT format('type %s.%s %s %s', n.nspname, t.typname, t.typtype,
                (SELECT string_agg(enumlabel, ',' ORDER BY enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid))
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
   WHERE t.typtype IN ('e', 'd', 'c') AND ${USER_NS.replace(/nspname/g, 'n.nspname')}
  UNION ALL
  SELECT format('trg %s', pg_get_triggerdef(t.oid)) FROM pg_trigger t WHERE NOT t.tgisinternal
  UNION ALL
  SELECT format('pol %s.%s %s %s %s', schemaname, tablename, policyname, qual, with_check) FROM pg_policies
  UNION ALL
  SELECT format('ext %s %s', extname, extversion) FROM pg_extension WHERE extname <> 'plpgsql'
) s`;

const script = (pgPath: string) => `
const pg = require(${JSON.stringify(pgPath)});
const c = new pg.Client();
c.connect()
  .then(() => c.query(${JSON.stringify(QUERY)}))
  .then((r) => { process.stdout.write(r.rows[0].schema ?? ''); return c.end(); })
  .catch((e) => { console.error(e.message); process.exit(1); });
`;

/** The schema text of `database` (libpq's environment in `env` names the server and credentials). */
export function schemaByCatalog(repo: string, database: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, ['-e', script(join(repo, 'node_modules', 'pg'))], {
    env: { ...env, PGDATABASE: database },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`reading the schema of ${database} failed: ${r.stderr}`);
  return r.stdout;
}
