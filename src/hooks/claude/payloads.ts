// Hook stdin payloads (Claude Code ≥ 2.1.69; shapes observed on 2.1.328). Untrusted: validated with zod; unknown
// fields are ignored, except inside tool_input, which is echoed back whole in updatedInput.
import * as z from 'zod/mini';
import { idSchema } from '../../engine/identity.js';

const baseShape = {
  session_id: idSchema,
  cwd: z.optional(z.string()),
  transcript_path: z.optional(z.string()),
  hook_event_name: z.optional(z.string()),
  agent_id: z.optional(idSchema),
  agent_type: z.optional(z.string()),
};
const base = z.object(baseShape);

export const sessionStartSchema = z.object({ ...baseShape, source: z.optional(z.string()) });
export const userPromptSubmitSchema = base;
export const preToolUseSchema = z.object({
  ...baseShape,
  tool_name: z.string(),
  tool_input: z.looseObject({ command: z.optional(z.string()) }),
  tool_use_id: z.optional(z.string()),
  /** An MCP tool's server (observed on 2.1.328 and 2.1.332; not in the documented contract): its name and scope. */
  mcp_server: z.optional(z.looseObject({ name: z.optional(z.string()), source: z.optional(z.string()) })),
});
export const subagentStartSchema = z.object({ ...baseShape, agent_id: idSchema });
export const subagentStopSchema = z.object({ ...baseShape, agent_id: idSchema });
export const sessionEndSchema = z.object({ ...baseShape, reason: z.optional(z.string()) });

export type BasePayload = z.infer<typeof base>;
export type PreToolUsePayload = z.infer<typeof preToolUseSchema>;
