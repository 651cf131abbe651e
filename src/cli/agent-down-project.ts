// `pgx agent down --project`: every branch of this project on this host, listed, confirmed, then retired or dropped.
// Its own module, like agent-install-copilot.ts, so that agent-branches.ts stays the group's registration.
import { EXIT, isPgxError } from '../lib/errors.js';
import { withEngine } from '../engine/api.js';
import { relativeTime, table, type Output } from '../lib/output.js';
import { confirmDestructive } from './confirm.js';
import { projectConfigFor, type CommonOpts } from './common.js';
import { foreignNotes } from './branch-lines.js';

/**
 * `down --project`: every branch of this project made on THIS host (another host's branches on a shared server are
 * another machine's live work, decision 135), listed, confirmed, then retired (or dropped with --now).
 */
export async function downProject(
  opts: CommonOpts & { now?: boolean; yes?: boolean },
  out: Output,
): Promise<number | void> {
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
