// Branch checks, read from the registry and pg_database: counts by state, subagent branches per session, orphans
// in both directions, and the guards actually stored on every active branch compared with .pgx.toml.
import type { Config, GuardName } from '../project/config.js';
import { parseDuration } from '../project/config-values.js';
// A guard the server cannot take (GUARD_MIN_VERSION) is not expected on its branches.
import {
  branchRecords,
  databaseInfo,
  databaseSettings,
  fixStatement,
  GUARD_MIN_VERSION,
  isOwnBranch,
  stampedDatabases,
  stampedWithoutRecord,
  type BranchRecord,
} from '../engine/inspect.js';
import { sqlFix } from './sql-fix.js';
import { fail, ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

/** This project's records, or undefined when the server or registry is not there (the caller reports skip). */
async function projectRecords(ctx: DoctorContext): Promise<BranchRecord[] | 'no-server' | 'no-registry'> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return 'no-server';
  const reg = await ctx.registry();
  if (!reg) return 'no-registry';
  return branchRecords(reg, { project: ctx.config.project });
}

export async function branchesCheck(ctx: DoctorContext): Promise<Check> {
  const recs = await projectRecords(ctx);
  if (recs === 'no-server') return skipNoServer('branches', ctx);
  if (recs === 'no-registry') return ok('branches', 'none yet (no branch was ever made on this server)');
  const now = Date.now();
  const count = (st: string) => recs.filter((r) => r.state === st).length;
  const past = recs.filter((r) => new Date(r.deadline).getTime() < now);
  const perSession = new Map<string, number>();
  for (const r of recs.filter((x) => x.kind === 'subagent'))
    perSession.set(r.session_id ?? '?', (perSession.get(r.session_id ?? '?') ?? 0) + 1);
  const sessions = [...perSession].map(([sid, n]) => `${sid.slice(0, 8)}: ${n}`);
  const detail =
    `project "${ctx.config!.project}": ${count('active')} active, ${count('retiring')} retiring, ${past.length} past deadline` +
    (count('creating') ? `, ${count('creating')} creating` : '') +
    (sessions.length
      ? `; subagent branches per session: ${sessions.slice(0, 8).join(', ')}${sessions.length > 8 ? `, … (${sessions.length} sessions)` : ''}`
      : '');
  if (past.length)
    return warn(
      'branches',
      `${detail} (${past
        .slice(0, 5)
        .map((r) => r.name)
        .join(', ')}${past.length > 5 ? ', …' : ''})`,
      'pgx agent gc',
    );
  return ok('branches', detail);
}

export async function orphansCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('orphans', ctx);
  const reg = await ctx.registry();
  // With no registry, every stamped database is an orphan (the registry was dropped, or another server's copy).
  const orphanDbs = reg ? await stampedWithoutRecord(reg) : await stampedDatabases(s.db, 'branch');
  const recs = reg ? await branchRecords(reg, { project: ctx.config.project }) : [];
  // A 'creating' record has no database for a moment by design; it only counts once past its deadline.
  const noDb = recs.filter(
    (r) => r.db_exists === false && (r.state !== 'creating' || new Date(r.deadline).getTime() < Date.now()),
  );
  // A record whose name is held by a database pgx cannot prove it made (replaced, or appeared during a creation).
  const foreign: BranchRecord[] = [];
  for (const r of recs.filter((x) => x.db_exists && x.state !== 'creating')) {
    if (!isOwnBranch(await databaseInfo(s.db, r.name), r)) foreign.push(r);
  }
  if (!orphanDbs.length && !noDb.length && !foreign.length)
    return ok('orphans', 'none: every stamped database has a record, every record its own database');
  const parts: string[] = [];
  const fixes: string[] = [];
  if (foreign.length) {
    parts.push(
      `${foreign.length} record(s) whose database is not the one pgx made (replaced by someone else's; every ` +
        `command on it is refused): ${foreign
          .slice(0, 5)
          .map((r) => r.name)
          .join(', ')}`,
    );
    fixes.push(
      foreign
        .slice(0, 5)
        .map((r) => `pgx agent forget --branch ${r.name}`)
        .join(' && '),
    );
  }
  if (noDb.length) {
    parts.push(
      `${noDb.length} record(s) whose database is gone: ${noDb
        .slice(0, 5)
        .map((r) => r.name)
        .join(', ')}`,
    );
    fixes.push(
      noDb
        .slice(0, 5)
        .map((r) => `pgx agent down --branch ${r.name}`)
        .join(' && '),
    );
  }
  if (orphanDbs.length) {
    // No DROP is suggested: without a record, nothing proves pgx made them (a stamp is text anyone can copy).
    parts.push(
      `${orphanDbs.length} database(s) carrying a pgx branch stamp but no record (server-wide): ` +
        `${orphanDbs.slice(0, 5).join(', ')}${orphanDbs.length > 5 ? ', …' : ''}; ` +
        'pgx cannot prove they are its own, so it never drops them: check what each holds, and drop it yourself only if you know it is a leftover',
    );
    fixes.push(
      orphanDbs
        .slice(0, 5)
        .map((d) => sqlFix(ctx.config, s.admin, fixStatement.describeDatabase(d)))
        .join(' && '),
    );
  }
  return warn('orphans', parts.join('; '), fixes.join(' && '));
}

