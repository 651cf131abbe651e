import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropTickets, hasTicket, issueTicket, TICKET_TTL_MS } from '../../src/exec/routing-ticket.js';

describe('routing tickets', () => {
  const argv = ['/bin/bash', '-c', "rm -f 'x'"];
  it('exist for exactly the agent, project and argv the hook routed, are 0600, and expire', () => {
    const home = mkdtempSync(join(tmpdir(), 'pgx-ticket-'));
    expect(hasTicket(home, { agentId: 'a1' }, '/p', argv)).toBe(false);
    issueTicket(home, { agentId: 'a1' }, '/p', argv);
    expect(hasTicket(home, { agentId: 'a1' }, '/p', argv)).toBe(true);
    expect(hasTicket(home, { agentId: 'a1' }, '/p', argv)).toBe(true); // not consumed
    expect(hasTicket(home, { agentId: 'a2' }, '/p', argv)).toBe(false);
    expect(hasTicket(home, { agentId: 'a1' }, '/q', argv)).toBe(false);
    expect(hasTicket(home, { agentId: 'a1' }, '/p', ['/bin/sh', '-c', "rm -f 'x'"])).toBe(false);
    expect(hasTicket(home, { agentId: 'a1' }, '/p', ['/bin/bash', '-c', "rm -f 'x'", 'extra'])).toBe(false);
    // NUL-separated parts: shifting text between parts gives another ticket.
    expect(hasTicket(home, { agentId: 'a1' }, '/p', ['/bin/bash', "-c rm -f 'x'"])).toBe(false);
    expect(hasTicket(home, { agentId: 'a1' }, '/p', argv, Date.now() + TICKET_TTL_MS + 1000)).toBe(false);
    dropTickets(home, 'a1');
    expect(hasTicket(home, { agentId: 'a1' }, '/p', argv)).toBe(false);
  });

  it("a session's tickets (a Codex parent's routed commands) are apart from any agent's of the same id", () => {
    const home = mkdtempSync(join(tmpdir(), 'pgx-ticket-'));
    issueTicket(home, { sessionId: 's1' }, '/p', argv);
    expect(hasTicket(home, { sessionId: 's1' }, '/p', argv)).toBe(true);
    expect(hasTicket(home, { agentId: 's1' }, '/p', argv)).toBe(false);
    expect(hasTicket(home, { sessionId: 's2' }, '/p', argv)).toBe(false);
    issueTicket(home, { agentId: 's1' }, '/p', argv);
    dropTickets(home, 's1'); // an agent's SubagentStop leaves a session's tickets of the same id alone
    expect(hasTicket(home, { sessionId: 's1' }, '/p', argv)).toBe(true);
    expect(hasTicket(home, { agentId: 's1' }, '/p', argv)).toBe(false);
  });
});
