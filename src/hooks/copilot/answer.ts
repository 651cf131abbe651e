// `pgx agent copilot-hook <event>`: a GitHub Copilot CLI hook. The same pipeline as Claude Code's and Codex's hooks
// (../claude/run.ts: scope, config, deadline, log line) on the payload translated into pgx's shape (payloads.ts), with
// the Copilot handlers (handlers.ts); the answer is written in Copilot's native form. Always exits 0: the decision is
// in the JSON (Copilot denies the tool call when a preToolUse hook exits otherwise, which is the fail-closed path).
import { describeError } from '../../lib/errors.js';
import type { HookEvent } from '../claude/events.js';
import { runHook } from '../claude/run.js';
import { readHookStdin, withinLimit } from '../claude/stdin.js';
import { COPILOT_HANDLERS, COPILOT_RUNTIME, type CopilotHookName } from './handlers.js';
import { toPgxPayload } from './payloads.js';

export const isCopilotHookEvent = (event: string | undefined): event is CopilotHookName =>
  event !== undefined && Object.hasOwn(COPILOT_HANDLERS, event);

/**
 * A handler's answer (Claude's shape) in Copilot's native preToolUse form: `permissionDecision` and its reason, and a
 * rewrite as `modifiedArgs` (with no decision of pgx's: decisions/472). Other events' answers carry nothing Copilot
 * acts on; only their additionalContext is kept.
 */
export function toCopilotOutput(output: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const o = output?.hookSpecificOutput as
    | {
        permissionDecision?: string;
        permissionDecisionReason?: string;
        updatedInput?: unknown;
        additionalContext?: string;
      }
    | undefined;
  if (!o) return undefined;
  const out: Record<string, unknown> = {};
  if (o.permissionDecision) out.permissionDecision = o.permissionDecision;
  if (o.permissionDecisionReason) out.permissionDecisionReason = o.permissionDecisionReason;
  if (o.updatedInput !== undefined) out.modifiedArgs = o.updatedInput;
  if (o.additionalContext) out.additionalContext = o.additionalContext;
  return Object.keys(out).length ? out : undefined;
}

/**
 * The payload translated (text in, text out). Text that is not JSON, or past the runner's limits (1 MiB, nesting:
 * stdin.ts), goes through as it is, for the runner to report: it fails closed on an unreadable PreToolUse payload.
 * Translating a payload 100,000 deep overflowed the stack, and its untranslated keys (agentId) made the runner take
 * it for the root session's, which is answered with nothing (decision 455).
 */
function translated(text: string): string {
  try {
    return JSON.stringify(toPgxPayload(JSON.parse(withinLimit(text))));
  } catch {
    return text;
  }
}

/** The hook's answer (undefined: print nothing). Never throws: a bug in preToolUse denies (fail closed). */
export async function answerCopilotHook(event: CopilotHookName, stdin?: string): Promise<string | undefined> {
  try {
    const text = translated(stdin ?? (await readHookStdin({ emptyOnTty: true })));
    const r = await runHook(event as HookEvent, {
      env: process.env,
      cwd: process.cwd(),
      stdin: text,
      runtime: COPILOT_RUNTIME,
    });
    const out = toCopilotOutput(r.output);
    return out ? JSON.stringify(out) : undefined;
  } catch (e) {
    if (event !== 'pre-tool-use') return undefined;
    return JSON.stringify({
      permissionDecision: 'deny',
      permissionDecisionReason:
        `pgx failed unexpectedly (${describeError(e).message}), so the command was not routed to a database branch ` +
        `and did not run. Run \`pgx agent doctor\`.`,
    });
  }
}

export async function runCopilotHookCommand(event: CopilotHookName): Promise<void> {
  const print = await answerCopilotHook(event);
  process.stdout.write(print ? print + '\n' : '', () => process.exit(0));
}
