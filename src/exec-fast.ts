// `agent exec --agent <id> [--cwd <dir>] -- <command…>`, the exact form the PreToolUse rewrite writes, run without
// the CLI bundle: every routed command of a subagent starts a pgx process, so commander and the other commands'
// modules are not loaded for it. Anything else (another flag, --json, a typo) goes to the full CLI, which parses
// and answers exactly as before.
import { loadConfig } from './config.js';
import { isPgxError, EXIT } from './errors.js';
import { runExec } from './exec.js';
import { printError } from './output.js';
import { targetFrom } from './cli/common.js';

/** Runs the exec and returns true (exit code in process.exitCode), or false when argv is not the rewrite's form. */
export async function fastExec(argv: string[]): Promise<boolean> {
  const [a, b, flag, agent, ...rest] = argv;
  if (a !== 'agent' || b !== 'exec' || flag !== '--agent' || agent === undefined || agent.startsWith('-')) return false;
  let cwd: string | undefined;
  let i = 0;
  if (rest[0] === '--cwd' && rest[1] !== undefined && !rest[1].startsWith('-')) {
    cwd = rest[1];
    i = 2;
  }
  if (rest[i] !== '--' || rest.length <= i + 1) return false;
  try {
    process.exitCode = await runExec(loadConfig({ cwd }), targetFrom({ agent }), rest.slice(i + 1), {});
  } catch (e) {
    printError(e, false, process.stderr);
    process.exitCode = isPgxError(e) ? e.exitCode : EXIT.failure;
  }
  return true;
}
