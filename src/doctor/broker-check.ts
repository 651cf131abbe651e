// The broker's health (src/broker/): off, unavailable (a socket directory others can enter), or how many of the
// recent hook calls it answered. Reads only; a missing broker is fine (the next hook starts one).
import { readFileSync } from 'node:fs';
import {
  brokerDisabled,
  socketDirFixHint,
  socketDirPath,
  socketDirProblem,
  socketDirState,
} from '../broker/protocol.js';
import { hookLogPath } from '../hooks/claude/log.js';
import { fail, ok, warn, type Check, type DoctorContext } from './types.js';

/** Of this project's last 200 hook calls that could use it (not SessionStart, not a parent's Bash), how many did. */
function recentUse(home: string, projectDir: string | undefined): { brokered: number; eligible: number } {
  let lines: { event?: string; outcome?: string; via?: string; project_dir?: string | null }[] = [];
  try {
    lines = readFileSync(hookLogPath(home), 'utf8')
      .trim()
      .split('\n')
      .slice(-2000)
      .map((l) => JSON.parse(l));
  } catch {
    return { brokered: 0, eligible: 0 };
  }
  const eligible = lines
    .filter(
      (l) =>
        (!projectDir || l.project_dir === projectDir) &&
        l.event !== 'session-start' &&
        l.outcome !== 'skipped:not-subagent-bash',
    )
    .slice(-200);
  return { brokered: eligible.filter((l) => l.via === 'broker').length, eligible: eligible.length };
}

export function brokerCheck(ctx: DoctorContext): Check {
  if (brokerDisabled())
    return ok('broker', 'off (PGX_BROKER=0): every hook and routed command works in its own process');
  const dir = socketDirPath();
  if (!dir) return ok('broker', 'not available on this platform: every hook works in its own process');
  const state = socketDirState(dir);
  if (state === 'not-private') {
    // Another user may have made that name first (decision 443): nothing is sent there, and the hooks work in their
    // own processes; the user must hear it, and fix it, or the broker stays off.
    const problem = socketDirProblem();
    const others = problem?.owner !== undefined && problem.owner !== process.getuid?.();
    const detail =
      `not used: ${dir} is not a private directory of yours (${others ? `owned by uid ${problem!.owner}` : 'a link, or open to group/others'}), ` +
      `so no hook or routed command is sent there: each works in its own process (slower, still isolated)`;
    const fix = others
      ? socketDirFixHint(problem!.owner)
      : `chmod 700 ${dir}  # if it is a directory of yours; if it is a link, remove it`;
    return others ? fail('broker', detail, fix) : warn('broker', detail, fix);
  }
  const use = recentUse(ctx.home, ctx.projectDir);
  return ok(
    'broker',
    use.eligible
      ? `answered ${use.brokered} of this project's last ${use.eligible} hook calls (the rest ran in their own process)`
      : 'no hook calls yet (the first one starts the broker)',
  );
}
