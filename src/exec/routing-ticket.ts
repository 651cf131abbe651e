// A routed command's ticket: the PreToolUse hook records each command it routed, and a routed `agent exec` (`--agent`,
// or a Codex session's `--session … --fail-open`) run from an agent's shell (Claude Code's CLAUDECODE=1, Codex's
// CODEX_THREAD_ID) refuses a command that has none. pgx's wrapper permission rule approves
// the launcher; the hook refuses a launcher the model typed, but a hook that did not run (hooks disabled, a hook
// process that could not start) cannot. With the ticket, exec refuses such a command itself: the rule never
// approves a command the user's rules did not judge. Tickets are empty 0600 files named by a hash of what runs;
// they are not consumed (one command may run twice) and SubagentStop removes the agent's. A Codex session's tickets
// have no end event to go with (decision 204): they expire after TICKET_TTL_MS like any other.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Long enough for a permission prompt that waits for the user; the agent's SubagentStop clears them sooner. */
export const TICKET_TTL_MS = 24 * 3_600_000;

/** Whose routed command: a subagent's, or a session's own. */
export type TicketOwner = { agentId: string } | { sessionId: string };

/** One directory per owner; a session's is named apart (`s-`), so no agent id can share it. */
function ownerDir(home: string, owner: TicketOwner): string {
  const [prefix, id] = 'agentId' in owner ? ['', owner.agentId] : ['s-', owner.sessionId];
  return join(home, 'agent', 'tickets', prefix + createHash('sha256').update(id).digest('hex').slice(0, 32));
}

function ticketPath(home: string, owner: TicketOwner, projectDir: string, argv: readonly string[]): string {
  const h = createHash('sha256');
  for (const part of ['agentId' in owner ? owner.agentId : owner.sessionId, projectDir, ...argv])
    h.update(part).update('\0');
  return join(ownerDir(home, owner), h.digest('hex'));
}

/** Written by the hook for `<shell> -c <original>`, which `agent exec` will run. */
export function issueTicket(home: string, owner: TicketOwner, projectDir: string, argv: readonly string[]): void {
  const file = ticketPath(home, owner, projectDir, argv);
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(file, '', { mode: 0o600 });
}

export function hasTicket(
  home: string,
  owner: TicketOwner,
  projectDir: string,
  argv: readonly string[],
  now = Date.now(),
): boolean {
  try {
    return now - statSync(ticketPath(home, owner, projectDir, argv)).mtimeMs < TICKET_TTL_MS;
  } catch {
    return false;
  }
}

export function dropTickets(home: string, agentId: string): void {
  rmSync(ownerDir(home, { agentId }), { recursive: true, force: true });
}
