// `pgx agent codex-hook <event>`: a Codex CLI hook. The same pipeline as Claude Code's hooks (../claude/run.ts: scope,
// config, deadline, log line), with the Codex handlers (handlers.ts). Always exits 0; the decision is in the JSON.
import { describeError } from '../../lib/errors.js';
import type { HookEvent } from '../claude/events.js';
import { runHook } from '../claude/run.js';
import { CODEX_HANDLERS, CODEX_RUNTIME, type CodexHookName } from './handlers.js';

export const isCodexHookEvent = (event: string | undefined): event is CodexHookName =>
  event !== undefined && Object.hasOwn(CODEX_HANDLERS, event);

/** The hook's answer (undefined: print nothing). Never throws: a bug in PreToolUse denies (fail closed). */
export async function answerCodexHook(event: CodexHookName, stdin?: string): Promise<string | undefined> {
  try {
    return (await runHook(event as HookEvent, { env: process.env, cwd: process.cwd(), stdin, runtime: CODEX_RUNTIME }))
      .print;
  } catch (e) {
    if (event !== 'pre-tool-use') return undefined;
    return JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason:
          `pgx failed unexpectedly (${describeError(e).message}), so the command was not routed to a database branch ` +
          `and did not run. Run \`pgx agent doctor\`.`,
      },
    });
  }
}

export async function runCodexHookCommand(event: CodexHookName): Promise<void> {
  const print = await answerCodexHook(event);
  process.stdout.write(print ? print + '\n' : '', () => process.exit(0));
}
