// The layer rules of docs/pgx/local-dev/architecture.md, checked on the source text: each folder of src/ has a rank,
// and a file imports only from its own folder or from a folder of a lower rank; who may reach the engine's insides;
// and no import cycle anywhere, between files or between folders. Each rule is a function of an import graph, so that
// the last blocks can show it fails on a graph that breaks it (an upward import planted into every folder).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/pgx.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}
const src = join(REPO, 'src');
const rel = (f: string) => relative(REPO, f);

/** Every file under src/ (as src/…) → what it imports: the specifier, and the src/ file it resolves to, if any. */
type Graph = Map<string, { spec: string; file?: string }[]>;
function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const f of sources(src)) {
    const text = readFileSync(f, 'utf8');
    // static imports and re-exports (`import type` included: a cycle of types is still a tangle), side-effect imports, and import()
    const specs = [
      ...text.matchAll(/^(?:import|export)\s[^'";]*?from\s+'([^']+)'|^import\s+'([^']+)'|import\('([^']+)'\)/gms),
    ].map((m) => (m[1] ?? m[2] ?? m[3])!);
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
  return [...graph].flatMap(([f, imports]) =>
    from.test(f) ? imports.filter(to).map((i) => `${f} imports ${i.spec}`) : [],
  );
}

/**
 * Every folder of src/ and its rank, lowest first (architecture.md, "Layers"). A file imports from its own folder or
 * from a folder of a lower rank, never from one of a higher rank or one with no rank. entries/ is the top: the ways
 * in (bundle entries), which nothing imports.
 */
export const RANKS: Record<string, number> = {
  lib: 1,
  server: 2,
  registry: 3,
  mask: 4,
  copy: 4,
  project: 5,
  engine: 6,
  exec: 7,
  // pgx in front of a user's MCP server (pgx mcp serve), and what tells a database server: between the routed exec it
  // shares the libpq environment with, and the hooks and install that read it (a half rank: no other number moves).
  mcp: 7.5,
  broker: 8,
  hooks: 9,
  install: 10,
  verify: 11,
  doctor: 12,
  cli: 13,
  entries: 14,
};
const folderOf = (f: string) => f.split('/')[1]!;

const rules = {
  ranked: (g: Graph) =>
    [...g].flatMap(([f, imports]) =>
      imports
        .filter(
          (i) =>
            i.file &&
            folderOf(i.file) !== folderOf(f) &&
            !((RANKS[folderOf(i.file)] ?? Infinity) < (RANKS[folderOf(f)] ?? -Infinity)),
        )
        .map((i) => `${f} imports ${i.spec}`),
    ),
  // Above the engine, only its facade and its ids (the doctor: its inspect API, below).
  engineThroughApi: (g: Graph) =>
    forbidden(g, /^src\/(cli|hooks|broker|lib|exec|mcp|install|verify|entries)\//, (i) =>
      /\/registry\/|\/server\/catalog|\/engine\/(?!(api|identity)\.js)/.test(i.spec),
    ),
  doctorReadsThroughInspect: (g: Graph) =>
    forbidden(g, /^src\/doctor\//, (i) =>
      /\/registry\/|\/server\/(?!(db|conn-params|local|binaries)\.js)|\/engine\/(?!inspect\.js)/.test(i.spec),
    ),
  brokerCarriesRequests: (g: Graph) =>
    forbidden(g, /^src\/broker\//, (i) => !!i.file && /^src\/(hooks|cli|exec)\//.test(i.file)),
  dbWithoutCatalog: (g: Graph) => forbidden(g, /^src\/server\/db\.ts$/, (i) => i.file === 'src/server/catalog.ts'),
  hooksWithoutInstall: (g: Graph) => forbidden(g, /^src\/hooks\//, (i) => !!i.file?.startsWith('src/install/')),
  libStandsAlone: (g: Graph) =>
    forbidden(g, /^src\/lib\//, (i) => i.spec.startsWith('.') && !i.file?.startsWith('src/lib/')),
  noCycles: (g: Graph) => cycles(g).map((c) => c.join(' → ')),
  noFolderCycles: (g: Graph) => cycles(folderGraph(g)).map((c) => c.join(' → ')),
};

/** The graph of folders: src/<folder> imports src/<other> when one of its files imports one of the other's. */
function folderGraph(g: Graph): Graph {
  const folders: Graph = new Map();
  for (const [f, imports] of g) {
    const from = `src/${folderOf(f)}`;
    const edges = folders.get(from) ?? [];
    for (const i of imports)
      if (i.file && folderOf(i.file) !== folderOf(f) && !edges.some((e) => e.file === `src/${folderOf(i.file!)}`))
        edges.push({ spec: folderOf(i.file), file: `src/${folderOf(i.file)}` });
    folders.set(from, edges);
  }
  return folders;
}

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

  it('every folder of src/ has a rank, and every import goes to its own folder or a lower rank', () => {
    expect(
      readdirSync(src, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .filter((d) => !(d in RANKS)),
    ).toEqual([]);
    expect(rules.ranked(graph)).toEqual([]);
  });

  it('no import cycle between folders', () => {
    expect(rules.noFolderCycles(graph)).toEqual([]);
  });

  it('everything above the engine but the doctor reaches it only through its API (and its ids: engine/identity.ts)', () => {
    expect(rules.engineThroughApi(graph)).toEqual([]);
  });

  it('the doctor reads the engine only through its inspect API (and server/db, conn-params, local, binaries to connect)', () => {
    expect(rules.doctorReadsThroughInspect(graph)).toEqual([]);
  });

  it('the broker carries requests: it imports nothing from the hooks, the CLI or exec', () => {
    expect(rules.brokerCarriesRequests(graph)).toEqual([]);
  });

  it('the connection module imports nothing of the catalog', () => {
    expect(rules.dbWithoutCatalog(graph)).toEqual([]);
  });

  it("the hooks import nothing from install/ (the event table and its entries are the hooks' own)", () => {
    expect(rules.hooksWithoutInstall(graph)).toEqual([]);
  });

  it('lib/ imports nothing from the rest of the project', () => {
    expect(rules.libStandsAlone(graph)).toEqual([]);
  });

  it('no import cycle anywhere in src/ (type imports and import() included)', () => {
    expect(rules.noCycles(graph)).toEqual([]);
  });

  it('every file under src/ sits in a concept folder (the bundle entries too: entries/)', () => {
    expect(readdirSync(src).filter((f) => f.endsWith('.ts'))).toEqual([]);
  });

  it('only the catalog module writes CREATE, ALTER or DROP DATABASE', () => {
    const hits = sources(src)
      .filter((f) => /(ALTER|DROP|CREATE) DATABASE/.test(readFileSync(f, 'utf8')))
      .map(rel);
    expect(hits).toEqual(['src/server/catalog.ts']);
  });

  it('each rule fails on a graph that breaks it', () => {
    const broken: Graph = new Map([
      ['src/cli/x.ts', [{ spec: '../registry/records.js', file: 'src/registry/records.ts' }]],
      [
        'src/broker/server.ts',
        [
          { spec: '../hooks/claude/run.js', file: 'src/hooks/claude/run.ts' },
          { spec: '../exec/exec.js', file: 'src/exec/exec.ts' },
        ],
      ],
      ['src/server/db.ts', [{ spec: './catalog.js', file: 'src/server/catalog.ts' }]],
      ['src/server/catalog.ts', [{ spec: './db.js', file: 'src/server/db.ts' }]],
      ['src/lib/processes.ts', [{ spec: '../config.js', file: 'src/config.ts' }]],
      [
        'src/doctor/x.ts',
        [
          { spec: '../engine/inspect.js', file: 'src/engine/inspect.ts' },
          { spec: '../engine/pool.js', file: 'src/engine/pool.ts' },
          { spec: '../server/catalog.js', file: 'src/server/catalog.ts' },
        ],
      ],
      ['src/hooks/claude/run.ts', [{ spec: '../../install/hook-events.js', file: 'src/install/hook-events.ts' }]],
    ]);
    expect(rules.hooksWithoutInstall(broken)).toEqual(['src/hooks/claude/run.ts imports ../../install/hook-events.js']);
    expect(rules.engineThroughApi(broken)).toEqual(['src/cli/x.ts imports ../registry/records.js']);
    expect(rules.brokerCarriesRequests(broken)).toEqual([
      'src/broker/server.ts imports ../hooks/claude/run.js',
      'src/broker/server.ts imports ../exec/exec.js',
    ]);
    expect(rules.dbWithoutCatalog(broken)).toEqual(['src/server/db.ts imports ./catalog.js']);
    expect(rules.doctorReadsThroughInspect(broken)).toEqual([
      'src/doctor/x.ts imports ../engine/pool.js',
      'src/doctor/x.ts imports ../server/catalog.js',
    ]);
    expect(rules.libStandsAlone(broken)).toEqual(['src/lib/processes.ts imports ../config.js']);
    expect(rules.noCycles(broken)).toEqual(['src/server/db.ts → src/server/catalog.ts']);
  });

  it('the rank rule fails on an upward import planted into each folder, and on each of the five the issue made up', () => {
    const order = Object.keys(RANKS).sort((a, b) => RANKS[a]! - RANKS[b]!);
    const fileIn = (folder: string) => [...graph.keys()].find((f) => folderOf(f) === folder)!;
    for (const [i, folder] of order.entries()) {
      // into this folder from the one below it, and out of it to the one above it
      for (const [lower, upper] of [
        [order[i - 1], folder],
        [folder, order[i + 1]],
      ]) {
        if (!lower || !upper) continue;
        const [from, to] = [fileIn(lower), fileIn(upper)];
        const planted: Graph = new Map(graph);
        planted.set(from, [...graph.get(from)!, { spec: `planted:${to}`, file: to }]);
        expect(rules.ranked(planted), `${lower} → ${upper}`).toEqual([`${from} imports planted:${to}`]);
      }
    }
    const madeUp: Graph = new Map([
      ['src/engine/guards.ts', [{ spec: '../hooks/claude/log.js', file: 'src/hooks/claude/log.ts' }]],
      ['src/install/claude.ts', [{ spec: '../registry/records.js', file: 'src/registry/records.ts' }]],
      ['src/registry/records.ts', [{ spec: '../cli/common.js', file: 'src/cli/common.ts' }]],
      ['src/lib/errors.ts', [{ spec: '../engine/api.js', file: 'src/engine/api.ts' }]],
      ['src/server/db.ts', [{ spec: '../doctor/doctor.js', file: 'src/doctor/doctor.ts' }]],
    ]);
    expect(rules.ranked(madeUp)).toEqual([
      'src/engine/guards.ts imports ../hooks/claude/log.js',
      'src/registry/records.ts imports ../cli/common.js',
      'src/lib/errors.ts imports ../engine/api.js',
      'src/server/db.ts imports ../doctor/doctor.js',
    ]);
    // install/ stands above the registry (a downward import), but reaches the engine's insides only through its API
    expect(rules.engineThroughApi(madeUp)).toEqual(['src/install/claude.ts imports ../registry/records.js']);
    expect(
      rules.noFolderCycles(
        new Map([...madeUp, ['src/hooks/claude/log.ts', [{ spec: '../../engine/api.js', file: 'src/engine/api.ts' }]]]),
      ),
    ).toEqual(['src/engine → src/hooks']);
    expect(
      rules.ranked(new Map([['src/newfolder/x.ts', [{ spec: '../lib/errors.js', file: 'src/lib/errors.ts' }]]])),
    ).toEqual(['src/newfolder/x.ts imports ../lib/errors.js']);
  });
});
