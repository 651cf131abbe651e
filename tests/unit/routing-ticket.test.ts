import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropTickets, hasTicket, issueTicket, TICKET_TTL_MS } from '../../src/exec/routing-ticket.js';

describe('routing tickets', () => {
  const argv = ['/bin/bash', '-c', "rm -f 'x'"];
  it('exist for exactly the agent, project and argv the hook routed, are 0600, and expire', () => {
    const home = mkdtempSync(join(tmpdir(), 'pgx-ticket-'));
    expect(hasTicket(home, 'a1', '/p', argv)).toBe(false);
    issueTicket(home, 'a1', '/p', argv);
    expect(hasTicket(home, 'a1', '/p', argv)).toBe(true);
    expect(hasTicket(home, 'a1', '/p', argv)).toBe(true); // not consumed
    expect(hasTicket(home, 'a2', '/p', argv)).toBe(false);
    expect(hasTicket(home, 'a1', '/q', argv)).toBe(false);
    expect(hasTicket(home, 'a1', '/p', ['/bin/sh', '-c', "rm -f 'x'"])).toBe(false);
    expect(hasTicket(home, 'a1', '/p', ['/bin/bash', '-c', "rm -f 'x'", 'extra'])).toBe(false);
    // NUL-separated parts: shifting text between parts gives another ticket.
    expect(hasTicket(home, 'a1', '/p', ['/bin/bash', "-c rm -f 'x'"])).toBe(false);
    expect(hasTicket(home, 'a1', '/p', argv, Date.now() + TICKET_TTL_MS + 1000)).toBe(false);
    dropTickets(home, 'a1');
    expect(hasTicket(home, 'a1', '/p', argv)).toBe(false);
  });
});
