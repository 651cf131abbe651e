// The PostgreSQL client programs (psql, pg_dump, pg_restore): found or not, and their majors against the server's
// (issue 39, decision 488). pgx itself needs none of them for its main job (branches, clones, forks of a session
// branch nobody is connected to, resets, diffs, masking, `pgx local sql`), so a missing one is the user's call, never
// a failure: the check says what still works, what does not, and the command that gets them (with root, and without).
// What needs which program is this file's one table (NEEDS): the only place to change when a copy stops needing one.
import { clientTools, type ClientTool } from '../engine/inspect.js';
import { decide, ok, type Check, type DoctorContext } from './types.js';

/** What pgx does with each program; without it, that and only that does not work. */
const NEEDS: Record<ClientTool['tool'], string[]> = {
  // Copies of a connected database, imports and syncs from a URL go by the Node copy without it (decision 480): pg_dump
  // is only the faster way for a small database, so its absence costs time, never a feature.
  pg_dump: [],
  psql: ['importing a plain SQL dump', '`pgx local psql`'],
  pg_restore: ['`pgx source import` of a custom or directory dump (a URL needs none)'],
};

/** What keeps working with none of them. */
const WORKS =
  'branches, clones and the warm pool, forks and resets of a session branch (connected or not: the Node copy), ' +
  '`pgx source import --from <url>` and `sync`, `template refresh`, ' +
  "`agent diff`, masking, and `pgx local sql` (pgx's own driver; `pgx local url`/`env` for your own client)";

/** How to get them: with root, and without (a user whose database runs in a container). */
const GET_THEM =
  'with root: `apt-get install postgresql-client` (Debian/Ubuntu; a newer major from apt.postgresql.org), ' +
  '`brew install libpq` (macOS); without root: README, "Client programs" (unpack the Debian package into your home ' +
  'and put its bin directory first on PATH)';

export async function clientToolsCheck(ctx: DoctorContext): Promise<Check> {
  const tools = clientTools(ctx.home);
  const s = await ctx.server();
  const serverMajor = s.ok ? Number(/^(\d+)/.exec(s.version)?.[1] ?? NaN) : NaN;
  const found = tools.filter((t) => t.path);
  const missing = tools.filter((t) => !t.path).map((t) => t.tool);
  // pg_dump refuses a server of a newer major; psql and pg_restore of an older one lose features (and a restore of a
  // newer dump fails). Only known majors are compared.
  const older = found.filter((t) => t.major !== null && Number.isFinite(serverMajor) && t.major < serverMajor);
  const named = found.map((t) => `${t.tool} ${t.major ?? '?'}`).join(', ');
  const server = Number.isFinite(serverMajor) ? ` (server ${serverMajor})` : '';
  if (!missing.length && !older.length) return ok('client-tools', `${named}${server}`);
  const lacking = new Set([...missing, ...older.map((t) => t.tool)]);
  const cannot = (Object.keys(NEEDS) as ClientTool['tool'][]).filter((t) => lacking.has(t)).flatMap((t) => NEEDS[t]);
  const detail =
    `${missing.length ? `not found: ${missing.join(', ')} (looked in PGX_PG_BINDIR, on PATH, with the local server's binaries)` : ''}` +
    `${missing.length && older.length ? '; ' : ''}` +
    `${older.length ? `older than the server: ${older.map((t) => `${t.tool} ${t.major}`).join(', ')}${server} (pg_dump refuses a newer server)` : ''}` +
    `${found.length && missing.length ? `; found: ${named}` : ''}. ` +
    (cannot.length
      ? `Without them these do not work: ${cannot.join('; ')}. Everything else does: ${WORKS}`
      : `Nothing stops working without it: ${WORKS}; copies go by the Node copy where pg_dump would have been faster`);
  return decide(
    'client-tools',
    detail,
    `nothing is needed if none of that is yours to do; else get ${Number.isFinite(serverMajor) ? `version ${serverMajor} or newer` : 'them'}: ${GET_THEM}`,
  );
}
