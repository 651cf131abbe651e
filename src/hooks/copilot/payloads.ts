// GitHub Copilot CLI hook payloads (native `.github/hooks/*.json` events, shapes observed on 1.0.102), and the one
// translation into the shape pgx's shared handlers read (../claude/payloads.ts), so that one pipeline routes every
// runtime's commands (docs/pgx/local-dev/decisions/471-copilot-payloads.md). Untrusted: validated with zod after the
// translation, by the handler's own schema; the translation only renames known keys and never throws.
//
// What differs from Claude Code (measured):
//  - camelCase keys (sessionId, toolName, toolArgs, agentId, parentAgentId) and no hook_event_name;
//  - inside a subagent, `sessionId` is the CHILD's id and the root session is `parentAgentId`; in subagentStart and
//    subagentStop `sessionId` is the root's (and parentAgentId too). The root session is parentAgentId ?? sessionId;
//  - the shell tool is `bash` with toolArgs {command, description, …}.
import * as z from 'zod/mini';
import { idSchema } from '../../engine/identity.js';

/** The root session's id: a subagent's payload names it in parentAgentId, the root's own in sessionId. */
function rootSession(p: Record<string, unknown>): unknown {
  return typeof p.parentAgentId === 'string' && p.parentAgentId !== '' ? p.parentAgentId : p.sessionId;
}

/**
 * A native payload as pgx's handlers read it: session_id is the ROOT session, agent_id the subagent (absent for the
 * root), tool_name "Bash" for Copilot's `bash`, tool_input the tool's arguments. Anything that is not a JSON object
 * is left for the runner to report (it fails closed on an unreadable PreToolUse payload).
 */
export function toPgxPayload(p: unknown): unknown {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return p;
  const o = p as Record<string, unknown>;
  const out: Record<string, unknown> = { session_id: rootSession(o), cwd: o.cwd };
  if (o.agentId !== undefined) out.agent_id = o.agentId;
  if (o.agentType !== undefined) out.agent_type = o.agentType;
  if (typeof o.transcriptPath === 'string') out.transcript_path = o.transcriptPath;
  if (o.toolName !== undefined) {
    out.tool_name = o.toolName === 'bash' ? 'Bash' : o.toolName;
    out.tool_input = o.toolArgs ?? {};
  }
  // The copilot's own session id, where it differs from the root's (a subagent's preToolUse): kept for the log.
  if (typeof o.sessionId === 'string' && o.sessionId !== out.session_id) out.copilot_session_id = o.sessionId;
  return out;
}

const baseShape = {
  session_id: idSchema,
  cwd: z.optional(z.string()),
  transcript_path: z.optional(z.string()),
  agent_id: z.optional(idSchema),
  agent_type: z.optional(z.string()),
  copilot_session_id: z.optional(z.string()),
};

export const copilotBaseSchema = z.object(baseShape);
export const copilotPreToolUseSchema = z.object({
  ...baseShape,
  tool_name: z.string(),
  tool_input: z.looseObject({ command: z.optional(z.string()) }),
});
export const copilotSubagentSchema = z.object({ ...baseShape, agent_id: idSchema });
