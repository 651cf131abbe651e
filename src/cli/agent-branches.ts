// pgx agent up | ls | down | forget | gc: a branch's life from the command line.
import { InvalidArgumentError, type Command } from 'commander';
import { PgxError } from '../lib/errors.js';
import { parseDuration } from '../project/config-values.js';
import { templateInsteadWarning, withEngine, type Selector } from '../engine/api.js';
import { renderExports, shellExports } from '../server/local-access.js';
import { paint, relativeTime, table } from '../lib/output.js';
import { poolLine } from './agent-pool.js';
import {
  action,
  ANYWHERE_HELP,
  configFor,
  forkFrom,
  FROM_HELP,
  projectConfigFor,
  targetFrom,
  withCommon,
  type CommonOpts,
  type TargetOpts,
} from './common.js';
import { pruneSessionRecords } from '../hooks/claude/session-claude-code.js';
import { changeNotes, foreignNotes, frozenLines, gcNothing, stateColor, untilText } from './branch-lines.js';
import { downProject } from './agent-down-project.js';

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  withCommon(agent.command('up').description('ensure a branch and print its connection environment (no password)'))
    .option('--agent <id>', 'a Claude Code subagent id')
    .option('--id <id>', 'your own branch id')
    .option('--session <id>', 'session id (a session branch, or the session of --agent)')
    .option('--anywhere', ANYWHERE_HELP)
    .option('--from <what>', FROM_HELP)
    .action(
      action<CommonOpts & TargetOpts & { anywhere?: boolean; from?: string }>(async (opts, out) => {
        const config = projectConfigFor(opts);
        const t = targetFrom(opts);
        const r = await withEngine(config, (e) => e.ensure(t, { from: forkFrom(opts.from, t) }));
        // The template in place of the session's state ([agent] fork_fallback): said on stderr, and in `fork.miss`.
        if (r.fork?.miss) process.stderr.write(templateInsteadWarning(r.fork.miss));
        // The password goes into a 0600 passfile (PGPASSFILE), so `eval "$(pgx agent up …)"; psql` connects.
        const x = shellExports(config.home, r.conn);
        // With branch roles these are the branch role's credentials (PGUSER = the role), never the admin's.
        const value = {
          branch: r.branch,
          role: r.record.role,
          fresh: r.fresh,
          method: r.method,
          parent: r.record.parent ?? null,
          fork: r.fork ?? null,
          elapsed_ms: r.elapsed_ms,
          env: x.env,
          passfile: x.passfile,
          password_env: r.conn.password ? 'PGPASSFILE (not printed)' : null,
        };
        out.result(value, () => renderExports(x));
      }),
    );

  withCommon(agent.command('ls').description('list branches of this project (--all: every project on the server)'))
    .option('--all', 'every project and host')
    .action(
      action<CommonOpts & { all?: boolean }>(async (opts, out) => {
        // Outside a project, ls of "this project" would list a project named after the directory (as exec refuses
        // to make one): the same exit 3 and hint; --all lists every project from anywhere.
        const config = opts.all ? configFor(opts) : projectConfigFor(opts);
        const { branches, pool, frozen } = await withEngine(config, async (e) => ({
          branches: await e.list({ all: opts.all }),
          pool: await e.poolStatus(),
          frozen: await e.frozenCopies({ all: opts.all }),
        }));
        out.result({ branches, pool, frozen }, () => {
          if (!branches.length)
            return (
              paint(`no branches for project "${config.project}"${opts.all ? '' : ' (try --all)'}`, 'dim') +
              frozenLines(frozen) +
              `\n${poolLine(pool)}`
            );
          return (
            table(
              [
                'NAME',
                'AGENT',
                'SESSION',
                'HOST',
                'STATE',
                'DEADLINE',
                'DEADLINE_KIND',
                ...(opts.all ? ['PROJECT'] : []),
              ],
              branches.map((b) => [
                b.name,
                b.agent_id ?? (b.id ? `id:${b.id}` : null),
                b.session_id?.slice(0, 8),
                b.host,
                stateColor(b.state, b.exists),
                relativeTime(b.deadline),
                b.deadline_kind,
                ...(opts.all ? [b.project] : []),
              ]),
            ) +
            changeNotes(branches) +
            frozenLines(frozen) +
            `\n${poolLine(pool)}`
          );
        });
      }),
    );

  withCommon(
    agent.command('down').description('terminate backends, then retire (or drop with --now) the named branches'),
  )
    .option('--agent <id>', "a subagent's branches (any session, any host)")
    .option('--id <id>', 'an exec --id branch (any host)')
    .option('--branch <name>', 'a branch by database name (refused unless it carries the pgx stamp)')
    .option('--session <id>', "a session's own branch and its subagents' branches")
    .option('--project', 'every branch of this project made on this host (lists them, then asks, or --yes)')
    .option('--now', 'drop immediately instead of retiring with the grace period')
    .option('--yes', 'with --project: do not ask')
    .action(
      action<CommonOpts & TargetOpts & { branch?: string; project?: boolean; now?: boolean; yes?: boolean }>(
        async (opts, out) => {
          const given = ['agent', 'id', 'branch', 'session', 'project'].filter(
            (k) => (opts as Record<string, unknown>)[k] !== undefined,
          );
          if (given.length !== 1)
            throw new PgxError(
              'USAGE',
              'Pass exactly one of --agent, --id, --branch, --session, --project.',
              'e.g. `pgx agent down --id demo`, or `pgx agent down --project --now` for every branch of this project.',
            );
          if (opts.yes && !opts.project)
            throw new PgxError(
              'USAGE',
              '--yes only applies to --project.',
              '`pgx agent down --project --yes` retires every branch of this project without asking.',
            );
          if (opts.project) return downProject(opts, out);
          const config = configFor(opts);
          const t = targetFrom({ agent: opts.agent, id: opts.id, session: opts.session }, {}); // validates the ids
          const sel: Selector =
            opts.branch !== undefined
              ? { branch: opts.branch }
              : t.agentId !== undefined
                ? { agent: t.agentId }
                : t.execId !== undefined
                  ? { id: t.execId }
                  : { session: t.sessionId! };
          const { results, deadlines } = await withEngine(config, async (e) => {
            const results = await e.down(sel, { now: opts.now });
            // an already retiring branch (`exec --id` retires its branch as soon as the command ends): its deadline
            const retiring = results.some((r) => r.action === 'already-retiring') ? await e.list() : [];
            return { results, deadlines: new Map(retiring.map((b) => [b.name, b.deadline])) };
          });
          for (const r of results.filter((x) => x.role_note))
            out.progress(`warning: ${r.role_note} (\`pgx agent doctor\` lists it)`);
          const flag =
            opts.branch !== undefined
              ? `--branch ${opts.branch}`
              : t.agentId !== undefined
                ? `--agent ${t.agentId}`
                : t.execId !== undefined
                  ? `--id ${t.execId}`
                  : `--session ${t.sessionId}`;
          const branches = results.map((r) =>
            r.action === 'already-retiring' ? { ...r, deadline: deadlines.get(r.name) ?? null } : r,
          );
          const retiring = branches.filter((r) => r.action === 'already-retiring');
          const next = retiring.length ? `pgx agent down ${flag} --now` : null;
          out.result(
            { branches, next },
            () =>
              table(
                ['NAME', 'ACTION', 'TERMINATED', 'REMAINING'],
                results.map((r) => [r.name, r.action, String(r.backends_terminated), String(r.backends_remaining)]),
              ) +
              foreignNotes(results) +
              retiring
                .map(
                  (r) =>
                    `\n${r.name} is already retiring until ${untilText((r as { deadline?: string | null }).deadline)}; gc ` +
                    `drops it then. To drop it now: ${next}`,
                )
                .join(''),
          );
        },
      ),
    );

  withCommon(
    agent
      .command('forget')
      .description("delete a branch's registry record only (its database, not pgx's, is left as it is)"),
  )
    .option('--agent <id>', "a subagent's records (any session, any host)")
    .option('--id <id>', 'an exec --id record (any host)')
    .option('--branch <name>', 'a record by its database name')
    .action(
      action<CommonOpts & TargetOpts & { branch?: string }>(async (opts, out) => {
        const given = ['agent', 'id', 'branch'].filter((k) => (opts as Record<string, unknown>)[k] !== undefined);
        if (given.length !== 1)
          throw new PgxError(
            'USAGE',
            'Pass exactly one of --agent, --id, --branch.',
            'e.g. `pgx agent forget --branch exec_host_demo`.',
          );
        const config = configFor(opts);
        const t = targetFrom({ agent: opts.agent, id: opts.id }, {});
        const sel: Selector =
          opts.branch !== undefined
            ? { branch: opts.branch }
            : t.agentId !== undefined
              ? { agent: t.agentId }
              : { id: t.execId! };
        const results = await withEngine(config, (e) => e.forget(sel));
        out.result({ branches: results }, () =>
          results
            .map((r) => `${r.name}: record ${r.action}; the database under that name, if any, was not touched`)
            .join('\n'),
        );
      }),
    );

  withCommon(agent.command('gc').description('drop branches past their deadline (idle TTL or grace)'))
    .option('--limit <n>', 'at most n branches', parseLimit, 1000)
    .option(
      '--template-grace <duration>',
      'drop templates no branch uses once unrefreshed this long (and empty, or their source gone or changed)',
      '24h',
    )
    .action(
      action<CommonOpts & { limit: number; templateGrace: string }>(async (opts, out) => {
        const config = configFor(opts);
        const graceMs = templateGrace(opts.templateGrace);
        pruneSessionRecords(config.home); // sessions' Claude Code versions past their TTL (SessionStart bounds them too)
        const r = await withEngine(config, async (e) => {
          const done = await e.gcAll(opts.limit, graceMs);
          // what is left to wait for: this project's retiring branches and their deadlines (the "nothing" case says so)
          const retiring = done.dropped.length
            ? []
            : (await e.list())
                .filter((b) => b.state === 'retiring')
                .map((b) => ({ name: b.name, deadline: b.deadline }));
          return { ...done, retiring };
        });
        out.result(
          r,
          () =>
            (r.dropped.length
              ? table(
                  ['NAME', 'ACTION', 'TERMINATED'],
                  r.dropped.map((d) => [d.name, d.action, String(d.backends_terminated)]),
                )
              : gcNothing(r.retiring)) +
            foreignNotes(r.foreign) +
            r.frozen_dropped.map((f) => `\nfrozen copy ${f} dropped`).join('') +
            r.roles_dropped.map((x) => `\nbranch role ${x} dropped (left by an earlier drop)`).join('') +
            r.templates_dropped.map((t) => `\ntemplate ${t.name} dropped: ${t.reason}`).join('') +
            r.errors.map((x) => `\nerror: ${x.name}: ${x.error}`).join('') +
            r.dropped
              .filter((d) => d.role_note)
              .map((d) => `\nwarning: ${d.role_note}`)
              .join(''),
        );
        return r.errors.length ? 7 : 0;
      }),
    );
}

function templateGrace(v: string): number {
  try {
    return parseDuration(v);
  } catch (e) {
    throw new PgxError(
      'USAGE',
      `--template-grace: ${(e as Error).message}.`,
      'e.g. --template-grace 24h (0s: any unused template).',
    );
  }
}

function parseLimit(v: string): number {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('a whole number (0 or more) is needed.'); // commander: exit 2
  return Number(v);
}
