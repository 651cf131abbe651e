// The known gap in routing: `agent exec` sets libpq's variables and DATABASE_URL, and a tool that loads .env the
// usual way (dotenv without override) keeps them. An idiom that lets .env OVERRIDE the environment (dotenv
// `override: true`, `dotenv -o`, `dotenv run --override`, `load_dotenv(override=True)`, `set -a; . ./.env`) puts the
// .env value back: the command then reaches whatever .env names (often the source), exit 0, no warning. A value in
// .env is static, so it is never a branch: every such key is worth a warning, the source most of all.
import type { Config } from '../project/config.js';
import { readProjectDotenv, type DotenvEntry } from '../project/dotenv.js';
import { importRecordOf, type SourceRecord } from '../engine/inspect.js';
import { decide, ok, type Check, type DoctorContext } from './types.js';

/** Variables that pick the database a tool connects to. */
export function isTargetingKey(key: string): boolean {
  return /^(DATABASE_URL|POSTGRES_URL|POSTGRES_[A-Z0-9_]*URL|PG(HOST|HOSTADDR|PORT|DATABASE|USER|PASSWORD|SERVICE|SERVICEFILE|PASSFILE|OPTIONS))$/.test(
    key,
  );
}

function databaseOf(e: DotenvEntry): string | undefined {
  if (e.key === 'PGDATABASE') return e.value;
  try {
    const u = new URL(e.value);
    return /^postgres(ql)?:$/.test(u.protocol)
      ? decodeURIComponent(u.pathname.replace(/^\//, '')) || undefined
      : undefined;
  } catch {
    return undefined;
  }
}

/** The import that made the source, if pgx made it (read only; no server or registry: none). */
async function originOf(ctx: DoctorContext): Promise<SourceRecord | undefined> {
  if (!ctx.config?.source) return undefined;
  const s = await ctx.server();
  if (!s.ok) return undefined;
  const reg = await ctx.registry();
  return reg ? importRecordOf(reg, ctx.config.source) : undefined;
}

/** host:port/database of a postgres URL (no user, no password), to compare a .env value with an import's origin. */
function place(url: string): string | undefined {
  try {
    const u = new URL(url);
    return /^postgres(ql)?:$/.test(u.protocol)
      ? `${u.hostname}:${u.port || '5432'}/${decodeURIComponent(u.pathname.replace(/^\//, ''))}`
      : undefined;
  } catch {
    return undefined;
  }
}

function describe(e: DotenvEntry, config: Config | undefined, origin: SourceRecord | undefined): string {
  if (e.key === 'PGPASSWORD') return `${e.key} (a password)`;
  const db = databaseOf(e);
  // The .env `pgx source import --from-env` read (what `pgx init` pointed to): that URL is the ORIGIN of pgx's copy,
  // the real dev database, not the source branches are cloned from.
  const fromIt =
    origin &&
    ((origin.origin_kind === 'env' && origin.origin_env === e.key && origin.origin_env_file === e.file) ||
      (place(e.value) !== undefined && place(e.value) === place(origin.origin)));
  if (fromIt)
    return (
      `${e.key} (database "${db ?? '?'}": your real dev database, which \`pgx source import\` copied into pgx's ` +
      `server as the source "${origin.database}")`
    );
  if (db && config?.source && db === config.source && !origin) return `${e.key} (database "${db}": the SOURCE)`;
  return db ? `${e.key} (database "${db}")` : e.key;
}

export async function dotenvCheck(ctx: DoctorContext): Promise<Check> {
  const entries = [...readProjectDotenv(ctx.projectDir).values()].filter((e) => isTargetingKey(e.key));
  if (!entries.length)
    return ok('env-files', 'no .env / .env.local in the project sets DATABASE_URL, POSTGRES_URL or PG* variables');
  const origin = await originOf(ctx);
  const byFile = new Map<string, string[]>();
  for (const e of entries) byFile.set(e.file, [...(byFile.get(e.file) ?? []), describe(e, ctx.config, origin)]);
  const where = [...byFile].map(([f, keys]) => `${f} sets ${keys.join(', ')}`).join('; ');
  // Nothing is wrong with the setup: the gap is in how the project's own tools load .env, which only the user knows.
  return decide(
    'env-files',
    `${where}. Routed commands still reach their branch with tools that load .env without override (plain ` +
      `dotenv, Prisma, Django, psql…, and knex through them), but an idiom that lets .env OVERRIDE the environment ` +
      `— dotenv config({override: true}), dotenv -o, dotenv run --override, load_dotenv(override=True), set ` +
      `-a; . ./.env — sends the command to that database instead, with exit 0 and no warning`,
    'only you know how your project loads .env: if no command agents run loads it with override, nothing ' +
      'to do; if one does, keep database settings out of the .env files agents load (e.g. in .env.example or ' +
      'your shell), or drop the override',
  );
}
