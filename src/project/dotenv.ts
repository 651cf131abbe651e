// Reading a project's .env files (never writing or loading them into pgx's own environment): `pgx init` offers to
// import the database a DATABASE_URL there names, `source import --from-env` reads it, and the doctor warns when one
// would send a routed command elsewhere. The common dotenv syntax only: KEY=value, `export KEY=value`, quotes, comments.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DOTENV_FILES = ['.env', '.env.local'] as const;

export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(raw);
    if (!m) continue;
    let v = m[2]!;
    const q = v[0];
    if ((q === '"' || q === "'") && v.length >= 2 && v.endsWith(q)) v = v.slice(1, -1);
    else v = v.replace(/\s+#.*$/, '');
    out[m[1]!] = q === '"' ? v.replace(/\\n/g, '\n') : v;
  }
  return out;
}

export interface DotenvEntry {
  key: string;
  value: string;
  file: string;
}

/** Every variable of the project's .env files (a later file wins, as dotenv-flow and Next.js read them). */
export function readProjectDotenv(projectDir: string): Map<string, DotenvEntry> {
  const out = new Map<string, DotenvEntry>();
  for (const name of DOTENV_FILES) {
    const file = join(projectDir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const [key, value] of Object.entries(parseDotenv(text))) out.set(key, { key, value, file });
  }
  return out;
}

/** A postgres URL for `name`: from the environment first, else from the project's .env files. */
export function findDatabaseUrl(
  projectDir: string,
  name = 'DATABASE_URL',
  env: NodeJS.ProcessEnv = process.env,
): { value: string; from: string } | undefined {
  const isPg = (v: string | undefined) => !!v && /^postgres(ql)?:\/\//.test(v);
  if (isPg(env[name])) return { value: env[name]!, from: `$${name}` };
  const e = readProjectDotenv(projectDir).get(name);
  return e && isPg(e.value) ? { value: e.value, from: e.file } : undefined;
}
