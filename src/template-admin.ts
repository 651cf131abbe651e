// Housekeeping of templates: `pgx template ls|drop`, and gc of templates nobody uses. Only databases carrying a pgx
// template stamp (finished, or a build's `pgx:template-building:`) are ever listed or dropped.
//
// gc decision: a template is dropped once (1) no branch record names it, (2) its last refresh is older than the
// template grace (default 24 h), and (3) rebuilding it would not give the same snapshot anyway or is cheap: it is
// empty (no source: rebuilt in milliseconds), its source database is gone, or the source's schema fingerprint has
// moved on since. A project's in-step template of a real source is kept: rebuilding it is the slow first clone.
import { createHash } from 'node:crypto';
import type { Engine } from './engine/context.js';
import { schemaFingerprint } from './engine/fingerprint.js';
import { databaseInfo } from './engine/stamp.js';
import { parseTemplateStamp, TEMPLATE_BUILDING_PREFIX, templateName, type TemplateStamp } from './engine/template.js';
import { PgxError } from './errors.js';
import { withAdvisoryLock } from './registry.js';

export interface TemplateInfo {
  name: string;
  project: string | null;
  source: string | null;
  state: 'ready' | 'building';
  method: TemplateStamp['method'] | null;
  fingerprint: string | null;
  refreshed_at: string | null;
  bytes: number;
  /** Branch records cloned from it (from the registry). */
  branches: number;
  /** The template this project's .pgx.toml uses now. */
  current: boolean;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function readStamp(comment: string | null): { state: 'ready' | 'building'; stamp?: TemplateStamp; project: string | null } | undefined {
  const stamp = parseTemplateStamp(comment);
  if (stamp) return { state: 'ready', stamp, project: stamp.project };
  if (comment?.startsWith(TEMPLATE_BUILDING_PREFIX)) {
    try {
      return { state: 'building', project: (JSON.parse(comment.slice(TEMPLATE_BUILDING_PREFIX.length)) as { project?: string }).project ?? null };
    } catch {
      return { state: 'building', project: null };
    }
  }
  return undefined;
}

/** Every stamped template on the server (`all`), or this project's. */
export async function listTemplates(e: Engine, opts: { all?: boolean } = {}): Promise<TemplateInfo[]> {
  const rows = await e.db.query<{ datname: string; comment: string | null; bytes: string }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment, pg_database_size(oid)::text AS bytes FROM pg_database
      WHERE shobj_description(oid, 'pg_database') LIKE 'pgx:template:%' OR shobj_description(oid, 'pg_database') LIKE 'pgx:template-building:%' ORDER BY datname`,
  );
  const used = new Map((await e.db.query<{ template: string; n: number }>('SELECT template, count(*)::int AS n FROM pgx_branch WHERE template IS NOT NULL GROUP BY template')).map((r) => [r.template, r.n]));
  const current = templateName(e.config.project, e.config.source);
  const out: TemplateInfo[] = [];
  for (const r of rows) {
    const s = readStamp(r.comment);
    if (!s) continue;
    if (!opts.all && s.project !== e.config.project) continue;
    out.push({
      name: r.datname,
      project: s.project,
      source: s.stamp?.source ?? null,
      state: s.state,
      method: s.stamp?.method ?? null,
      fingerprint: s.stamp?.fingerprint ?? null,
      refreshed_at: s.stamp?.refreshed_at ?? null,
      bytes: Number(r.bytes),
      branches: used.get(r.datname) ?? 0,
      current: r.datname === current,
    });
  }
  return out;
}

/**
 * Drops one stamped template, under the advisory lock a build of it holds (so never mid-build or mid-refresh).
 * Branches are independent copies: they keep working; the next new branch rebuilds the template.
 */
export async function dropTemplate(e: Engine, name: string): Promise<boolean> {
  return withAdvisoryLock(e.db, sha(name.replace(/_[bo][a-z0-9]{6}$/, '')), async () => {
    const info = await databaseInfo(e.db, name);
    if (!info.exists) return false;
    if (!readStamp(info.comment)) {
      throw new PgxError('NOT_PGX_DATABASE', `Refusing to drop "${name}": it does not carry a pgx template stamp.`, 'pgx only drops databases it created; `pgx template ls --all` lists its templates.');
    }
    if (info.isTemplate) await e.db.query(`ALTER DATABASE ${e.db.ident(name)} WITH IS_TEMPLATE false`);
    try {
      await e.db.query(`DROP DATABASE ${e.db.ident(name)}`);
    } catch (err) {
      if (info.isTemplate) await e.db.query(`ALTER DATABASE ${e.db.ident(name)} WITH IS_TEMPLATE true`).catch(() => {});
      if ((err as { code?: string }).code === '55006') throw new PgxError('BRANCH_FAILED', `Template "${name}" is being cloned right now.`, 'Retry in a moment.', { cause: err });
      throw err;
    }
    return true;
  });
}

export const TEMPLATE_GRACE_MS = 24 * 3_600_000;

/** The templates gc may drop (see the decision at the top), each with why. */
export async function unusedTemplates(e: Engine, graceMs = TEMPLATE_GRACE_MS): Promise<{ name: string; reason: string }[]> {
  const out: { name: string; reason: string }[] = [];
  const [{ now }] = (await e.db.query<{ now: Date }>('SELECT now() AS now')) as [{ now: Date }];
  for (const t of await listTemplates(e, { all: true })) {
    if (t.branches > 0 || t.state !== 'ready' || !t.refreshed_at) continue;
    if (new Date(now).getTime() - Date.parse(t.refreshed_at) < graceMs) continue;
    if (!t.source) {
      out.push({ name: t.name, reason: 'empty, unused' });
      continue;
    }
    if (!(await databaseInfo(e.db, t.source)).exists) {
      out.push({ name: t.name, reason: `source "${t.source}" is gone` });
      continue;
    }
    const fp = await schemaFingerprint(e, t.source).catch(() => undefined);
    if (fp !== undefined && fp !== t.fingerprint) out.push({ name: t.name, reason: `behind "${t.source}" (its schema changed)` });
  }
  return out;
}

export async function gcTemplates(e: Engine, graceMs = TEMPLATE_GRACE_MS): Promise<{ dropped: { name: string; reason: string }[]; errors: { name: string; error: string }[] }> {
  const dropped: { name: string; reason: string }[] = [];
  const errors: { name: string; error: string }[] = [];
  for (const t of await unusedTemplates(e, graceMs)) {
    try {
      // Re-checked just before the drop: a branch may have been cloned from it since it was listed. (A clone starting
      // in the instant between would fail once and the next ensure rebuilds the template.)
      const [{ n }] = (await e.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pgx_branch WHERE template = $1', [t.name])) as [{ n: number }];
      if (n === 0 && (await dropTemplate(e, t.name))) dropped.push(t);
    } catch (err) {
      errors.push({ name: t.name, error: (err as Error).message });
    }
  }
  return { dropped, errors };
}
