// pgx source import | sync: a project's existing development database becomes its source on pgx's server (a copy),
// and is brought up to date from where it came from.
import type { Command } from 'commander';
import { loadConfig, type Config } from '../project/config.js';
import { findDatabaseUrl } from '../project/dotenv.js';
import { withEngine, type ImportResult, type SourceOrigin } from '../engine/api.js';
import { PgxError } from '../lib/errors.js';
import { setConfigSource } from '../project/init.js';
import { relativeTime, type Output } from '../lib/output.js';
import { classifyInput, defaultDatabaseName, type ImportInput } from '../project/source-input.js';
import { action, projectConfigFor, withCommon, type CommonOpts } from './common.js';

interface ImportOpts extends CommonOpts {
  from?: string;
  fromEnv?: string;
  into?: string;
  template?: boolean;
}

interface Resolved {
  input: ImportInput;
  origin: { env?: string; envFile?: string };
}

/** A variable as a hint names it: "$DATABASE_URL (from /p/.env)", "$X (from the environment)"; `remembered`: by sync. */
function envWhere(name: string, from: string, remembered = false): string {
  return `$${name} (from ${from.startsWith('$') ? 'the environment' : from}${remembered ? '; the variable `pgx source sync` remembered' : ''})`;
}

/** --from / --from-env to what to import; the URL's password stays in memory (pg_dump gets it in its environment). */
function resolveFrom(config: Config, opts: { from?: string; fromEnv?: string }, out: Output, verb: string): Resolved {
  let from = opts.from;
  const origin: Resolved['origin'] = {};
  if (opts.fromEnv !== undefined) {
    const found = findDatabaseUrl(config.projectDir, opts.fromEnv);
    if (!found)
      throw new PgxError(
        'USAGE',
        `No postgres:// URL in $${opts.fromEnv}, nor in .env / .env.local of ${config.projectDir}.`,
        'Pass --from <url|file|dir> instead.',
      );
    out.progress(`${verb} the database named by ${opts.fromEnv} (from ${found.from})`);
    from = found.value;
    origin.env = opts.fromEnv;
    origin.envFile = found.from;
  } else if (/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/.test(from!)) {
    out.progress(
      'warning: the --from URL holds a password, visible to other users in the process list; --from-env DATABASE_URL avoids that',
    );
  }
  return {
    input: classifyInput(from!, process.cwd(), origin.env ? envWhere(origin.env, origin.envFile!) : '--from'),
    origin,
  };
}

/** The remembered origin back to what to import: the variable read again, or the URL (its password from PGPASSWORD / ~/.pgpass), or the file. */
function resolveRemembered(config: Config, o: SourceOrigin, out: Output): Resolved {
  const since = `copied ${relativeTime(o.imported_at)}`;
  if (o.kind === 'env') {
    const found = findDatabaseUrl(config.projectDir, o.env!);
    if (!found)
      throw new PgxError(
        'USAGE',
        `The source was imported from $${o.env} (read from ${o.env_file ?? 'the environment'}), which now holds ` +
          `no postgres:// URL (not in the environment, nor in .env / .env.local of ${config.projectDir}).`,
        `Set ${o.env} again, or pass --from-env <var> or --from <url|file|dir>.`,
      );
    out.progress(`syncing from the database named by ${o.env} (from ${found.from}; ${since})`);
    return {
      input: classifyInput(found.value, config.projectDir, envWhere(o.env!, found.from, true)),
      origin: { env: o.env!, envFile: found.from },
    };
  }
  out.progress(`syncing from ${o.origin} (${since})`);
  return {
    input: classifyInput(
      o.origin,
      config.projectDir,
      `the origin \`pgx source sync\` remembered, ${o.origin} (its password from PGPASSWORD or ~/.pgpass; or ` +
        `pass --from / --from-env)`,
    ),
    origin: {},
  };
}

function maskLine(m: ImportResult['mask']): string | null {
  if (!m.columns && !m.proof)
    return m.personal ? `  ${m.personal} personal-looking column(s), each kept by a "keep" rule` : null;
  const also = [
    m.foreign_keys_checked && `${m.foreign_keys_checked} foreign key(s) over them re-checked`,
    m.matviews && `${m.matviews} materialized view(s) refreshed from them`,
    m.comments && `${m.comments} comment(s) masked`,
    m.large_objects && 'the large objects emptied',
  ].filter(Boolean);
  const p = m.proof;
  return (
    `  masked ${m.columns} column(s) in ${m.tables} table(s) before the copy was finished (${m.elapsed_ms} ` +
    `ms${also.length ? `; ${also.join('; ')}` : ''})` +
    (p
      ? `\n  checked the masked copy: ${p.rows} row(s) of ${p.relations} table(s) and view(s), ${p.comments} ` +
        `comment(s), nothing personal left (${p.elapsed_ms} ms${p.sampled.length ? `; ${p.sampled.join(', ')} read through a ${p.bound_mb} MB sample` : ''})`
      : '')
  );
}

