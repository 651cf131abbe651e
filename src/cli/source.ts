// pgx source import: a project's existing development database becomes its source on pgx's server.
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { findDatabaseUrl } from '../dotenv.js';
import { withEngine } from '../engine/api.js';
import { PgxError } from '../errors.js';
import { setConfigSource } from '../init.js';
import { classifyInput, defaultDatabaseName } from '../source-input.js';
import { action, projectConfigFor, withCommon, type CommonOpts } from './common.js';

interface ImportOpts extends CommonOpts {
  from?: string;
  fromEnv?: string;
  into?: string;
  template?: boolean;
}

export function registerSourceCommands(program: Command): void {
  const source = program.command('source').description("the project's source database (what branches are cloned from)");
  withCommon(source.command('import').description("load a database (another server's, or a pg_dump file or directory) into pgx's server as the project's source"))
    .option('--from <url|file|dir>', 'postgres:// URL (pg_dump runs against it), a pg_dump file (-Fc, -Ft or plain SQL) or a pg_dump directory (-Fd)')
    .option('--from-env <var>', 'read the URL from this variable: the environment, else the project\'s .env / .env.local (keeps a password out of argv)')
    .option('--into <db>', 'database name on pgx\'s server (default: [project] source, else the source\'s own name)')
    .option('--no-template', 'do not build the template afterwards (the first branch then builds it)')
    .action(
      action<ImportOpts>(async (opts, out) => {
        if ((opts.from === undefined) === (opts.fromEnv === undefined)) throw new PgxError('USAGE', 'Pass one of --from <url|file|dir> or --from-env <var>.', 'e.g. `pgx source import --from-env DATABASE_URL`, or `pgx source import --from dump.sql`.');
        const config = projectConfigFor(opts);
        let from = opts.from;
        if (opts.fromEnv !== undefined) {
          const found = findDatabaseUrl(config.projectDir, opts.fromEnv);
          if (!found) throw new PgxError('USAGE', `No postgres:// URL in $${opts.fromEnv}, nor in .env / .env.local of ${config.projectDir}.`, 'Pass --from <url|file|dir> instead.');
          out.progress(`importing the database named by ${opts.fromEnv} (from ${found.from})`);
          from = found.value;
        } else if (/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/.test(from!)) {
          out.progress('warning: the --from URL holds a password, visible to other users in the process list; --from-env DATABASE_URL avoids that');
        }
        const input = classifyInput(from!, process.cwd());
        const into = opts.into ?? config.source ?? defaultDatabaseName(input);
        if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,62}$/.test(into)) throw new PgxError('USAGE', `"${into}" is not a database name pgx accepts.`, 'Use letters, digits and "_" (--into <db>).');
        const r = await withEngine(config, (e) => e.importSource({ input, into, progress: (m) => out.progress(m) }));
        let configUpdated = false;
        if (!config.source) {
          setConfigSource(config.file!, into);
          configUpdated = true;
        } else if (config.source !== into) {
          r.warnings.push(`[project] source in ${config.file} is "${config.source}", not "${into}": branches still clone "${config.source}"`);
        }
        let template: string | null = null;
        if (opts.template !== false && (configUpdated || config.source === into)) {
          const t = await withEngine(loadConfig({ cwd: config.projectDir }), (e) => e.refreshTemplate((m) => out.progress(m)));
          template = t.template;
        }
        for (const w of r.warnings) out.progress(`warning: ${w}`);
        const value = { ...r, config_updated: configUpdated ? config.file : null, template, next: 'pgx agent install claude' };
        out.result(value, () =>
          [
            `imported ${r.from} into "${r.database}" (${r.format}, ${r.items} items) in ${r.elapsed_ms} ms`,
            r.roles_created.length ? `  roles created (NOLOGIN, so ownership is kept): ${r.roles_created.join(', ')}` : null,
            configUpdated ? `  ${config.file}: [project] source = "${into}"` : null,
            template ? `  template ${template} built: new branches are clones of it` : null,
            `next: ${value.next}`,
          ]
            .filter(Boolean)
            .join('\n'),
        );
      }),
    );
}
