// A routed command's ticket: the PreToolUse hook records each command it routed, and `agent exec --agent` run from
// Claude Code's Bash tool (CLAUDECODE=1) refuses a command that has none. pgx's wrapper permission rule approves
// the launcher; the hook refuses a launcher the model typed, but a hook that did not run (hooks disabled, a hook
// process that could not start) cannot. With the ticket, exec refuses such a command itself: the rule never
// approves a command the user's rules did not judge. Tickets are empty 0600 files named by a hash of what runs;
// they are not consumed (one command may run twice) and SubagentStop removes the agent's.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Long enough for a permission prompt that waits for the user; the agent's SubagentStop clears them sooner. */
export const TICKET_TTL_MS = 24 * 3_600_000;

function agentDir(home: string, agentId: string): string {
  return join(home, 'agent', 'tickets', createHash('sha256').update(agentId).digest('hex').slice(0, 32));
}

function ticketPath(home: string, agentId: string, projectDir: string, argv: readonly string[]): string {
  const h = createHash('sha256');
  for (const part of [agentId, projectDir, ...argv]) h.update(part).update('\0');
  return join(agentDir(home, agentId), h.digest('hex'));
}

/** Written by the hook for `<shell> -c <original>`, which `agent exec` will run. */
export function issueTicket(home: string, agentId: string, projectDir: string, argv: readonly string[]): void {
  const file = ticketPath(home, agentId, projectDir, argv);
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(file, '', { mode: 0o600 });
}

export function hasTicket(home: string, agentId: string, projectDir: string, argv: readonly string[], now = Date.now()): boolean {
  try {
    return now - statSync(ticketPath(home, agentId, projectDir, argv)).mtimeMs < TICKET_TTL_MS;
  } catch {
    return false;
  }
}

export function dropTickets(home: string, agentId: string): void {
  rmSync(agentDir(home, agentId), { recursive: true, force: true });
}
