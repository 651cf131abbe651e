// `agent exec --agent <id> | --session <sid> --fail-open [--cwd <dir>] -- <command…>`, the exact forms the PreToolUse
// rewrite writes, run without the CLI bundle when the broker can't take it (hook-fast.ts tries the broker first).
import { routedTarget, runExec } from '../exec/exec.js';
import { parseRoutedExec } from '../exec/exec-argv.js';
import { printError } from '../lib/output.js';

/** Runs the exec and returns true (exit code in process.exitCode), or false when argv is not the rewrite's form. */
export async function fastExec(argv: string[]): Promise<boolean> {
  const routed = parseRoutedExec(argv);
  if (!routed) return false;
  try {
    process.exitCode = await runExec(() => routedTarget(routed, process.cwd(), process.env), routed.command, {
      failOpen: routed.session !== undefined,
    });
  } catch (e) {
    process.exitCode = printError(e, false, process.stderr);
  }
  return true;
}
