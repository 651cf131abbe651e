// The PID namespaces pgx trusts to show it the whole process tree (exec/pid-namespace.ts, decision 452): the initial
// one always; the one pgx was first used in, recorded by that first use in a private directory of the user's; no
// other. A record in a directory others may write, or in a file not the user's, is not read.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INITIAL_PID_NAMESPACE, namespaceOf, untrustedNamespace } from '../../src/exec/pid-namespace.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A place for the record like /dev/shm's: `<tmp>/pgx-<uid>/pid-namespace`, its directory not made yet. */
function recordPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'pgx-shm-'));
  dirs.push(d);
  return join(d, `pgx-${process.getuid!()}`, 'pid-namespace');
}

const own = namespaceOf('self');
const OTHER = String(Number(INITIAL_PID_NAMESPACE) + 4242);

describe('trusted PID namespaces', () => {
  it("this test runs in the machine's initial PID and user namespaces (else the cases below prove nothing)", () => {
    expect(own).toBe(INITIAL_PID_NAMESPACE);
    expect(namespaceOf('self', 'user')).toBe('4026531837');
  });

  it('first use records its own namespace, 0600 in a 0700 directory; another namespace is then refused, naming both', () => {
    const file = recordPath();
    expect(untrustedNamespace(own, file)).toBeUndefined();
    expect(readFileSync(file, 'utf8').trim()).toBe(own);
    const refused = untrustedNamespace(OTHER, file);
    expect(refused?.why).toBe(
      `it runs in a PID namespace (pid:[${OTHER}]) other than the one pgx was first used in on this machine ` +
        `(pid:[${own}], recorded in ${file}), where pgx can't see the processes it descends from`,
    );
    expect(refused?.hint).toMatch(/PID namespaces.*security\.md/);
    expect(untrustedNamespace('', file)?.why).toMatch(/a PID namespace pgx cannot read/);
  });

  it("a namespace recorded first (a container's) is trusted and the initial one stays trusted; a record is never replaced", () => {
    const file = recordPath();
    mkdirSync(join(file, '..'), { mode: 0o700 });
    writeFileSync(file, `${OTHER}\n`, { mode: 0o600 });
    expect(untrustedNamespace(OTHER, file)).toBeUndefined();
    expect(untrustedNamespace(INITIAL_PID_NAMESPACE, file)).toBeUndefined();
    expect(untrustedNamespace(String(Number(OTHER) + 1), file)).toBeDefined();
    expect(readFileSync(file, 'utf8').trim()).toBe(OTHER);
  });

  it('a record in a directory others may write is not read: only the initial namespace is trusted', () => {
    const open = recordPath();
    mkdirSync(join(open, '..'), { mode: 0o700 });
    writeFileSync(open, `${OTHER}\n`, { mode: 0o600 });
    chmodSync(join(open, '..'), 0o733);
    expect(untrustedNamespace(OTHER, open)?.why).toMatch(/other than the machine's own \(no other is recorded/);
    expect(untrustedNamespace(INITIAL_PID_NAMESPACE, open)).toBeUndefined();
  });

  it('a record in a file of another user is not read', (ctx) => {
    // A file of another user is made by chown, which only root may do.
    if (process.getuid?.() !== 0) {
      process.stderr.write(`SKIPPED "${ctx.task.name}": needs root (it chowns a record to another user)\n`);
      ctx.skip('needs root: it chowns a record to another user');
    }
    const foreign = recordPath();
    mkdirSync(join(foreign, '..'), { mode: 0o700 });
    writeFileSync(foreign, `${OTHER}\n`, { mode: 0o600 });
    chownSync(foreign, 65534, 65534); // nobody's
    expect(untrustedNamespace(OTHER, foreign)).toBeDefined();
  });
});
