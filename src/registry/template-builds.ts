// Template builds: a build's name is recorded BEFORE its database is created, as a branch's is, so that a build killed
// before its stamp leaves a database that is provably pgx's (its name is here) rather than an unstamped stranger. And
// which templates the branch records still name: template housekeeping never drops one in use.
import type { RegistryDb } from './connection.js';
import { q } from './records.js';

export async function recordBuild(db: RegistryDb, name: string, template: string, project: string): Promise<void> {
  await q(db, 'INSERT INTO pgx_template_build (name, template, project) VALUES ($1, $2, $3)', [
    name,
    template,
    project,
  ]);
}

export async function forgetBuild(db: RegistryDb, name: string): Promise<void> {
  await q(db, 'DELETE FROM pgx_template_build WHERE name = $1', [name]);
}

/** The recorded builds of a template (under its lock: none of them is running). */
export async function buildsOf(db: RegistryDb, template: string): Promise<string[]> {
  return (
    await q<{ name: string }>(db, 'SELECT name FROM pgx_template_build WHERE template = $1 ORDER BY name', [template])
  ).map((r) => r.name);
}

/** How many branch records name each template (template housekeeping: a template in use is never gc'd). */
export async function templateUse(db: RegistryDb): Promise<Map<string, number>> {
  const rows = await q<{ template: string; n: number }>(
    db,
    'SELECT template, count(*)::int AS n FROM pgx_branch WHERE template IS NOT NULL GROUP BY template',
  );
  return new Map(rows.map((r) => [r.template, r.n]));
}
