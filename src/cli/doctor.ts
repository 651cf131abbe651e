// `pgx agent doctor`: one line per check (ok / warn / fail / skip) with the command that fixes it; exit 8 on a fail.
import type { Command } from 'commander';
import { runDoctor, type Check } from '../doctor/doctor.js';
import { EXIT } from '../lib/errors.js';
import { paint } from '../lib/output.js';
import { action, withCommon, type CommonOpts } from './common.js';

const COLOR = { ok: 'green', warn: 'yellow', fail: 'red', skip: 'dim' } as const;

export function renderChecks(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${paint(c.status.padEnd(4), COLOR[c.status])}  ${c.name.padEnd(width)}  ${c.detail}${c.fix ? `  → fix: ${c.fix}` : ''}`);
  const n = (s: Check['status']) => checks.filter((c) => c.status === s).length;
  lines.push(`${n('fail')} fail, ${n('warn')} warn, ${n('ok')} ok${n('skip') ? `, ${n('skip')} skipped` : ''}`);
  return lines.join('\n');
}

export function registerDoctorCommand(agent: Command): void {
  withCommon(agent.command('doctor').description('check config, server, template, hooks, hook log and branches; exit 8 if any check fails')).action(
    action<CommonOpts>(async (opts, out) => {
      const report = await runDoctor({ cwd: opts.cwd });
      out.result(report, () => renderChecks(report.checks));
      return report.ok ? EXIT.ok : EXIT.doctor;
    }),
  );
}
