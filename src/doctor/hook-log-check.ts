// A summary of recent hook calls from ~/.pgx/agent/hooks.log: how many of each outcome, and the denials and errors
// (ids and outcomes only, which is all the log holds). Only the last day counts, so an old, fixed problem fades.
import { readFileSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { hookLogPath, type HookLogLine } from '../hooks/claude/log.js';
import { ok, warn, type Check, type DoctorContext } from './types.js';

const WINDOW_MS = 24 * 3_600_000;
const MAX_BYTES = 4 * 1024 * 1024; // read only the tail of a big log

export interface HookLogSummary {
  path: string;
  calls: number;
  outcomes: Record<string, number>;
  denials: HookLogLine[];
  errors: HookLogLine[];
  /** A subagent given the template in place of its session's state ([agent] fork_fallback = "template"): a failure too. */
  fallbacks: HookLogLine[];
}

/** Lines of this project: its directory or one below it. Lines of older pgx versions (no project_dir) all count. */
export function inProject(line: HookLogLine, projectDir: string | undefined): boolean {
  if (!projectDir || typeof line.project_dir !== 'string') return true;
  const dir = resolve(line.project_dir);
  return dir === projectDir || dir.startsWith(projectDir.endsWith(sep) ? projectDir : projectDir + sep);
}

export function summarizeHookLog(home: string, now = Date.now(), projectDir?: string): HookLogSummary | undefined {
  const path = hookLogPath(home);
  let text: string;
  try {
    const size = statSync(path).size;
    const buf = readFileSync(path);
    text = buf.subarray(Math.max(0, size - MAX_BYTES)).toString('utf8');
  } catch {
    return undefined;
  }
  const s: HookLogSummary = { path, calls: 0, outcomes: {}, denials: [], errors: [], fallbacks: [] };
  for (const raw of text.split('\n')) {
    let line: HookLogLine;
    try {
      line = JSON.parse(raw) as HookLogLine;
    } catch {
      continue; // the first line of a tail, or a torn write
    }
    if (
      !line ||
      typeof line.outcome !== 'string' ||
      now - Date.parse(line.time) > WINDOW_MS ||
      !inProject(line, projectDir)
    )
      continue;
    s.calls++;
    // "rewritten:clone" stays whole; counters such as "retired:terminated=0:remaining=0" are cut to "retired".
    const parts = line.outcome.split(':');
    const key = `${line.event} ${parts[1] && !parts[1].includes('=') ? `${parts[0]}:${parts[1]}` : parts[0]}`;
    s.outcomes[key] = (s.outcomes[key] ?? 0) + 1;
    if (line.outcome.startsWith('denied')) s.denials.push(line);
    else if (line.outcome === 'error' || line.outcome.startsWith('error')) s.errors.push(line);
    else if (/(^|:)fallback/.test(line.outcome)) s.fallbacks.push(line);
  }
  return s;
}

const ids = (l: HookLogLine) =>
  `${l.time} ${l.event} session ${l.session_id?.slice(0, 8) ?? '-'}${l.agent_id ? ` agent ${l.agent_id}` : ''} ${l.outcome}`;

export function hookLogCheck(ctx: DoctorContext): Check {
  const s = summarizeHookLog(ctx.home, Date.now(), resolve(ctx.projectDir)); // other projects' calls are theirs
  if (!s) return ok('hook-log', `no hook call logged yet (${hookLogPath(ctx.home)})`);
  if (!s.calls) return ok('hook-log', `no hook call for this project in the last 24 h (${s.path})`);
  const counts = Object.entries(s.outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');
  const detail = `${s.calls} calls in the last 24 h: ${counts}`;
  if (!s.denials.length && !s.errors.length && !s.fallbacks.length) return ok('hook-log', detail);
  const last = [...s.denials, ...s.errors, ...s.fallbacks]
    .sort((a, b) => a.time.localeCompare(b.time))
    .slice(-3)
    .map(ids);
  return warn(
    'hook-log',
    `${detail}; ${s.denials.length} denied, ${s.errors.length} errors` +
      `${s.fallbacks.length ? `, ${s.fallbacks.length} given the template in place of their session's state` : ''} (latest: ${last.join('; ')})`,
    `fix the fail/warn checks above, then retry the denied command; the log (ids only): tail -n 20 ${s.path}`,
  );
}
