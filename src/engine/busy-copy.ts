// A copy of a branch that has connections, refused: the words `pgx agent reset` and `adopt` say (issue 39). A TEMPLATE
// copy needs nobody connected, so a connected branch is copied another way (dump-restore.ts); when that fails too, the
// refusal names the branch that has the connections, who is connected (how many, and the applications they named),
// and what works instead, rather than the source and `pgx template refresh`, which do not.
import { PgxError, isPgxError } from '../lib/errors.js';
import * as catalog from '../server/catalog.js';
import type { EngineContext } from './context.js';

/** An application name as it may be shown: a client chose it, so plain characters only, and short. */
const shown = (app: string) => app.replace(/[^A-Za-z0-9 _.:@/-]/g, '').slice(0, 32);

/**
 * The refusal for a copy of `from` (for `into`, the branch being reset or adopted) that failed while `from` had
 * connections; undefined when nobody is connected (the failure is another, and keeps its own words). `other`: the
 * command that gives `into` something else (`pgx agent reset --branch B --to template`).
 */
export async function busyCopyRefusal(
  e: EngineContext,
  from: string,
  what: string,
  into: string,
  err: unknown,
  other?: string,
): Promise<PgxError | undefined> {
  const who = await catalog.backendsOn(e.registry, from).catch(() => undefined);
  if (!who || who.n === 0) return undefined;
  const apps = who.apps.map(shown).filter(Boolean).slice(0, 3);
  const text = String((err as Error)?.message ?? err).split('\n')[0]!;
  const tool = /\b(pg_dump|psql)\b[^\n]*\bfound neither\b/.exec(text)?.[1];
  const why = tool
    ? `copying a branch that has connections needs pg_dump and psql, and ${tool} is not installed here`
    : `copying it while connected failed: ${text.slice(0, 300)}`;
  return new PgxError(
    'BRANCH_FAILED',
    `Could not copy ${what} for "${into}": "${from}" has ${who.n} open connection${who.n === 1 ? '' : 's'}` +
      `${apps.length ? ` (${apps.join(', ')})` : ''}, and ${why}. "${into}" is unchanged.`,
    `Close the connections to "${from}" (a TEMPLATE copy needs nobody connected) and run it again` +
      `${other ? `; or \`${other}\`` : ''}` +
      `${tool ? '; or install the PostgreSQL client programs (`pgx agent doctor` says how)' : ''}.`,
    { cause: err, ...(isPgxError(err) && err.data ? { data: err.data } : {}) },
  );
}
