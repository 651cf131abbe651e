// Who made an MCP tool call: the PreToolUse hook records it under the call's tool_use_id, and pgx's front finds the
// record by the `_meta["claudecode/toolUseId"]` Claude Code puts on the server's `tools/call` (equal to the hook's
// tool_use_id: observed on 2.1.328 and 2.1.332). Chosen over a field the hook adds to the tool's input (decision 491):
// the id is Claude Code's, not the model's, so no input can claim another agent's branch; the input reaches the
// server unchanged; and a call with no record (the hook did not run) is refused by the front, never guessed.
// Records are 0600 files in pgx's home, named by a hash of the id, taken (read and removed) by the front.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';

/** Long enough for a permission prompt that waits for the user between the hook and the call. */
export const CALL_TTL_MS = 24 * 3_600_000;

const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,200}$/;

const recordSchema = z.object({
  session_id: z.string(),
  agent_id: z.nullable(z.string()),
  server: z.string(),
  project_dir: z.string(),
});
export type CallRecord = z.infer<typeof recordSchema>;

function callsDir(home: string): string {
  return join(home, 'mcp', 'calls');
}

function callPath(home: string, toolUseId: string): string {
  return join(callsDir(home), createHash('sha256').update(toolUseId).digest('hex').slice(0, 40));
}

export const isToolUseId = (id: unknown): id is string => typeof id === 'string' && TOOL_USE_ID.test(id);

/** The hook's record of a call (written whole, then renamed into place: the front never reads half a record). */
export function recordCall(home: string, toolUseId: string, r: CallRecord): void {
  if (!isToolUseId(toolUseId)) throw new Error('not a tool_use_id');
  const file = callPath(home, toolUseId);
  mkdirSync(callsDir(home), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(r), { mode: 0o600 });
  renameSync(tmp, file);
}

/** The record of a call, removed as it is read; undefined when there is none (or it is stale or unreadable). */
export function takeCall(home: string, toolUseId: unknown, now = Date.now()): CallRecord | undefined {
  if (!isToolUseId(toolUseId)) return undefined;
  const file = callPath(home, toolUseId);
  let text: string;
  try {
    if (now - statSync(file).mtimeMs > CALL_TTL_MS) {
      rmSync(file, { force: true });
      return undefined;
    }
    text = readFileSync(file, 'utf8');
    rmSync(file, { force: true });
  } catch {
    return undefined;
  }
  try {
    const parsed = recordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Removes records older than the TTL (calls that never came: denied after the hook, or abandoned). */
export function sweepCalls(home: string, now = Date.now()): number {
  let n = 0;
  try {
    for (const f of readdirSync(callsDir(home))) {
      const file = join(callsDir(home), f);
      try {
        if (now - statSync(file).mtimeMs > CALL_TTL_MS) {
          rmSync(file, { force: true });
          n++;
        }
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no directory yet
  }
  return n;
}
