// Hook stdin payloads (Claude Code ≥ 2.1.69; shapes observed on 2.1.328). Untrusted: validated with zod; unknown
// fields are ignored, except inside tool_input, which is echoed back whole in updatedInput.
import { z } from 'zod';
import { idSchema } from '../../identity.js';

const base = z.object({
  session_id: idSchema,
  cwd: z.string().optional(),
  transcript_path: z.string().optional(),
  hook_event_name: z.string().optional(),
  agent_id: idSchema.optional(),
  agent_type: z.string().optional(),
});

export const sessionStartSchema = base.extend({ source: z.string().optional() });
export const userPromptSubmitSchema = base;
export const preToolUseSchema = base.extend({
  tool_name: z.string(),
  tool_input: z.looseObject({ command: z.string().optional() }),
  tool_use_id: z.string().optional(),
});
export const subagentStartSchema = base.extend({ agent_id: idSchema });
export const subagentStopSchema = base.extend({ agent_id: idSchema });
export const sessionEndSchema = base.extend({ reason: z.string().optional() });

export type BasePayload = z.infer<typeof base>;
export type PreToolUsePayload = z.infer<typeof preToolUseSchema>;
