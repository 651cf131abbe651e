// The exact argv the PreToolUse rewrite writes: `agent exec --agent <id> [--cwd <dir>] -- <command…>`. Recognised by
// the light entries (bin/pgx.js) so a routed command starts neither commander nor the CLI bundle; anything else
// (another flag, --json, a typo) goes to the full CLI, which parses and answers as always.

export interface RoutedExecArgv {
  agent: string;
  cwd?: string;
  command: string[];
}

export function parseRoutedExec(argv: string[]): RoutedExecArgv | undefined {
  const [a, b, flag, agent, ...rest] = argv;
  if (a !== 'agent' || b !== 'exec' || flag !== '--agent' || agent === undefined || agent.startsWith('-')) return undefined;
  let cwd: string | undefined;
  let i = 0;
  if (rest[0] === '--cwd' && rest[1] !== undefined && !rest[1].startsWith('-')) {
    cwd = rest[1];
    i = 2;
  }
  if (rest[i] !== '--' || rest.length <= i + 1) return undefined;
  return { agent, cwd, command: rest.slice(i + 1) };
}
