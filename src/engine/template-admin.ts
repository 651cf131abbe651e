// Housekeeping of templates: `pgx template ls|drop`, and gc of templates nobody uses. Only databases carrying a pgx
// template stamp (finished, or a build's `pgx:template-building:`) are ever listed or dropped.
//
// gc decision: a template is dropped once (1) no branch record and no warm-pool member names it, (2) its last refresh
// is older than the template grace (default 24 h), and (3) rebuilding it would not give the same snapshot anyway or
// is cheap: it is empty (no source: rebuilt in milliseconds), its source database is gone, or the source's schema
// fingerprint has moved on since. A project's in-step template of a real source is kept: rebuilding it is the slow
// first clone.
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import { forgetBuild, templateUse } from '../registry/template-builds.js';
import { keptBuildOids } from '../registry/fork-points.js';
import { dropReleasedBuilds } from './fork-point.js';
import { withTemplateLock } from '../registry/locks.js';
import * as catalog from '../server/catalog.js';
import type { EngineContext } from './context.js';
import { schemaFingerprint } from './fingerprint.js';
import { templateName, type TemplateStamp } from './template.js';

export interface TemplateInfo {
  name: string;
  project: string;
  source: string | null;
  state: 'ready' | 'building';
  method: TemplateStamp['method'] | null;
  fingerprint: string | null;
  refreshed_at: string | null;
  bytes: number;
  /** Branch records and warm-pool members cloned from it. */
  branches: number;
  /** The template this project's .pgx.toml uses now. */
  current: boolean;
}

export interface TemplateGcResult {
  templates_dropped: { name: string; reason: string }[];
  errors: { name: string; error: string }[];
}

export const TEMPLATE_GRACE_MS = 24 * 3_600_000;

/** The template a build or an aside belongs to: its lock is the template's (`<name>_b<6>`, `<name>_o<6>`). */
const lockedName = (name: string) => name.replace(/_[bo][a-z0-9]{6}$/, '');

/** Every stamped template on the server (`all`), or this project's. */
export async function listTemplates(e: EngineContext, opts: { all?: boolean } = {}): Promise<TemplateInfo[]> {
  const dbs = await catalog.stampedDatabasesOf(e.registry, ['template', 'building', 'pool']);
  const used = await templateUse(e.registry);
  for (const d of dbs) if (d.stamp.kind === 'pool') used.set(d.stamp.template, (used.get(d.stamp.template) ?? 0) + 1);
  const current = templateName(e.config.project, e.config.source);
  const out: TemplateInfo[] = [];
  for (const { name, stamp, bytes } of dbs) {
    if (stamp.kind !== 'template' && stamp.kind !== 'building') continue;
    if (!opts.all && stamp.project !== e.config.project) continue;
    const t = stamp.kind === 'template' ? stamp : undefined;
    out.push({
      name,
      project: stamp.project,
      source: t?.source ?? null,
      state: t ? 'ready' : 'building',
      method: t?.method ?? null,
      fingerprint: t?.fingerprint ?? null,
      refreshed_at: t?.refreshed_at ?? null,
      bytes,
      branches: used.get(name) ?? 0,
      current: name === current,
    });
  }
  return out;
}

/**
 * Drops one stamped template, under the lock its builds and refreshes hold (so never mid-build or mid-refresh).
 * Branches are independent copies: they keep working; the next new branch rebuilds the template. False: no such
 * database.
 */
export async function dropTemplate(e: EngineContext, name: string): Promise<boolean> {
  const reg = e.registry;
  return withTemplateLock(reg, lockedName(name), async () => {
    const info = await catalog.databaseInfo(reg, name);
    if (!info.exists) return false;
    if (info.stamp?.kind !== 'template' && info.stamp?.kind !== 'building') {
      throw new PgxError(
        'NOT_PGX_DATABASE',
        `Refusing to drop "${name}": it does not carry a pgx template stamp.`,
        'pgx only drops databases it created; `pgx template ls --all` lists its templates.',
      );
    }
    try {
      await catalog.dropDatabase(reg, name, { isTemplate: info.isTemplate });
    } catch (err) {
      // A clone from it was starting: it stays a template (connections were already off).
      if (info.isTemplate) await catalog.freezeAsTemplate(reg, name).catch(() => {});
      if (catalog.sqlstateOf(err) === catalog.SQLSTATE.OBJECT_IN_USE)
        throw new PgxError('BRANCH_FAILED', `Template "${name}" is being cloned right now.`, 'Retry in a moment.', {
          cause: err,
        });
      throw err;
    }
    await forgetBuild(reg, name); // a build leftover's record, if any
    return true;
  });
}

/** `pgx template drop [name]`: the one named (any project), else every template of this project. */
export async function dropTemplates(e: EngineContext, named?: string): Promise<string[]> {
  const names = named !== undefined ? [named] : (await listTemplates(e)).map((t) => t.name);
  const done: string[] = [];
  for (const n of names) if (await dropTemplate(e, n)) done.push(n);
  if (named !== undefined && !done.length)
    throw new PgxError('NOT_FOUND', `No database named "${named}".`, 'See `pgx template ls --all`.');
  return done;
}

/** The templates gc may drop (see the decision at the top), each with why. */
export async function unusedTemplates(
  e: EngineContext,
  graceMs = TEMPLATE_GRACE_MS,
): Promise<{ name: string; reason: string }[]> {
  const out: { name: string; reason: string }[] = [];
  const now = await records.serverNow(e.registry);
  for (const t of await listTemplates(e, { all: true })) {
    if (t.branches > 0 || t.state !== 'ready' || !t.refreshed_at) continue;
    if (now - Date.parse(t.refreshed_at) < graceMs) continue;
    if (!t.source) {
      out.push({ name: t.name, reason: 'empty, unused' });
      continue;
    }
    if (!(await catalog.databaseInfo(e.registry, t.source)).exists) {
      out.push({ name: t.name, reason: `source "${t.source}" is gone` });
      continue;
    }
    const fp = await schemaFingerprint(e, t.source).catch(() => undefined);
    if (fp !== undefined && fp !== t.fingerprint)
      out.push({ name: t.name, reason: `behind "${t.source}" (its schema changed)` });
  }
  return out;
}

export async function gcTemplates(e: EngineContext, graceMs = TEMPLATE_GRACE_MS): Promise<TemplateGcResult> {
  const out: TemplateGcResult = { templates_dropped: [], errors: [] };
  // The builds a refresh kept aside as fork points that no branch keeps any more (fork-point.ts).
  try {
    for (const name of await dropReleasedBuilds(e))
      out.templates_dropped.push({ name, reason: 'a fork point no branch keeps' });
  } catch (err) {
    out.errors.push({ name: '(kept fork points)', error: (err as Error).message });
  }
  for (const t of await unusedTemplates(e, graceMs)) {
    try {
      // Re-checked just before the drop: a branch may have been cloned from it since it was listed. (A clone starting
      // in the instant between would fail once, and the next ensure rebuilds the template.)
      if ((await templateUse(e.registry)).get(t.name)) continue;
      // A build a subagent's branch keeps as its fork point (fork-point.ts) stays while it does.
      const oid = await catalog.databaseOid(e.registry, t.name);
      if (oid && (await keptBuildOids(e.registry)).has(oid)) continue;
      if (await dropTemplate(e, t.name)) out.templates_dropped.push(t);
    } catch (err) {
      out.errors.push({ name: t.name, error: (err as Error).message });
    }
  }
  return out;
}
