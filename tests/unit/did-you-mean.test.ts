// The edit-distance helper behind "did you mean" for config keys, and what an unknown key's note says.
import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance } from '../../src/lib/did-you-mean.js';
import { keyLine, unknownKeyNote } from '../../src/project/config-hints.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and a swap of neighbours as one edit each', () => {
    expect(editDistance('idle_tl', 'idle_ttl')).toBe(1);
    expect(editDistance('poool', 'pool')).toBe(1);
    expect(editDistance('gaurds', 'guards')).toBe(1); // a swap
    expect(editDistance('grace', 'grace')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('didYouMean', () => {
  const agent = ['idle_ttl', 'grace', 'keep_changed', 'session_branch', 'pool', 'pool_max', 'pool_max_bytes'];
  it('names the near key, case aside; nothing when none is near or the word is too short to tell', () => {
    expect(didYouMean('idle_tl', agent)).toBe('idle_ttl');
    expect(didYouMean('Pool', agent)).toBe('pool');
    expect(didYouMean('pool_maxx', agent)).toBe('pool_max');
    expect(didYouMean('colour', agent)).toBeUndefined();
    expect(didYouMean('ab', ['pool'])).toBeUndefined();
    expect(didYouMean('pool', agent)).toBeUndefined(); // the key itself is not a suggestion
  });
});

describe('unknownKeyNote', () => {
  const known = {
    '': ['server', 'project', 'agent', 'guards'],
    project: ['name', 'source'],
    agent: ['idle_ttl', 'grace', 'pool'],
    guards: ['statement_timeout'],
  };
  const text = '[project]\nname = "x"\nidle_ttl = "3h"\n[agent]\n  idle_tl = "2h"\n[gards]\n';
  it('the line of the key in its table, and the key it was meant to be or the table it belongs under', () => {
    expect(keyLine(text, 'agent', 'idle_tl')).toBe(5);
    expect(keyLine(text, 'project', 'idle_tl')).toBeUndefined();
    expect(unknownKeyNote(text, 'agent', 'idle_tl', known)).toBe('"idle_tl" (line 5; did you mean "idle_ttl"?)');
    expect(unknownKeyNote(text, 'project', 'idle_ttl', known)).toBe('"idle_ttl" (line 3; it belongs under [agent])');
    expect(unknownKeyNote(text, '', 'gards', known)).toBe('"gards" (line 6; did you mean "guards"?)');
    expect(unknownKeyNote(undefined, 'agent', 'zzz', known)).toBe('"zzz"');
  });
});
