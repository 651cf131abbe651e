// Small files, short lines (architecture.md, "Layers"): no file of src/ over 400 lines but the SQL catalog, and no line
// over 160 characters (the formatter wraps at 120; what it can't wrap, a long string, is split by hand).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/pgx.js';

const MAX_LINES = 400;
const MAX_WIDTH = 160;
const EXEMPT_FROM_LENGTH = ['src/server/catalog.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

describe('file sizes', () => {
  const files = sources(join(REPO, 'src')).map((f) => ({
    path: relative(REPO, f),
    lines: readFileSync(f, 'utf8').split('\n'),
  }));

  it(`no file of src/ over ${MAX_LINES} lines but ${EXEMPT_FROM_LENGTH.join(', ')}`, () => {
    const long = files.filter((f) => f.lines.length - 1 > MAX_LINES && !EXEMPT_FROM_LENGTH.includes(f.path));
    expect(long.map((f) => `${f.path}: ${f.lines.length - 1} lines`)).toEqual([]);
  });

  it(`no line of src/ over ${MAX_WIDTH} characters`, () => {
    const wide = files.flatMap((f) =>
      f.lines.flatMap((l, i) => (l.length > MAX_WIDTH ? [`${f.path}:${i + 1}: ${l.length}`] : [])),
    );
    expect(wide).toEqual([]);
  });
});
