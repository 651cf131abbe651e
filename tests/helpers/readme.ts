// The README's ```sh blocks, one array of command lines each (trailing `# comments` removed), for the tests that run
// them as written (readme.test.ts, package-install.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './pgx.js';

export const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

export const shBlocks: string[][] = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
  m[1]!
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean),
);

/** The README's first install path: the block that starts with `npm ci && npm pack`. */
export function installBlock(): string[] {
  const block = shBlocks.find((b) => b[0] === 'npm ci && npm pack');
  if (!block) throw new Error('README.md has no ```sh block starting with `npm ci && npm pack`');
  return block;
}