/** The guard values .pgx.toml asks for on this server, as PostgreSQL stores them ('5000ms'). */
function expectedGuards(config: Config, versionNum: number): Partial<Record<GuardName, number>> {
  const out: Partial<Record<GuardName, number>> = {};
  if (!config.guards.enabled) return out;
  for (const [name, ms] of Object.entries(config.guards.settings) as [GuardName, number | null][]) {
    if (ms !== null && versionNum >= GUARD_MIN_VERSION[name]) out[name] = ms;
  }
  return out;
}

function storedMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value)) return Number(value); // a bare number is milliseconds for these three settings
  try {
    return parseDuration(value);
  } catch {
    return NaN;
  }
}

export async function guardsCheck(ctx: DoctorContext): Promise<Check> {
  const recs = await projectRecords(ctx);
  if (recs === 'no-server') return skipNoServer('guards', ctx);
  const config = ctx.config!;
  if (!config.guards.enabled) return ok('guards', 'disabled in .pgx.toml ([guards] enabled = false)');
  const s = await ctx.server();
  if (!s.ok) return skipNoServer('guards', ctx);
  const active = recs === 'no-registry' ? [] : recs.filter((r) => r.state === 'active' && r.db_exists);
  const want = expectedGuards(config, s.db.serverVersionNum);
  const missing: { branch: string; names: GuardName[] }[] = [];
  const differ: string[] = [];
  for (const r of active) {
    const have = await databaseSettings(s.db, r.name);
    const gone = (Object.keys(want) as GuardName[]).filter((g) => have[g] === undefined);
    if (gone.length) missing.push({ branch: r.name, names: gone });
    for (const g of Object.keys(want) as GuardName[]) {
      const ms = storedMs(have[g]);
      if (ms !== undefined && ms !== want[g]) differ.push(`${r.name} ${g}=${have[g]}`);
    }
  }
  const list = Object.entries(want)
    .map(([g, ms]) => `${g}=${ms}ms`)
    .join(', ');
  if (missing.length) {
    const fix = missing
      .slice(0, 5)
      .map((m) =>
        sqlFix(
          config,
          s.admin,
          fixStatement.setSettings(
            m.branch,
            m.names.map((g) => [g, `${want[g]}ms`]),
          ),
        ),
      )
      .join(' && ');
    return fail(
      'guards',
      `${missing.length} of ${active.length} active branch(es) lack guards: ${missing
        .slice(0, 5)
        .map((m) => `${m.branch} (${m.names.join(', ')})`)
        .join(', ')}; ` + `a stuck agent's session is not bounded there`,
      fix,
    );
  }
  if (differ.length)
    return warn(
      'guards',
      `set on all ${active.length} active branch(es), but some differ from .pgx.toml (made before it changed): ` +
        `${differ.slice(0, 5).join(', ')}`,
      'pgx agent gc (old branches age out), or pgx agent down --branch <name> to retire one now',
    );
  return ok(
    'guards',
    active.length
      ? `${list} on all ${active.length} active branch(es)`
      : `no active branch to check (new branches get ${list})`,
  );
}
