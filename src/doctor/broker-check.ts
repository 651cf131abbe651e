// The broker's health (src/broker/): off, unavailable (a socket directory others can enter), or how many of the
// recent hook calls it answered. Reads only; a missing broker is fine (the next hook starts one).
import { readFileSync } from 'node:fs';
import { brokerDisabled, socketDirPath, socketDirState } from '../broker/protocol.js';
import { hookLogPath } from '../hooks/claude/log.js';
import { ok, warn, type Check, type DoctorContext } from './types.js';

/** Of this project's last 200 hook calls that could use it (not SessionStart, not a parent's Bash), how many did. */
function recentUse(home: string, projectDir: string | undefined): { brokered: number; eligible: number } {
  let lines: { event?: string; outcome?: string; via?: string; project_dir?: string | null }[] = [];
  try {
    lines = readFileSync(hookLogPath(home), 'utf8').trim().split('\n').slice(-2000).map((l) => JSON.parse(l));
  } catch {
    return { brokered: 0, eligible: 0 };
  }
  const eligible = lines
    .filter((l) => (!projectDir || l.project_dir === projectDir) && l.event !== 'session-start' && l.outcome !== 'skipped:not-subagent-bash')
    .slice(-200);
  return { brokered: eligible.filter((l) => l.via === 'broker').length, eligible: eligible.length };
}

export function brokerCheck(ctx: DoctorContext): Check {
  if (brokerDisabled()) return ok('broker', 'off (PGX_BROKER=0): every hook and routed command works in its own process');
  const dir = socketDirPath();
  if (!dir) return ok('broker', 'not available on this platform: every hook works in its own process');
  const state = socketDirState(dir);
  if (state === 'not-private') {
    return warn('broker', `not used: ${dir} is not a private directory of yours (a link, another user's, or open to group/others), so hooks work in their own processes (slower)`, `chmod 700 ${dir}  # if it is a directory of yours; if it is a link or another user's, point XDG_RUNTIME_DIR at a private directory`);
  }
  const use = recentUse(ctx.home, ctx.projectDir);
  return ok('broker', use.eligible ? `answered ${use.brokered} of this project's last ${use.eligible} hook calls (the rest ran in their own process)` : 'no hook calls yet (the first one starts the broker)');
}
