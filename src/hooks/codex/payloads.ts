// Codex CLI hook stdin payloads (shapes observed on @openai/codex 0.171.0). Untrusted: validated with zod; unknown
// fields are ignored, except inside tool_input, which is echoed back whole in updatedInput.
import * as z from 'zod/mini';
import { idSchema } from '../../engine/identity.js';

const baseShape = {
  session_id: idSchema,
  cwd: z.optional(z.string()),
  transcript_path: z.optional(z.nullable(z.string())),
  hook_event_name: z.optional(z.string()),
  // Present inside a subagent only (the child thread's id).
  agent_id: z.optional(idSchema),
  agent_type: z.optional(z.string()),
  // Only "bypassPermissions" lets pgx answer allow (handlers.ts); any other value, or none, gets the deny.
  permission_mode: z.optional(z.string()),
  turn_id: z.optional(z.string()),
  model: z.optional(z.string()),
};

export const codexBaseSchema = z.object(baseShape);
export const codexSessionStartSchema = z.object({ ...baseShape, source: z.optional(z.string()) });
export const codexPreToolUseSchema = z.object({
  ...baseShape,
  tool_name: z.string(),
  tool_input: z.looseObject({ command: z.optional(z.string()) }),
  tool_use_id: z.optional(z.string()),
});
export const codexSubagentStartSchema = z.object({ ...baseShape, agent_id: idSchema });
