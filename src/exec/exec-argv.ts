// The exact argv the PreToolUse rewrite writes: `agent exec --agent <id> [--cwd <dir>] -- <command…>`, or for a
// Codex session's own command `agent exec --session <sid> --fail-open [--cwd <dir>] -- <command…>` (decision 205).
// Recognised by the light entries (bin/pgx.js) so a routed command starts neither commander nor the CLI bundle;
// anything else (another flag, --json, a typo, --session without --fail-open) goes to the full CLI, which parses and
// answers as always.

/** A subagent's routed exec, or the session's (which always fails open: the one session form the rewrite writes). */
export type RoutedExecArgv = ({ agent: string; session?: undefined } | { session: string; agent?: undefined }) & {
  cwd?: string;
  command: string[];
};

export function parseRoutedExec(argv: string[]): RoutedExecArgv | undefined {
  const [a, b, flag, id, ...after] = argv;
  if (a !== 'agent' || b !== 'exec' || id === undefined || id.startsWith('-')) return undefined;
  let rest = after;
  let who: { agent: string } | { session: string };
  if (flag === '--agent') who = { agent: id };
  else if (flag === '--session' && rest[0] === '--fail-open') {
    who = { session: id };
    rest = rest.slice(1);
  } else return undefined;
  let cwd: string | undefined;
  let i = 0;
  if (rest[0] === '--cwd' && rest[1] !== undefined && !rest[1].startsWith('-')) {
    cwd = rest[1];
    i = 2;
  }
  if (rest[i] !== '--' || rest.length <= i + 1) return undefined;
  return { ...who, cwd, command: rest.slice(i + 1) };
}
