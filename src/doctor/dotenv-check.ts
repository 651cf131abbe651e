// The known gap in routing: `agent exec` sets libpq's variables and DATABASE_URL, and a tool that loads .env the
// usual way (dotenv without override) keeps them. An idiom that lets .env OVERRIDE the environment (dotenv
// `override: true`, `dotenv -o`, `dotenv run --override`, `load_dotenv(override=True)`, `set -a; . ./.env`) puts the
// .env value back: the command then reaches whatever .env names (often the source), exit 0, no warning. A value in
// .env is static, so it is never a branch: every such key is worth a warning, the source most of all.
import type { Config } from '../project/config.js';
import { readProjectDotenv, type DotenvEntry } from '../project/dotenv.js';
import { ok, warn, type Check, type DoctorContext } from './types.js';

/** Variables that pick the database a tool connects to. */
export function isTargetingKey(key: string): boolean {
  return /^(DATABASE_URL|POSTGRES_URL|POSTGRES_[A-Z0-9_]*URL|PG(HOST|HOSTADDR|PORT|DATABASE|USER|PASSWORD|SERVICE|SERVICEFILE|PASSFILE|OPTIONS))$/.test(key);
}

function databaseOf(e: DotenvEntry): string | undefined {
  if (e.key === 'PGDATABASE') return e.value;
  try {
    const u = new URL(e.value);
    return /^postgres(ql)?:$/.test(u.protocol) ? decodeURIComponent(u.pathname.replace(/^\//, '')) || undefined : undefined;
  } catch {
    return undefined;
  }
}

function describe(e: DotenvEntry, config: Config | undefined): string {
  if (e.key === 'PGPASSWORD') return `${e.key} (a password)`;
  const db = databaseOf(e);
  if (db && config?.source && db === config.source) return `${e.key} (database "${db}": the SOURCE)`;
  return db ? `${e.key} (database "${db}")` : e.key;
}

export function dotenvCheck(ctx: DoctorContext): Check {
  const entries = [...readProjectDotenv(ctx.projectDir).values()].filter((e) => isTargetingKey(e.key));
  if (!entries.length) return ok('env-files', 'no .env / .env.local in the project sets DATABASE_URL, POSTGRES_URL or PG* variables');
  const byFile = new Map<string, string[]>();
  for (const e of entries) byFile.set(e.file, [...(byFile.get(e.file) ?? []), describe(e, ctx.config)]);
  const where = [...byFile].map(([f, keys]) => `${f} sets ${keys.join(', ')}`).join('; ');
  return warn(
    'env-files',
    `${where}. Routed commands still reach their branch with tools that load .env without override (plain dotenv, Prisma, Django, psql…), but an idiom that lets .env OVERRIDE the environment — dotenv config({override: true}), dotenv -o, dotenv run --override, load_dotenv(override=True), set -a; . ./.env — sends the command to that database instead, with exit 0 and no warning`,
    'keep database settings out of the .env files agents load (e.g. in .env.example or your shell), or never load .env with override in commands agents run',
  );
}
