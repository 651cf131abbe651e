// The layer rules of docs/pgx/local-dev/architecture.md, checked on the source text: who may import whom, and no
// import cycle anywhere. Each rule is a function of an import graph, so that the last block can show it fails on a
// graph that breaks it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/pgx.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}
const src = join(REPO, 'src');
const rel = (f: string) => relative(REPO, f);

/** Every file under src/ (as src/…) → what it imports: the specifier, and the src/ file it resolves to, if any. */
type Graph = Map<string, { spec: string; file?: string }[]>;
function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const f of sources(src)) {
    const text = readFileSync(f, 'utf8');
    // static imports and re-exports (`import type` included: a cycle of types is still a tangle), and import()
    const specs = [...text.matchAll(/^(?:import|export)\s[^'";]*?from\s+'([^']+)'|import\('([^']+)'\)/gms)].map((m) => (m[1] ?? m[2])!);
    graph.set(
      rel(f),
      specs.map((spec) => {
        const target = spec.startsWith('.') ? resolve(dirname(f), spec.replace(/\.js$/, '.ts')) : undefined;
        return { spec, file: target && existsSync(target) ? rel(target) : undefined };
      }),
    );
  }
  return graph;
}

/** `file imports spec` for every import of a file matching `from` whose target matches `to`. */
function forbidden(graph: Graph, from: RegExp, to: (i: { spec: string; file?: string }) => boolean): string[] {
  return [...graph].flatMap(([f, imports]) => (from.test(f) ? imports.filter(to).map((i) => `${f} imports ${i.spec}`) : []));
}

const rules = {
  engineThroughApi: (g: Graph) =>
    forbidden(g, /^src\/(cli|hooks|broker|lib|exec)\//, (i) => /\/registry\/|\/server\/catalog|\/engine\/(?!(api|identity)\.js)/.test(i.spec)),
  doctorReadsThroughInspect: (g: Graph) => forbidden(g, /^src\/doctor\//, (i) => /\/registry\/|\/server\/(?!(db|local|binaries)\.js)|\/engine\/(?!inspect\.js)/.test(i.spec)),
  brokerCarriesRequests: (g: Graph) => forbidden(g, /^src\/broker\//, (i) => !!i.file && /^src\/(hooks|cli|exec)\//.test(i.file)),
  dbWithoutCatalog: (g: Graph) => forbidden(g, /^src\/server\/db\.ts$/, (i) => i.file === 'src/server/catalog.ts'),
  hooksWithoutInstall: (g: Graph) => forbidden(g, /^src\/hooks\//, (i) => !!i.file?.startsWith('src/install/')),
  libStandsAlone: (g: Graph) => forbidden(g, /^src\/lib\//, (i) => i.spec.startsWith('.') && !i.file?.startsWith('src/lib/')),
  noCycles: (g: Graph) => cycles(g).map((c) => c.join(' → ')),
};

/** The import cycles of the graph, each as the files on it (strongly connected components of 2 or more, or a self-import). */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const { file: w } of graph.get(v) ?? []) {
      if (!w) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).some((i) => i.file === v)) found.push(scc.reverse());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('layers', () => {
  const graph = importGraph();

  it('the CLI, the hooks, the broker, exec and lib reach the engine only through its API (and its ids: engine/identity.ts)', () => {
    expect(rules.engineThroughApi(graph)).toEqual([]);
  });

  it('the doctor reads the engine only through its inspect API (and server/db, local, binaries to connect)', () => {
    expect(rules.doctorReadsThroughInspect(graph)).toEqual([]);
  });

  it('the broker carries requests: it imports nothing from the hooks, the CLI or exec', () => {
    expect(rules.brokerCarriesRequests(graph)).toEqual([]);
  });

  it('the connection module imports nothing of the catalog', () => {
    expect(rules.dbWithoutCatalog(graph)).toEqual([]);
  });

  it('the hooks import nothing from install/ (the event table and its entries are the hooks\' own)', () => {
    expect(rules.hooksWithoutInstall(graph)).toEqual([]);
  });

  it('lib/ imports nothing from the rest of the project', () => {
    expect(rules.libStandsAlone(graph)).toEqual([]);
  });

  it('no import cycle anywhere in src/ (type imports and import() included)', () => {
    expect(rules.noCycles(graph)).toEqual([]);
  });

  it('every file under src/ but the CLI bundle entry sits in a concept folder', () => {
    expect(readdirSync(src).filter((f) => f.endsWith('.ts'))).toEqual(['main.ts']);
  });

  it('only the catalog module writes CREATE, ALTER or DROP DATABASE', () => {
    const hits = sources(src).filter((f) => /(ALTER|DROP|CREATE) DATABASE/.test(readFileSync(f, 'utf8'))).map(rel);
    expect(hits).toEqual(['src/server/catalog.ts']);
  });

  it('each rule fails on a graph that breaks it', () => {
    const broken: Graph = new Map([
      ['src/cli/x.ts', [{ spec: '../registry/records.js', file: 'src/registry/records.ts' }]],
      ['src/broker/server.ts', [{ spec: '../hooks/claude/run.js', file: 'src/hooks/claude/run.ts' }, { spec: '../exec/exec.js', file: 'src/exec/exec.ts' }]],
      ['src/server/db.ts', [{ spec: './catalog.js', file: 'src/server/catalog.ts' }]],
      ['src/server/catalog.ts', [{ spec: './db.js', file: 'src/server/db.ts' }]],
      ['src/lib/processes.ts', [{ spec: '../config.js', file: 'src/config.ts' }]],
      ['src/doctor/x.ts', [{ spec: '../engine/inspect.js', file: 'src/engine/inspect.ts' }, { spec: '../engine/pool.js', file: 'src/engine/pool.ts' }, { spec: '../server/catalog.js', file: 'src/server/catalog.ts' }]],
      ['src/hooks/claude/run.ts', [{ spec: '../../install/hook-events.js', file: 'src/install/hook-events.ts' }]],
    ]);
    expect(rules.hooksWithoutInstall(broken)).toEqual(['src/hooks/claude/run.ts imports ../../install/hook-events.js']);
    expect(rules.engineThroughApi(broken)).toEqual(['src/cli/x.ts imports ../registry/records.js']);
    expect(rules.brokerCarriesRequests(broken)).toEqual(['src/broker/server.ts imports ../hooks/claude/run.js', 'src/broker/server.ts imports ../exec/exec.js']);
    expect(rules.dbWithoutCatalog(broken)).toEqual(['src/server/db.ts imports ./catalog.js']);
    expect(rules.doctorReadsThroughInspect(broken)).toEqual(['src/doctor/x.ts imports ../engine/pool.js', 'src/doctor/x.ts imports ../server/catalog.js']);
    expect(rules.libStandsAlone(broken)).toEqual(['src/lib/processes.ts imports ../config.js']);
    expect(rules.noCycles(broken)).toEqual(['src/server/db.ts → src/server/catalog.ts']);
  });
});
