// `pgx agent hook <event>` without the CLI bundle (dist/hook.cjs): Claude Code runs a hook per tool call and per
// subagent, so the hook starts without commander or any other command's module. bin/pgx.js comes here with the
// payload the light entry (hook-fast.ts) read, on the exact argv form; anything else goes to the CLI.
import { isHookEvent } from '../hooks/claude/events.js';
import { runHookCommand } from '../hooks/claude/answer.js';

/** bin/pgx.js: runs the hook on the payload the light entry read when argv is exactly `agent hook <event>`, else returns false. */
export async function runHookArgv(argv: string[], stdin: string): Promise<boolean> {
  const [a, b, event, extra] = argv;
  if (a !== 'agent' || b !== 'hook' || extra !== undefined || !isHookEvent(event)) return false;
  await runHookCommand(event, stdin);
  return true;
}
