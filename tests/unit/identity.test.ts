import { describe, expect, it } from 'vitest';
import { BRANCH_NAME_RE, hashBranchName, identityKey, shortBranchName, validateId } from '../../src/engine/identity.js';
import { PgxError } from '../../src/lib/errors.js';

const base = { project: 'app', host: 'laptop' };
const sid = '3f2a9c1e-7b6d-4e2f-9a1b-0c8d7e6f5a4b';

describe('identity → branch name', () => {
  it('names session, subagent and exec branches readably', () => {
    expect(shortBranchName({ ...base, sessionId: sid })).toBe('agent_laptop_3f2a9c1e');
    expect(shortBranchName({ ...base, sessionId: sid, agentId: 'a5550b0ae3d1c2c1c' })).toBe(
      'agent_laptop_3f2a9c1e_a5550b0a',
    );
    expect(shortBranchName({ ...base, execId: 'demo' })).toBe('exec_laptop_demo');
  });

  it('is deterministic, and differs whenever any part of the identity differs', () => {
    const id = { ...base, sessionId: sid, agentId: 'a1' };
    expect(identityKey(id)).toBe(identityKey({ ...id }));
    const variants = [
      { ...id, project: 'other' },
      { ...id, host: 'other' },
      { ...id, sessionId: sid.replace('3', '4') },
      { ...id, agentId: 'a2' },
      { project: 'app', host: 'laptop', sessionId: sid },
      { project: 'app', host: 'laptop', execId: 'a1' },
    ];
    const keys = new Set([identityKey(id), ...variants.map(identityKey)]);
    expect(keys.size).toBe(variants.length + 1);
  });

  it('keeps every produced name a valid unquoted identifier of at most 63 bytes, for hostile inputs', () => {
    const hostile = [
      "'; DROP DATABASE x; --",
      '"quoted"',
      'ünïcödé-日本語',
      'x'.repeat(256),
      ' ',
      '$(rm -rf /)',
      'A-B_C.D',
    ];
    for (const h of hostile) {
      for (const id of [
        { project: h, host: h, sessionId: h },
        { project: h, host: h, sessionId: h, agentId: h },
        { project: h, host: h, execId: h },
      ]) {
        for (const name of [shortBranchName(id), hashBranchName(id)].filter(Boolean) as string[]) {
          expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
          expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
          expect(name).toMatch(BRANCH_NAME_RE);
        }
      }
    }
  });

  it('falls back to the hash name when nothing name-safe is left', () => {
    const id = { ...base, sessionId: '日本語' };
    expect(shortBranchName(id)).toBeUndefined();
    expect(hashBranchName(id)).toMatch(/^agent_laptop_[0-9a-f]{16}$/);
  });

  it('rejects empty, 10 KB, control-character and lone-surrogate ids with a typed error', () => {
    for (const bad of ['', 'x'.repeat(10 * 1024), 'a\nb', 'a\u0000b', 'a\ud800', '\udfffa']) {
      expect(() => validateId('--agent', bad)).toThrow(PgxError);
    }
    expect(validateId('--agent', "it's fine")).toBe("it's fine");
    expect(validateId('--agent', 'a😀é')).toBe('a😀é'); // a surrogate pair is one character
  });
});