/** Registered by cli/commands.ts under `pgx`. */
export const under = 'pgx';

export function register(program: Command): void {
  const source = program.command('source').description("the project's source database (what branches are cloned from)");
  withCommon(
    source
      .command('import')
      .description(
        "load a database (another server's, or a pg_dump file or directory) into pgx's server as the project's source",
      ),
  )
    .option(
      '--from <url|file|dir>',
      'postgres:// URL (pg_dump runs against it), a pg_dump file (-Fc, -Ft or plain SQL) or a pg_dump directory (-Fd)',
    )
    .option(
      '--from-env <var>',
      "read the URL from this variable: the environment, else the project's .env / .env.local (keeps a password out of argv)",
    )
    .option('--into <db>', "database name on pgx's server (default: [project] source, else the source's own name)")
    .option('--no-template', 'do not build the template afterwards (the first branch then builds it)')
    .action(
      action<ImportOpts>(async (opts, out) => {
        if ((opts.from === undefined) === (opts.fromEnv === undefined))
          throw new PgxError(
            'USAGE',
            'Pass one of --from <url|file|dir> or --from-env <var>.',
            'e.g. `pgx source import --from-env DATABASE_URL`, or `pgx source import --from dump.sql`.',
          );
        const config = projectConfigFor(opts);
        const { input, origin } = resolveFrom(config, opts, out, 'importing');
        const into = opts.into ?? config.source ?? defaultDatabaseName(input);
        if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,62}$/.test(into))
          throw new PgxError(
            'USAGE',
            `"${into}" is not a database name pgx accepts.`,
            'Use letters, digits and "_" (--into <db>).',
          );
        const r = await withEngine(config, (e) =>
          e.importSource({ input, into, origin, progress: (m) => out.progress(m) }),
        );
        let configUpdated = false;
        const elsewhere = !!config.source && config.source !== into;
        if (!config.source) {
          setConfigSource(config.file!, into);
          configUpdated = true;
        } else if (elsewhere) {
          r.warnings.push(
            `[project] source in ${config.file} is "${config.source}", not "${into}": branches still clone "${config.source}"`,
          );
        }
        let template: string | null = null;
        if (opts.template !== false && !elsewhere) {
          const t = await withEngine(loadConfig({ cwd: config.projectDir }), (e) =>
            e.refreshTemplate((m) => out.progress(m)),
          );
          template = t.template;
        }
        for (const w of r.warnings) out.progress(`warning: ${w}`);
        // Imported beside the configured source: the next step is making it the source, not installing the hooks.
        const next = elsewhere
          ? `set [project] source = "${into}" in ${config.file} to clone it (its template is built by the first branch, ` +
            `or \`pgx template refresh\`)`
          : 'pgx agent install claude';
        const value = { ...r, config_updated: configUpdated ? config.file : null, template, next };
        out.result(value, () =>
          [
            `imported ${r.from} into "${r.database}" (${r.format}, ${r.items} items, by ${r.method}: ${r.method_why}) in ${r.elapsed_ms} ms`,
            maskLine(r.mask),
            r.roles_created.length
              ? `  roles created (NOLOGIN, so ownership is kept): ${r.roles_created.join(', ')}`
              : null,
            configUpdated ? `  ${config.file}: [project] source = "${into}"` : null,
            template ? `  template ${template} built: new branches are clones of it` : null,
            `  a copy: later changes to the origin reach it with \`pgx source sync\` ` +
              `(pgx remembers ${r.origin.kind === 'env' ? `$${r.origin.env}` : r.origin.origin}, never a password)`,
            `next: ${value.next}`,
          ]
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );

  withCommon(
    source
      .command('scan')
      .description(
        'list the columns that look like personal data and the [mask] rule each has, without copying anything ' +
          '(import and sync refuse while one has no rule)',
      ),
  )
    .option('--from <url>', 'scan this postgres:// URL (the database you would import) instead of [project] source')
    .option('--from-env <var>', 'read the URL to scan from this variable (the environment, else .env / .env.local)')
    .action(
      action<ImportOpts>(async (opts, out) => {
        if (opts.from !== undefined && opts.fromEnv !== undefined)
          throw new PgxError(
            'USAGE',
            'Pass at most one of --from <url> or --from-env <var>.',
            'Without either, pgx scans [project] source on its server.',
          );
        const config = projectConfigFor(opts);
        let conn: ImportInput['conn'];
        if (opts.from !== undefined || opts.fromEnv !== undefined) {
          const { input } = resolveFrom(config, opts, out, 'scanning');
          if (input.kind !== 'url')
            throw new PgxError(
              'USAGE',
              `${input.display} is a dump: pgx can only scan it by restoring it.`,
              '`pgx source import --from <file>` restores it into a private copy, scans that and refuses (dropping ' +
                'the copy) before anything is made from it; or scan the database the dump came from (--from <url>).',
            );
          conn = input.conn;
        }
        const r = await withEngine(config, (e) => e.scanSource({ conn, progress: (m) => out.progress(m) }));
        const refuse = r.unruled.length > 0 || r.problems.length > 0;
        out.result({ ...r, would_refuse: refuse }, () =>
          [
            `scanned "${r.database}": ${r.tables} table(s), ${r.columns} column(s); ${r.personal.length} look personal, ` +
              `${r.unruled.length} without a rule; ${r.rules} rule(s) in [mask]`,
            ...r.personal.map(
              (f) =>
                `  ${f.rule === null ? 'NO RULE ' : `${f.rule.padEnd(8)}`} ${f.key} (${f.type}): ${f.why.join('; ')}`,
            ),
            ...r.problems.map((p) => `  BAD RULE "${p.key}": ${p.problem}`),
            refuse
              ? r.unruled.length
                ? `import and sync refuse until each column above has a rule; reviewed, paste into ${config.file ?? '.pgx.toml'}:\n\n${r.block}\n`
                : `import and sync refuse until the rules above are fixed`
              : 'import and sync would go ahead: every personal-looking column has a rule',
          ].join('\n'),
        );
      }),
    );

  withCommon(
    source
      .command('sync')
      .description(
        're-import [project] source from where `pgx source import` copied it, in place: a new copy replaces the ' +
          'old one, the template is rebuilt from it',
      ),
  )
    .option(
      '--from <url|file|dir>',
      'sync from this origin instead of the remembered one (it is remembered from now on)',
    )
    .option(
      '--from-env <var>',
      "read the origin's URL from this variable (the environment, else .env / .env.local) instead of the remembered one",
    )
    .option(
      '--no-template',
      'do not rebuild the template afterwards (the doctor then says it is behind; `pgx template refresh` rebuilds it)',
    )
    .action(
      action<ImportOpts>(async (opts, out) => {
        if (opts.from !== undefined && opts.fromEnv !== undefined)
          throw new PgxError(
            'USAGE',
            'Pass at most one of --from <url|file|dir> or --from-env <var>.',
            'Without either, pgx syncs from the origin it remembered at the import.',
          );
        const config = projectConfigFor(opts);
        if (!config.source)
          throw new PgxError(
            'USAGE',
            `There is no [project] source in ${config.file ?? '.pgx.toml'} to sync: branches start from an empty database.`,
            'Import your development database first: `pgx source import --from-env DATABASE_URL` (or --from <url|file|dir>).',
          );
        const r = await withEngine(config, async (e) => {
          let resolved: Resolved;
          if (opts.from !== undefined || opts.fromEnv !== undefined)
            resolved = resolveFrom(config, opts, out, 'syncing from');
          else {
            const o = await e.sourceOrigin();
            if (!o)
              throw new PgxError(
                'USAGE',
                `pgx does not know where "${config.source}" came from: it was not imported by this pgx (or by one that ` +
                  `remembered origins).`,
                'Pass the origin once: `pgx source sync --from-env DATABASE_URL` (or --from <url|file|dir>); it is remembered from then on.',
              );
            resolved = resolveRemembered(config, o, out);
          }
          return e.syncSource({ ...resolved, progress: (m) => out.progress(m), template: opts.template !== false });
        });
        for (const w of r.warnings) out.progress(`warning: ${w}`);
        if (r.template_error)
          out.progress(`warning: the source is synced, but the template was not rebuilt: ${r.template_error}`);
        const next = r.template ? null : 'pgx template refresh';
        out.result({ ...r, next }, () =>
          [
            `synced "${r.database}" from ${r.from} (${r.format}, ${r.items} items, by ${r.method}: ${r.method_why}) in ${r.elapsed_ms} ms`,
            maskLine(r.mask),
            r.old_copy_dropped
              ? `  the old copy was dropped (nothing uses it: branches are clones of the template)`
              : null,
            r.old_copy_left
              ? `  the old copy ${r.old_copy_left} could not be dropped yet; the next sync drops it`
              : null,
            r.template
              ? `  template ${r.template.template} rebuilt by ${r.template.method}: new branches get the origin's current ` +
                `schema and data${r.template.pool_retired ? ` (${r.template.pool_retired} warm-pool member(s) of the old template retired)` : ''}`
              : null,
            '  existing branches keep what they had',
            next ? `next: ${next}` : null,
          ]
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );
}
