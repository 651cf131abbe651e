// `pgx agent doctor`: one line per check (ok / warn / fail / skip) with the command that fixes it; exit 8 on a fail.
import type { Command } from 'commander';
import { runDoctor, type Check } from '../doctor/doctor.js';
import { EXIT } from '../lib/errors.js';
import { paint } from '../lib/output.js';
import { action, withCommon, type CommonOpts } from './common.js';

const COLOR = { ok: 'green', warn: 'yellow', fail: 'red', skip: 'dim' } as const;

export function renderChecks(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map(
    (c) =>
      `${paint(c.status.padEnd(4), COLOR[c.status])}  ${c.name.padEnd(width)}  ${c.detail}${c.fix ? `  → ${c.decide ? 'your call' : 'fix'}: ${c.fix}` : ''}`,
  );
  const n = (s: Check['status']) => checks.filter((c) => c.status === s).length;
  const choices = checks.filter((c) => c.decide).map((c) => c.name);
  const tally = `${n('fail')} fail, ${n('warn')} warn, ${n('ok')} ok${n('skip') ? `, ${n('skip')} skipped` : ''}`;
  // Right after the README's steps a newcomer asks one thing: is the setup done? Say it, and what is left to them.
  if (setupDone(checks))
    lines.push(
      `setup done (${tally})${
        choices.length
          ? `; ${choices.length === 1 ? 'one warning is a choice' : `${choices.length} warnings are choices`} only ` +
            `you can make: ${choices.join(', ')} (→ your call)`
          : ''
      }`,
    );
  else
    lines.push(
      `${tally}${choices.length ? ` (of the warnings, ${choices.join(', ')} ${choices.length === 1 ? 'is a choice' : 'are choices'} only you can make)` : ''}`,
    );
  return lines.join('\n');
}

/** No check failed, and every warning is the user's decision (`decide`), not a fault: nothing left for pgx to fix. */
export function setupDone(checks: Check[]): boolean {
  return checks.every((c) => c.status !== 'fail' && (c.status !== 'warn' || c.decide === true));
}

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command): void {
  withCommon(
    agent
      .command('doctor')
      .description('check config, server, template, hooks, hook log and branches; exit 8 if any check fails'),
  ).action(
    action<CommonOpts>(async (opts, out) => {
      const report = await runDoctor({ cwd: opts.cwd });
      out.result({ ...report, setup_done: setupDone(report.checks) }, () => renderChecks(report.checks));
      return report.ok ? EXIT.ok : EXIT.doctor;
    }),
  );
}
