// Regenerates the Claude Code plugin copy (plugins/claude/pgx) from its sources: dist/ (run `npm run build` first),
// bin/pgx.js (and bin/package.json, which makes it CommonJS), skill/ → skills/pgx/, package.json's version into
// .claude-plugin/plugin.json, and hooks/hooks.json from the hook event table (src/hooks/claude/events.ts, written by
// settings-entries.ts pluginHooksText: the same entries `pgx agent install claude` writes; decisions/311).
// The plugin must carry the built bundle because Claude Code runs a plugin from its own directory, with no
// node_modules around it. plugin.json's other fields are a hand-written source.
//
//   npm run plugins:sync                      write the copy
//   npm run plugins:sync -- --check           exit 1 listing drifted files; write nothing
//   ... --plugin-dir <dir>                    another plugin directory (tests use a temp copy)
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const check = args.includes('--check');
const dirArg = args.indexOf('--plugin-dir');
const PLUGIN = resolve(dirArg >= 0 ? (args[dirArg + 1] ?? '') : join(ROOT, 'plugins', 'claude', 'pgx'));
const unknown = args.filter((a, i) => a !== '--check' && a !== '--plugin-dir' && !(dirArg >= 0 && i === dirArg + 1));
if (unknown.length || (dirArg >= 0 && !args[dirArg + 1])) {
  process.stderr.write(`usage: node scripts/plugins-sync.mjs [--check] [--plugin-dir <dir>]\n`);
  process.exit(2);
}
if (!existsSync(join(ROOT, 'dist', 'pgx.js'))) {
  process.stderr.write('plugins-sync: dist/pgx.js is missing: run `npm run build` first\n');
  process.exit(2);
}

/** Every file under dir, as paths relative to dir (sorted, so reports are stable). */
function walk(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p).map((f) => join(e.name, f)));
    else if (e.isFile()) out.push(e.name);
  }
  return out.sort();
}

/**
 * hooks.json as the event table gives it: the TypeScript that writes it, bundled in memory (esbuild, as the build
 * does) and imported, so that the file cannot say anything the table and the installer do not.
 */
async function pluginHooksText() {
  const out = await build({
    stdin: {
      contents: "export { pluginHooksText } from './src/hooks/claude/settings-entries.ts';",
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
    logLevel: 'warning',
  });
  const mod = await import(
    `data:text/javascript;base64,${Buffer.from(out.outputFiles[0].contents).toString('base64')}`
  );
  return mod.pluginHooksText();
}

/** The wanted plugin files: relative path → { data, mode }. Directories listed in `owned` hold nothing else. */
async function wanted() {
  const files = new Map();
  const copyTree = (from, to) => {
    for (const f of walk(join(ROOT, from)))
      files.set(join(to, f), { data: readFileSync(join(ROOT, from, f)), mode: 0o644 });
  };
  copyTree('dist', 'dist');
  copyTree('skill', join('skills', 'pgx'));
  files.set(join('bin', 'pgx.js'), { data: readFileSync(join(ROOT, 'bin', 'pgx.js')), mode: 0o755 });
  files.set(join('bin', 'package.json'), { data: readFileSync(join(ROOT, 'bin', 'package.json')), mode: 0o644 });
  const manifestPath = join(PLUGIN, '.claude-plugin', 'plugin.json');
  const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : { name: 'pgx' };
  manifest.version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  files.set(join('.claude-plugin', 'plugin.json'), {
    data: Buffer.from(JSON.stringify(manifest, null, 2) + '\n'),
    mode: 0o644,
  });
  files.set(join('hooks', 'hooks.json'), { data: Buffer.from(await pluginHooksText()), mode: 0o644 });
  return files;
}

// Stale files in these directories (an old chunk hash, a deleted reference page) are drift too.
const OWNED = ['dist', join('skills', 'pgx'), 'bin', 'hooks'];

const want = await wanted();
const drift = [];
for (const [rel, w] of want) {
  const p = join(PLUGIN, rel);
  if (!existsSync(p)) drift.push({ rel, why: 'missing' });
  else if (!readFileSync(p).equals(w.data)) drift.push({ rel, why: 'differs' });
  else if ((statSync(p).mode & 0o111) !== (w.mode & 0o111)) drift.push({ rel, why: 'mode' });
}
for (const dir of OWNED) {
  for (const f of walk(join(PLUGIN, dir))) {
    const rel = join(dir, f);
    if (!want.has(rel)) drift.push({ rel, why: 'stale' });
  }
}

const shown = relative(process.cwd(), PLUGIN) || '.';
if (check) {
  if (!drift.length) {
    process.stdout.write(`plugins-sync: ${shown} is in sync (${want.size} files)\n`);
    process.exit(0);
  }
  process.stdout.write(
    `plugins-sync: ${shown} differs from its sources (run \`npm run build && npm run plugins:sync\`):\n`,
  );
  for (const d of drift) process.stdout.write(`  ${d.why.padEnd(7)} ${join(shown, d.rel)}\n`);
  process.exit(1);
}

for (const d of drift) {
  const p = join(PLUGIN, d.rel);
  if (d.why === 'stale') {
    rmSync(p);
    continue;
  }
  const w = want.get(d.rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, w.data);
  chmodSync(p, w.mode);
}
process.stdout.write(
  `plugins-sync: ${drift.length ? `updated ${drift.length} file(s) in` : 'nothing to do for'} ${shown}\n`,
);
