// `--session <prefix>`: `pgx agent ls` shows a session id's first 8 characters, so the commands that act on an
// existing branch (down, diff, reset, adopt, forget) take that prefix when it names one session of the project.
// Asked only when no branch has the id as given (a full id costs nothing more); an ambiguous prefix is a usage
// error listing the candidates in full. exec and up take the id as given: they create a branch for a new session.
import { PgxError } from '../lib/errors.js';
import * as records from '../registry/records.js';
import type { RegistryDb } from './inspect.js';

/** Shorter than this, a prefix is too likely to be a slip (and `down --session a` would retire a whole session). */
export const MIN_SESSION_PREFIX = 4;

/** The one session id of `project` that starts with `given`, or `given` itself when none does (or it is too short). */
export async function fullSessionId(registry: RegistryDb, project: string, given: string): Promise<string> {
  if (given.length < MIN_SESSION_PREFIX) return given;
  const ids = [
    ...new Set(
      (await records.findRecords(registry, { project }))
        .map((r) => r.session_id)
        .filter((s): s is string => !!s && s.startsWith(given)),
    ),
  ];
  if (ids.length <= 1) return ids[0] ?? given;
  throw new PgxError(
    'USAGE',
    `--session ${given} is the start of ${ids.length} sessions of project "${project}": ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', …' : ''}.`,
    'Give more of the id, enough to name one of them (`pgx agent ls --json` has every session_id in full).',
  );
}
