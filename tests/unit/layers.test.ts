// The layer rules of docs/pgx/local-dev/architecture.md, checked on the source text.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/pgx.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}
const src = join(REPO, 'src');
const rel = (f: string) => relative(REPO, f);

describe('layers', () => {
  it('the CLI, the hooks, the broker and exec reach the engine only through its API', () => {
    const callers = sources(src).filter((f) => /\/src\/(cli|hooks|broker)\//.test(f) || /\/src\/(exec|exec-fast|pool-fill)\.ts$/.test(f));
    const bad = callers.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/from '([^']+)'/g)]
        .map((m) => m[1]!)
        .filter((m) => /\/registry\/|\/server\/catalog|\/engine\/(?!api\.js)/.test(m))
        .map((m) => `${rel(f)} imports ${m}`),
    );
    expect(bad).toEqual([]);
  });

  it('only the catalog module writes CREATE, ALTER or DROP DATABASE', () => {
    const hits = sources(src).filter((f) => /(ALTER|DROP|CREATE) DATABASE/.test(readFileSync(f, 'utf8'))).map(rel);
    expect(hits).toEqual(['src/server/catalog.ts']);
  });
});
