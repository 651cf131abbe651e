// `pgx agent codex-hook <event>` without the CLI bundle (dist/codex-hook.cjs): bin/pgx.js comes here on the exact
// argv form. A hook from inside a subagent's routed command is refused first (decision 450).
import { refuseHookInsideRoutedCommand } from '../exec/routed-ancestry.js';
import { isCodexHookEvent, runCodexHookCommand } from '../hooks/codex/answer.js';

/** bin/pgx.js: runs the hook when argv is exactly `agent codex-hook <event>` (no CLI bundle), else returns false. */
export async function fastCodexHook(argv: string[]): Promise<boolean> {
  const [a, b, event, extra] = argv;
  if (a !== 'agent' || b !== 'codex-hook' || extra !== undefined || !isCodexHookEvent(event)) return false;
  if (refuseHookInsideRoutedCommand()) return true;
  await runCodexHookCommand(event);
  return true;
}
