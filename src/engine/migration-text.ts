// A migration as the SQL file `pgx agent diff --sql` prints and `pgx agent merge --dry-run` shows: a header that names
// what is left out and why, risky statements marked, one transaction. Names in comments come from the user's
// database: control characters are escaped there, so a name can never end a comment and become a statement.
import { quoteLiteral } from '../server/catalog.js';
import { TEXT_FORMS } from '../server/merge-catalog.js';
import type { LeftOut } from './row-diff.js';
import type { RowStatement } from './row-statements.js';
import type { SchemaMigration } from './schema-plan.js';

export interface MigrationParts {
  title: string;
  schema: SchemaMigration;
  /** Before the rows: constraints deferred, triggers off. After: triggers on, sequences moved. */
  before: string[];
  rows: RowStatement[];
  after: string[];
  leftOut: LeftOut[];
  unmodeled: string[];
}

/** A name or message safe inside a `--` comment: no line break, no other control character. */
export function commentSafe(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function renderMigration(m: MigrationParts): string {
  const lines = [`-- ${commentSafe(m.title)}`];
  const risky = m.schema.steps.filter((s) => s.risks.length).length;
  lines.push(
    `-- ${m.schema.steps.length} schema statement(s) by @supabase/pg-delta 1.0.0-alpha.34 (scope: database, no role is touched); ` +
      `${m.rows.length} row statement(s), rows matched by primary key.`,
  );
  if (risky)
    lines.push(
      `-- ${risky} risky statement(s), each marked "-- RISK:" (a table rewrite, a drop, data loss): read them first.`,
    );
  const differing = m.leftOut.filter((l) => l.changed !== false);
  if (differing.length) {
    lines.push("-- LEFT OUT: these tables' row changes are NOT in this migration (compared by a fingerprint only):");
    for (const l of differing)
      lines.push(`--   ${commentSafe(l.table)}: ${l.why}${l.changed ? '; its rows differ' : '; not compared'}`);
  }
  if (m.unmodeled.length) {
    lines.push('-- NOT MODELLED by the schema differ (changes to these are not in this migration):');
    for (const u of m.unmodeled) lines.push(`--   ${commentSafe(u)}`);
  }
  lines.push('BEGIN;');
  for (const s of [...m.schema.settings, ...TEXT_FORMS.map(([name, value]) => ({ name, value }))])
    lines.push(`SELECT pg_catalog.set_config(${quoteLiteral(s.name)}, ${quoteLiteral(s.value)}, true);`);
  if (m.schema.steps.length) lines.push('', '-- schema');
  for (const s of m.schema.steps) {
    if (s.risks.length) lines.push(`-- RISK: ${s.risks.join(', ')}`);
    if (s.outsideTransaction)
      lines.push('-- NOTE: this statement cannot run inside a transaction block: run it on its own');
    lines.push(`${s.sql};`);
  }
  if (m.rows.length || m.after.length) lines.push('', '-- rows');
  for (const s of m.before) lines.push(`${s};`);
  for (const s of m.rows) lines.push(`${s.sql};`);
  for (const s of m.after) lines.push(`${s};`);
  lines.push('COMMIT;', '');
  return lines.join('\n');
}
