// What a parent hears of its subagents' changes, at its next prompt or Bash call (UserPromptSubmit, PreToolUse): the
// handoff inbox's doorbells, answered in pgx's own words.
import { withEngine } from '../../engine/api.js';
import type { HookEnv } from './hook-handler.js';
import { postHandoff, takeHandoffs } from './handoff-inbox.js';

/**
 * What its subagents changed, for the parent's context: the inbox's doorbells (handoff-inbox.ts) answered with the
 * words pgx makes from the session's registry records, never with text from the inbox. A registry it can't reach
 * leaves them for the next hook.
 */
export async function handoffsFor(h: HookEnv, sessionId: string): Promise<{ context?: string; tail: string }> {
  const { refs, dropped } = takeHandoffs(h.config.home, sessionId);
  if (!refs.length) return { tail: dropped ? `:handoffs-dropped=${dropped}` : '' };
  let texts: string[];
  try {
    texts = await withEngine(h.config, (e) => e.handoffs(sessionId, refs), h.engine);
  } catch {
    for (const r of refs) postHandoff(h.config.home, sessionId, r);
    return { tail: ':handoffs=deferred' };
  }
  const unvouched = dropped + refs.length - texts.length;
  return {
    context: texts.length ? texts.join('\n') : undefined,
    tail: `${texts.length ? `:handoffs=${texts.length}` : ''}${unvouched ? `:handoffs-dropped=${unvouched}` : ''}`,
  };
}
