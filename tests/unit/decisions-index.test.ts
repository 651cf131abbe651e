// The decisions' index (docs/pgx/local-dev/decisions/README.md) lists every decision file once, and nothing else.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/pgx.js';

const dir = join(REPO, 'docs/pgx/local-dev/decisions');

describe('the decisions index', () => {
  it('links every decision file exactly once, and no file that is not there', () => {
    const files = readdirSync(dir)
      .filter((f) => /^\d+-.*\.md$/.test(f))
      .sort();
    const links = [...readFileSync(join(dir, 'README.md'), 'utf8').matchAll(/\]\((\d+-[^)]+\.md)\)/g)].map(
      (m) => m[1]!,
    );
    expect([...links].sort()).toEqual(files);
    expect(new Set(links).size).toBe(links.length);
  });
});
