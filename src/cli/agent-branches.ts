// pgx agent up | ls | down | forget | gc: a branch's life from the command line.
import { InvalidArgumentError, type Command } from 'commander';
import { EXIT, isPgxError, PgxError } from '../lib/errors.js';
import { parseDuration } from '../project/config-values.js';
import { withEngine, type FrozenCopySummary, type Selector } from '../engine/api.js';
import { renderExports, shellExports } from '../server/local-access.js';
import { clockTime, paint, relativeTime, table, type Output } from '../lib/output.js';
import { confirmDestructive } from './confirm.js';
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

/** The frozen copies forks clone (one per state of a parent branch): what each is a copy of, its size, its state. */
function frozenLines(frozen: FrozenCopySummary[]): string {
  return frozen
    .map((f) => {
      const what =
        f.state === 'making'
          ? "in the making (or a killed maker's: the next fork or gc drops it)"
          : `${f.method}, ${Math.round((f.bytes ?? 0) / 1048576)} MB${f.reusable ? '' : ', not reusable'}`;
      return `\nfrozen copy ${f.name} of ${f.parent}: ${what}`;
    })
    .join('');
}

/** "2026-12-05 10:42:13 (in 9m 58s)": a deadline as a date and time and how far off it is. */
function untilText(deadline: string | null | undefined): string {
  return deadline ? clockTime(deadline) : 'its deadline';
}

/** gc found nothing to drop: say when the retiring branches will be, and how to drop them now. */
function gcNothing(retiring: { name: string; deadline: string }[]): string {
  if (!retiring.length) return 'nothing past its deadline';
  const soonest = [...retiring].sort((a, b) => a.deadline.localeCompare(b.deadline));
  const shown = soonest
    .slice(0, 5)
    .map((b) => `  ${b.name}  until ${untilText(b.deadline)}`)
    .join('\n');
  return (
    `nothing past its deadline; ${retiring.length} retiring branch(es) wait for their grace period to end:\n${shown}${retiring.length > 5 ? '\n  …' : ''}\nTo ` +
    `drop them now: pgx agent down --project --now (or --id/--agent/--branch … --now for one)`
  );
}

/**
 * `down --project`: every branch of this project made on THIS host (another host's branches on a shared server are
 * another machine's live work, decision 135), listed, confirmed, then retired (or dropped with --now).
 */
async function downProject(opts: CommonOpts & { now?: boolean; yes?: boolean }, out: Output): Promise<number | void> {
  const config = projectConfigFor(opts);
  const all = await withEngine(config, (e) => e.list());
  const mine = all.filter((b) => b.host === config.host);
  const elsewhere = all.length - mine.length;
  const verb = opts.now ? 'drop' : 'retire';
  const note = elsewhere ? ` (${elsewhere} branch(es) of other hosts are left alone: \`pgx agent ls\` shows them)` : '';
  if (!mine.length) {
    out.result(
      { branches: [], planned: [], left_other_hosts: elsewhere, now: !!opts.now },
      () => `no branches of project "${config.project}" on host ${config.host}${note}`,
    );
    return;
  }
  const listing = table(
    ['NAME', 'KIND', 'STATE', 'DEADLINE'],
    mine.map((b) => [b.name, b.kind, b.state, relativeTime(b.deadline)]),
  );
  const go = await confirmDestructive({
    yes: opts.yes,
    json: opts.json,
    refusal: `--project would ${verb} ${mine.length} branch(es) of project "${config.project}" on host ${config.host}${note}:`,
    header:
      `pgx agent down --project ${opts.now ? 'drops' : 'retires'} ${mine.length} branch(es) of project "${config.project}" ` +
      `on host ${config.host}${note}:`,
    what: listing,
    question: `${verb} them? [y/N] `,
  });
  if (!go) {
    out.progress(`nothing ${opts.now ? 'dropped' : 'retired'}`);
    return EXIT.usage;
  }
  if (!opts.json) out.progress(`${opts.now ? 'dropping' : 'retiring'} ${mine.length} branch(es) …`);
  const results = await withEngine(config, async (e) => {
    const done = [];
    for (const b of mine) {
      try {
        done.push(...(await e.down({ branch: b.name }, { now: opts.now })));
      } catch (err) {
        if (!(isPgxError(err) && err.code === 'NOT_FOUND')) throw err; // gone meanwhile (gc, SubagentStop): nothing to do
      }
    }
    return done;
  });
  for (const r of results.filter((x) => x.role_note))
    out.progress(`warning: ${r.role_note} (\`pgx agent doctor\` lists it)`);
  out.result(
    { branches: results, planned: mine.map((b) => b.name), left_other_hosts: elsewhere, now: !!opts.now },
    () =>
      table(
        ['NAME', 'ACTION', 'TERMINATED', 'REMAINING'],
        results.map((r) => [r.name, r.action, String(r.backends_terminated), String(r.backends_remaining)]),
      ) +
      foreignNotes(results) +
      (opts.now ? '' : '\nretired: gc drops them after the grace period (`--now` drops at once)'),
  );
}

/** Under the table: what each stopped subagent changed (its SubagentStop summary), for the parent's review. */
function changeNotes(
  branches: { name: string; changes: { changed: boolean | null; lines: string[]; error?: string } | null }[],
): string {
  return branches
    .filter((b) => b.changes && b.changes.changed !== false)
    .map(
      (b) =>
        `\n${b.name} ${b.changes!.changed === null ? `(change summary failed: ${b.changes!.error}; \`pgx agent diff --branch ${b.name}\`)` : `changed: ${b.changes!.lines.join('; ')}`}`,
    )
    .join('');
}

/** Records left alone because their database is not pgx's: said, with the command that clears each. */
function foreignNotes(results: { name: string; action: string; fix?: string }[]): string {
  return results
    .filter((r) => r.action === 'foreign')
    .map(
      (r) =>
        `\n${r.name}: its database is not the one pgx made, so pgx left it alone. To forget pgx's record of it (only the record): ${r.fix}`,
    )
    .join('');
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

function stateColor(state: string, exists: boolean | null): string {
  if (exists === false) return paint(`${state} (missing)`, 'red');
  return state === 'active' ? paint(state, 'green') : state === 'retiring' ? paint(state, 'yellow') : state;
}
