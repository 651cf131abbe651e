// `pgx agent copilot-hook <event>` without the CLI bundle (dist/copilot-hook.cjs): bin/pgx.js comes here on the exact
// argv form. A hook from inside a subagent's routed command is refused first (decision 450).
import { refuseHookInsideRoutedCommand } from '../exec/routed-ancestry.js';
import { isCopilotHookEvent, runCopilotHookCommand } from '../hooks/copilot/answer.js';

/** bin/pgx.js: runs the hook when argv is exactly `agent copilot-hook <event>` (no CLI bundle), else returns false. */
export async function fastCopilotHook(argv: string[]): Promise<boolean> {
  const [a, b, event, extra] = argv;
  if (a !== 'agent' || b !== 'copilot-hook' || extra !== undefined || !isCopilotHookEvent(event)) return false;
  if (refuseHookInsideRoutedCommand()) return true;
  await runCopilotHookCommand(event);
  return true;
}
