// The session branch's heartbeat, once per burst of prompts. A fan-out's task notifications reach the parent as one
// UserPromptSubmit each, one after another; each used to move the branch's idle deadline with two registry round trips
// (and a commit's WAL flush, behind whatever the server is writing then). A process that heartbeated the same branch
// less than a minute ago (or a twentieth of its idle TTL, if that is shorter) skips them: the deadline is at most
// that much earlier than it would have been. Only a long-lived process (the broker) ever skips; a hook's own process
// starts with none.

const recent = new Map<string, { at: number; branch: string }>();
const MAX_KEPT = 1000;

/** Which branch of the session (the server, the project, the host, the session id) was heartbeated recently, if one was. */
export function recentHeartbeat(key: string, idleTtlMs: number, now = Date.now()): string | undefined {
  const seen = recent.get(key);
  return seen && now - seen.at < Math.min(60_000, idleTtlMs / 20) ? seen.branch : undefined;
}

export function noteHeartbeat(key: string, branch: string, now = Date.now()): void {
  if (recent.size >= MAX_KEPT) for (const [k, v] of recent) if (now - v.at >= 60_000) recent.delete(k);
  if (recent.size >= MAX_KEPT) recent.clear();
  recent.set(key, { at: now, branch });
}
