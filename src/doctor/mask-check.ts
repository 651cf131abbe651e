// Masking state (decision 460): the [mask] rules, and whether pgx's copy of an imported source and the template were
// masked with the rules as they are now. A template that predates the rules (built unmasked, or with other rules)
// is a warning: branches cloned from it may hold values the rules now mask. Reads stamps only; changes nothing.
import { databaseInfo, templateName } from '../engine/inspect.js';
import { masking, rulesDigest } from '../mask/rules.js';
import { ok, skipNoServer, warn, type Check, type DoctorContext } from './types.js';

export async function maskCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('mask', ctx);
  const { source, mask: rules, project } = ctx.config;
  const file = ctx.config.file ?? '.pgx.toml';
  if (!source) return ok('mask', 'no [project] source: branches start empty, nothing to mask');
  const src = await databaseInfo(s.db, source);
  if (!src.exists) return ok('mask', `no "${source}" yet: nothing to mask`);
  const imported = src.stamp?.kind === 'source' ? src.stamp : undefined;
  const digest = rulesDigest(rules);
  const tpl = await databaseInfo(s.db, templateName(project, source));
  const tplMask = tpl.stamp?.kind === 'template' ? (tpl.stamp.mask ?? null) : undefined;
  const fix = imported
    ? 'pgx source sync (copies the origin again, masks it with the current rules, rebuilds the template)'
    : 'pgx template refresh (builds a masked template)';
  if (!digest) {
    if (imported && !('mask' in imported))
      return warn(
        'mask',
        `"${source}" was imported before pgx scanned imports for personal data, and ${file} has no [mask] rules`,
        `pgx source scan (lists the columns that look personal), then ${fix}`,
      );
    if (imported)
      return ok(
        'mask',
        `no [mask] rules; "${source}" ${imported.mask ? 'was masked at its import' : 'passed the personal-data scan at its import'}`,
      );
    return ok(
      'mask',
      `no [mask] rules: the template is a plain copy of your database "${source}" (\`pgx source scan\` lists the columns that look personal)`,
    );
  }
  const n = `${rules.length} [mask] rule(s), ${masking(rules).length} masking`;
  if (imported && imported.mask !== digest)
    return warn(
      'mask',
      `${n}; pgx's copy "${source}" was ${imported.mask ? 'masked with other rules' : 'imported without them'}: ` +
        `a new template of it is refused until it is synced`,
      fix,
    );
  if (tplMask !== undefined && tplMask !== digest)
    return warn(
      'mask',
      `${n}; the template predates them (${tplMask ? 'masked with other rules' : 'built unmasked'}): branches ` +
        `cloned from it may hold values the rules now mask`,
      fix,
    );
  return ok(
    'mask',
    `${n}; ${imported ? `"${source}" masked at its import` : 'the template is a masked copy of your database'}` +
      (tplMask !== undefined ? ', the template with the same rules' : ' (template not built yet)'),
  );
}
