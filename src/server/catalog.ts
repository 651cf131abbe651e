// The catalog: every statement pgx makes about databases and roles (create, rename, allow/deny connections,
// settings, drop, backends), the stamps that say which databases pgx made, and the one
// way a name or a value reaches SQL text. No other module writes such SQL; the engine decides WHEN, this module HOW.
import { randomBytes } from 'node:crypto';
import { PgxError } from '../lib/errors.js';
import type { Db } from './db.js';
import { SQLSTATE, sqlstateOf } from './sqlstate.js';

// The SQLSTATE names live in sqlstate.ts (db.ts needs them too, and imports nothing of this module); re-exported
// here so that the engine keeps one import for the catalog.
export { SQLSTATE, sqlstateOf } from './sqlstate.js';

/** The ONE identifier quoting: always quoted, so case and any character survive. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Literal quoting for the few statements that take no bind parameters (COMMENT, ALTER … SET). */
export function quoteLiteral(value: string): string {
  const body = value.replace(/'/g, "''");
  // E'' only when needed, so the text also reads right with standard_conforming_strings off.
  return value.includes('\\') ? `E'${body.replace(/\\/g, '\\\\')}'` : `'${body}'`;
}

// ---------------------------------------------------------------------------------------------------------------
// Stamps: COMMENT ON DATABASE 'pgx:<kind>…'. Nothing is dropped, renamed or altered without reading its stamp first;
// comments are not copied by CREATE DATABASE … TEMPLATE, so a clone never inherits one.

/** The one prefix table. Order matters for parsing: `template-building:` before `template:` is not a prefix clash. */
export const STAMP_PREFIX = {
  branch: 'pgx:branch:',
  template: 'pgx:template:',
  building: 'pgx:template-building:',
  pool: 'pgx:pool:',
  /** A `pgx source import` in progress (or a killed one's leftover); the stamp is removed when the import succeeds. */
  importing: 'pgx:source-importing:',
  /**
   * A finished copy made by `pgx source import`/`sync` (the project's source). It is pgx's while the registry's
   * pgx_source record carries the same nonce: only then may `pgx source sync` replace and drop it.
   */
  source: 'pgx:source:',
  /** A frozen copy of a branch that its forks clone (engine/freeze.ts). */
  frozen: 'pgx:frozen:',
  registry: 'pgx:registry',
} as const;

export interface TemplateStamp {
  project: string;
  source: string | null;
  fingerprint: string | null;
  refreshed_at: string;
  method: 'empty' | 'template-copy' | 'dump-restore' | 'node-copy';
  /**
   * Owners and GRANTs of the source's objects: 'kept' (a template copy, or a dump restored with them), 'dropped' (a
   * dump restored without them because the admin role may not take on the owners' roles: objects owned by the admin).
   * Absent: no source, or a template made before this was recorded.
   */
  privileges?: 'kept' | 'dropped';
  /** The [mask] rules' digest the template's data was masked with (src/mask/rules.ts); absent or null: unmasked. */
  mask?: string | null;
}

export type Stamp =
  /**
   * A branch. `nonce` is the random value its registry record got before the database was created (under the
   * pgx-only name `pgx_new_<nonce>`, then renamed into place): a stamp is text anyone can copy, so a database is
   * this record's only when the stamp carries the record's nonce. (Branches made before nonces have none.)
   */
  | { kind: 'branch'; identityKey: string; nonce?: string }
  /** A finished template. */
  | ({ kind: 'template' } & TemplateStamp)
  /** A template build in progress (or a killed one's leftover). */
  | { kind: 'building'; project: string; started_at: string; baseline_of?: string }
  /**
   * A pre-cloned branch waiting in the warm pool (src/engine/pool.ts), claimed by rename. `generation` is the oid of
   * the template database it was cloned from: a refresh makes a new template database, so a member belongs to
   * exactly one template build.
   */
  | { kind: 'pool'; project: string; template: string; generation: string; member?: string }
  /** A source being imported (`from`: the URL without its password, or the dump's path; `nonce`: of its copy record). */
  | { kind: 'importing'; project: string; from: string; started_at: string; nonce?: string }
  /** A finished imported copy (origin details are in the registry, which only the admin may read). */
  | { kind: 'source'; project: string; nonce: string; imported_at: string; mask?: string | null }
  /** A frozen copy of branch `parent` (`nonce`: of its pgx_frozen record, which names it pgx_frz_<nonce>). */
  | { kind: 'frozen'; project: string; parent: string; nonce: string; taken_at: string }
  | { kind: 'registry' };

export function formatStamp(s: Stamp): string {
  switch (s.kind) {
    case 'branch':
      return STAMP_PREFIX.branch + s.identityKey + (s.nonce ? `:${s.nonce}` : '');
    case 'registry':
      return STAMP_PREFIX.registry;
    default: {
      const { kind, ...body } = s;
      return STAMP_PREFIX[kind] + JSON.stringify(body);
    }
  }
}

/** The stamp a comment carries; undefined for no comment or anything pgx did not write. */
export function parseStamp(comment: string | null): Stamp | undefined {
  if (!comment) return undefined;
  if (comment === STAMP_PREFIX.registry) return { kind: 'registry' };
  if (comment.startsWith(STAMP_PREFIX.branch)) {
    const m = /^([0-9a-f]{64})(?::([a-z0-9]{16}))?$/.exec(comment.slice(STAMP_PREFIX.branch.length));
    if (!m) return undefined;
    return m[2] ? { kind: 'branch', identityKey: m[1]!, nonce: m[2] } : { kind: 'branch', identityKey: m[1]! };
  }
  for (const kind of ['building', 'template', 'pool', 'importing', 'source', 'frozen'] as const) {
    if (!comment.startsWith(STAMP_PREFIX[kind])) continue;
    try {
      const body = JSON.parse(comment.slice(STAMP_PREFIX[kind].length)) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || typeof body.project !== 'string') return undefined;
      return { ...body, kind } as Stamp;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export async function writeStamp(db: Db, name: string, stamp: Stamp): Promise<void> {
  await db.query(`COMMENT ON DATABASE ${quoteIdent(name)} IS ${quoteLiteral(formatStamp(stamp))}`);
}

/** Removes a stamp: pgx no longer claims the database (an imported source, once it is complete, is the user's). */
export async function clearStamp(db: Db, name: string): Promise<void> {
  await db.query(`COMMENT ON DATABASE ${quoteIdent(name)} IS NULL`);
}

export interface DatabaseInfo {
  exists: boolean;
  comment: string | null;
  stamp: Stamp | undefined;
  allowConn: boolean;
  isTemplate: boolean;
}

export async function databaseInfo(db: Db, name: string): Promise<DatabaseInfo> {
  const [row] = await db.query<{ comment: string | null; datallowconn: boolean; datistemplate: boolean }>(
    `SELECT shobj_description(oid, 'pg_database') AS comment, datallowconn, datistemplate FROM pg_database WHERE datname = $1`,
    [name],
  );
  if (!row) return { exists: false, comment: null, stamp: undefined, allowConn: false, isTemplate: false };
  return {
    exists: true,
    comment: row.comment,
    stamp: parseStamp(row.comment),
    allowConn: row.datallowconn,
    isTemplate: row.datistemplate,
  };
}

/** Does the stamp say this is `identityKey`'s branch (or, without a key, any pgx branch)? */
export function isBranchStamp(stamp: Stamp | undefined, identityKey?: string): boolean {
  return stamp?.kind === 'branch' && (identityKey === undefined || stamp.identityKey === identityKey);
}

/**
 * Is this database the one pgx made for this record? Its stamp must carry the record's identity AND nonce: a copied
 * stamp (another branch's, or this branch's own copied onto a stranger before it was dropped) never carries the nonce
 * of the record it would be judged against, unless copied from this very database. A record without a nonce (made
 * before nonces) is judged by the identity alone.
 */
export function isOwnBranch(info: DatabaseInfo, rec: { identity_key: string; nonce?: string | null }): boolean {
  const s = info.stamp;
  return (
    info.exists &&
    s?.kind === 'branch' &&
    s.identityKey === rec.identity_key &&
    (s.nonce ?? null) === (rec.nonce ?? null)
  );
}

/**
 * Is this the copy pgx made for the source record? Its stamp must carry the record's nonce (a stamp is text anyone
 * can copy; the nonce is only in the registry, which only the admin reads).
 */
export function isOwnSourceCopy(info: DatabaseInfo, rec: { nonce: string }): boolean {
  const s = info.stamp;
  return info.exists && (s?.kind === 'source' || s?.kind === 'importing') && s.nonce === rec.nonce;
}

/** The pgx-only name a source copy is made under (and set aside under when it is replaced): nonce 16 of [a-z0-9]. */
export function sourceCopyName(nonce: string): string {
  return `pgx_src_${nonce}`;
}

/** The pgx-only name of a frozen copy (engine/freeze.ts), recorded before it exists (nonce: 16 of [a-z0-9]). */
export function frozenCopyName(nonce: string): string {
  return `pgx_frz_${nonce}`;
}

/** Is this the frozen copy of that record: named and stamped with its nonce (unstamped: only a killed maker's)? */
export function isOwnFrozenCopy(info: DatabaseInfo, rec: { nonce: string }): boolean {
  return info.exists && info.stamp?.kind === 'frozen' && info.stamp.nonce === rec.nonce;
}

/** A nonce for a pgx-only name (16 of [a-z0-9]): branch creations, frozen copies, resets, imports. */
export function newNonce(): string {
  return Array.from(randomBytes(16), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');
}

/** The pgx-only name a branch is created under before it is renamed into place (nonce: 16 of [a-z0-9]). */
export function creationName(nonce: string): string {
  return `pgx_new_${nonce}`;
}

/** Throws unless `name` is absent or carries a pgx branch stamp (and, when given, the stamp of this identity). */
export async function assertBranchStamp(db: Db, name: string, identityKey?: string): Promise<DatabaseInfo> {
  const info = await databaseInfo(db, name);
  if (info.exists && !isBranchStamp(info.stamp, identityKey)) {
    throw new PgxError(
      'NOT_PGX_DATABASE',
      `Refusing to touch database "${name}": it does not carry ${identityKey ? "this branch's" : 'a'} pgx stamp.`,
      'pgx only drops, renames or alters databases it created. Use psql / dropdb yourself if you really mean it.',
    );
  }
  return info;
}

/** Databases whose stamp is of this kind, by name. */
export async function stampedDatabases(db: Db, kind: keyof typeof STAMP_PREFIX): Promise<string[]> {
  const rows = await db.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE left(shobj_description(oid, 'pg_database'), $2) = $1 ORDER BY 1`,
    [STAMP_PREFIX[kind], STAMP_PREFIX[kind].length],
  );
  return rows.map((r) => r.datname);
}

export interface StampedDatabase {
  name: string;
  stamp: Stamp;
  bytes: number;
  isTemplate: boolean;
}

/** Every database carrying a stamp of one of these kinds, with its size (`pgx template ls`, template gc). */
export async function stampedDatabasesOf(db: Db, kinds: (keyof typeof STAMP_PREFIX)[]): Promise<StampedDatabase[]> {
  const rows = await db.query<{ datname: string; comment: string; bytes: string; datistemplate: boolean }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS comment, pg_database_size(oid)::text AS bytes, datistemplate
       FROM pg_database WHERE left(shobj_description(oid, 'pg_database'), 4) = 'pgx:' ORDER BY datname`,
  );
  const out: StampedDatabase[] = [];
  for (const r of rows) {
    const stamp = parseStamp(r.comment);
    if (stamp && kinds.includes(stamp.kind))
      out.push({ name: r.datname, stamp, bytes: Number(r.bytes), isTemplate: r.datistemplate });
  }
  return out;
}

/** Databases whose name starts with `prefix` (a template's builds and asides). */
export async function databasesNamedLike(db: Db, prefix: string): Promise<string[]> {
  const rows = await db.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE left(datname, $2) = $1 ORDER BY 1',
    [prefix, prefix.length],
  );
  return rows.map((r) => r.datname);
}

// ---------------------------------------------------------------------------------------------------------------
// Databases

export type CloneStrategy = 'WAL_LOG' | 'FILE_COPY';

export interface CreateOptions {
  template: string;
  /** PostgreSQL 15+; omitted on older servers. */
  strategy?: CloneStrategy;
  /** PostgreSQL 18+: how FILE_COPY copies files (`clone` uses reflinks where the file system has them). */
  fileCopyMethod?: 'copy' | 'clone';
  /** false: the database refuses connections from its creation (a warm-pool member until claimed). */
  allowConnections?: boolean;
}

export async function createDatabase(db: Db, name: string, o: CreateOptions): Promise<void> {
  if (o.fileCopyMethod && db.serverVersionNum >= 180000)
    await db.query(`SET file_copy_method = ${quoteLiteral(o.fileCopyMethod)}`);
  const strategy = o.strategy && db.serverVersionNum >= 150000 ? ` STRATEGY ${o.strategy}` : '';
  const conn = o.allowConnections === false ? ' ALLOW_CONNECTIONS false' : '';
  await db.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(o.template)}${strategy}${conn}`);
}

/** Creates an empty database from template0 (a restore's target: nothing of template1's local additions in it). */
export async function createEmptyDatabase(db: Db, name: string): Promise<void> {
  await db.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE template0`);
}

/** CHECKPOINT, when this role may (superuser, or pg_checkpoint on PostgreSQL 15+); false when it may not. */
export async function checkpoint(db: Db): Promise<boolean> {
  try {
    await db.query('CHECKPOINT');
    return true;
  } catch {
    return false;
  }
}

/** The server's data directory, when this role may read it (superuser or pg_read_all_settings). */
export async function dataDirectory(db: Db): Promise<string | undefined> {
  try {
    return (await db.query<{ data_directory: string }>('SHOW data_directory'))[0]?.data_directory;
  } catch {
    return undefined;
  }
}

/** Creates `name` (from template1) unless it exists; true when this call made it. */
export async function createDatabaseIfMissing(db: Db, name: string): Promise<boolean> {
  try {
    await db.query(`CREATE DATABASE ${quoteIdent(name)}`);
    return true;
  } catch (e) {
    // 23505: two creators raced in the catalog's unique index rather than in the name check.
    const code = sqlstateOf(e);
    if (code === SQLSTATE.DUPLICATE_DATABASE || code === SQLSTATE.UNIQUE_VIOLATION) return false;
    throw e;
  }
}

export async function databaseSize(db: Db, name: string): Promise<number> {
  const [row] = await db.query<{ size: string }>('SELECT pg_database_size($1)::text AS size', [name]);
  return Number(row!.size);
}

/**
 * What a copy of `name` writes, and where: its size, and its default tablespace's location ('': the data
 * directory; relative: an in-place tablespace under it). Undefined: no such database.
 */
export async function copySource(
  db: Db,
  name: string,
): Promise<{ bytes: number; tablespace: string; location: string } | undefined> {
  const [row] = await db.query<{ bytes: string; tablespace: string; location: string }>(
    `SELECT pg_database_size(d.oid)::text AS bytes, t.spcname AS tablespace, pg_tablespace_location(d.dattablespace) AS location
       FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace WHERE d.datname = $1`,
    [name],
  );
  return row ? { bytes: Number(row.bytes), tablespace: row.tablespace, location: row.location } : undefined;
}

/**
 * Where the server keeps its files (undefined without superuser or pg_read_all_settings), what its postmaster.pid
 * says when the directory is this machine's (its port and start time, epoch seconds), and shared_buffers in bytes.
 */
export async function serverPlace(
  db: Db,
): Promise<{ dataDirectory?: string; port: number; startedAt: number; sharedBuffers: number }> {
  const [row] = await db.query<{
    data_directory: string | null;
    port: string;
    started: string;
    shared_buffers: string;
  }>(
    `SELECT CASE WHEN pg_has_role('pg_read_all_settings', 'member') THEN current_setting('data_directory') END AS data_directory,
            current_setting('port') AS port, extract(epoch FROM pg_postmaster_start_time())::bigint::text AS started,
            pg_size_bytes(current_setting('shared_buffers'))::text AS shared_buffers`,
  );
  return {
    ...(row!.data_directory ? { dataDirectory: row!.data_directory } : {}),
    port: Number(row!.port),
    startedAt: Number(row!.started),
    sharedBuffers: Number(row!.shared_buffers),
  };
}

/** The database's oid (undefined: no such database). A rebuilt database under the same name has a new one. */
/** The database with this oid now (a template build keeps its oid when a refresh renames it aside), if any. */
export async function databaseNamed(db: Db, oid: string): Promise<string | undefined> {
  const [r] = await db.query<{ datname: string }>('SELECT datname FROM pg_database WHERE oid = $1::oid', [oid]);
  return r?.datname;
}

export async function databaseOid(db: Db, name: string): Promise<string | undefined> {
  const [row] = await db.query<{ oid: string }>('SELECT oid::text AS oid FROM pg_database WHERE datname = $1', [name]);
  return row?.oid;
}

/**
 * What runs on a database now, for the frozen copies' freshness proof (engine/freeze.ts). Every backend on it but
 * autovacuum (which changes no row anyone reads): pid, start, last state change (every statement moves it, twice)
 * and state; how many of them are not idle or could not be read (another role's, without pg_read_all_stats: NULL);
 * the prepared transactions on it (COMMIT PREPARED may come from any database); its cumulative session count
 * (PostgreSQL 14+; a session leaves pg_stat_activity only after its counters are flushed) and the counters' reset
 * times (its own, and pg_stat_archiver's, which a crash restart moves). null: no such database.
 */
export interface DatabaseActivity {
  oid: string;
  backends: string;
  busy: number;
  prepared: number;
  sessions: string | null;
  resets: string | null;
  tracked: boolean;
}

export async function databaseActivity(db: Db, name: string): Promise<DatabaseActivity | null> {
  const sessions =
    db.serverVersionNum >= 140000
      ? '(SELECT s.sessions::text FROM pg_stat_database s WHERE s.datid = d.oid)'
      : 'NULL::text';
  const [row] = await db.query<DatabaseActivity>(
    `SELECT d.oid::text AS oid,
            (SELECT coalesce(string_agg(concat_ws('/', a.pid, extract(epoch FROM a.backend_start),
              extract(epoch FROM a.state_change), a.state), ',' ORDER BY a.pid), '')
               FROM pg_stat_activity a WHERE a.datid = d.oid AND a.pid <> pg_backend_pid() AND a.backend_type IS DISTINCT FROM 'autovacuum worker') AS backends,
            (SELECT count(*) FROM pg_stat_activity a WHERE a.datid = d.oid AND a.pid <> pg_backend_pid() AND a.backend_type IS DISTINCT FROM 'autovacuum worker'
                AND (a.state IS NULL OR a.state_change IS NULL
                  OR a.state NOT IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')))::int AS busy,
            (SELECT count(*) FROM pg_prepared_xacts x WHERE x.database = d.datname)::int AS prepared,
            ${sessions} AS sessions,
            concat_ws('@', (SELECT extract(epoch FROM s.stats_reset) FROM pg_stat_database s WHERE s.datid = d.oid),
              (SELECT extract(epoch FROM a.stats_reset) FROM pg_stat_archiver a)) AS resets,
            (current_setting('track_counts')::bool AND current_setting('track_activities')::bool) AS tracked
       FROM pg_database d WHERE d.datname = $1`,
    [name],
  );
  return row ?? null;
}

export async function renameDatabase(db: Db, from: string, to: string): Promise<void> {
  await db.query(`ALTER DATABASE ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`);
}

export async function allowConnections(db: Db, name: string, allow: boolean): Promise<void> {
  await db.query(`ALTER DATABASE ${quoteIdent(name)} WITH ALLOW_CONNECTIONS ${allow}`);
}

/** A finished template: nobody connects (so no open session makes a clone fail with 55006), clonable by anyone. */
export async function freezeAsTemplate(db: Db, name: string): Promise<void> {
  await db.query(`ALTER DATABASE ${quoteIdent(name)} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
}

/** Drops a database (a template too: IS_TEMPLATE is cleared first, as DROP requires). WITH (FORCE) on 13+. */
export async function dropDatabase(db: Db, name: string, o: { isTemplate?: boolean } = {}): Promise<void> {
  if (o.isTemplate) await db.query(`ALTER DATABASE ${quoteIdent(name)} WITH IS_TEMPLATE false`);
  await db.query(`DROP DATABASE ${quoteIdent(name)}${db.serverVersionNum >= 130000 ? ' WITH (FORCE)' : ''}`);
}

/** Per-database settings (role-independent): `value` null resets. `setting` is a validated GUC name. */
export async function setDatabaseSetting(db: Db, name: string, setting: string, value: string | null): Promise<void> {
  if (value === null) await db.query(`ALTER DATABASE ${quoteIdent(name)} RESET ${quoteIdent(setting)}`);
  else await db.query(`ALTER DATABASE ${quoteIdent(name)} SET ${quoteIdent(setting)} = ${quoteLiteral(value)}`);
}

/** The settings stored for a database (pg_db_role_setting, role-independent rows). */
export async function databaseSettings(db: Db, name: string): Promise<Record<string, string>> {
  const rows = await db.query<{ setconfig: string[] | null }>(
    `SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = $1 AND s.setrole = 0`,
    [name],
  );
  const out: Record<string, string> = {};
  for (const kv of rows[0]?.setconfig ?? []) {
    const i = kv.indexOf('=');
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/** Sessions on the database other than this one. */
export async function countBackends(db: Db, name: string): Promise<number> {
  const [r] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [name],
  );
  return r!.n;
}

/**
 * Who is connected to a database (not this session): how many backends, and the distinct application names they gave
 * (a client's own words: the caller shows them only as plain names).
 */
export async function backendsOn(db: Db, name: string): Promise<{ n: number; apps: string[] }> {
  const [r] = await db.query<{ n: number; apps: string[] | null }>(
    `SELECT count(*)::int AS n, array_agg(DISTINCT application_name) FILTER (WHERE application_name <> '') AS apps
       FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    [name],
  );
  return { n: r!.n, apps: r!.apps ?? [] };
}

/** Polls `count` every 25 ms until it is 0 or `waitMs` have passed (terminated backends take a moment to go); its last value. */
async function untilNone(count: () => Promise<number>, waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  let remaining = await count();
  while (remaining > 0 && Date.now() <= deadline) {
    await new Promise((res) => setTimeout(res, 25));
    remaining = await count();
  }
  return remaining;
}

export interface TerminateResult {
  backends_terminated: number;
  backends_remaining: number;
}

/**
 * Ends every other backend whose `column` (its database, or its role) is `value`, then waits (bounded) until they are
 * gone: how many it ended, and how many are still there.
 */
async function terminateWhere(
  db: Db,
  column: 'datname' | 'usename',
  value: string,
  waitMs: number,
): Promise<{ terminated: number; remaining: number }> {
  const [t] = await db.query<{ n: number }>(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE ${column} ` +
      `= $1 AND pid <> pg_backend_pid()`,
    [value],
  );
  const count = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${column} = $1 AND pid <> pg_backend_pid()`,
        [value],
      )
    )[0]!.n;
  return { terminated: t!.n, remaining: await untilNone(count, waitMs) };
}

/** Ends every backend on the database and waits (bounded) until they are gone. */
export async function terminateBackends(db: Db, name: string, waitMs = 2000): Promise<TerminateResult> {
  const r = await terminateWhere(db, 'datname', name, waitMs);
  return { backends_terminated: r.terminated, backends_remaining: r.remaining };
}

// ---------------------------------------------------------------------------------------------------------------
// Roles and the server

export interface RoleInfo {
  rolname: string;
  rolcreatedb: boolean;
  rolsuper: boolean;
  rolcreaterole: boolean;
}

/** Which of these roles exist. */
export async function existingRoles(db: Db, names: string[]): Promise<Set<string>> {
  const rows = await db.query<{ rolname: string }>('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [names]);
  return new Set(rows.map((r) => r.rolname));
}

/** A role that owns objects but cannot log in (ownership in an imported dump survives); false if it exists. */
export async function createNoLoginRole(db: Db, name: string): Promise<boolean> {
  try {
    await db.query(`CREATE ROLE ${quoteIdent(name)} NOLOGIN`);
    return true;
  } catch (e) {
    if (sqlstateOf(e) === SQLSTATE.DUPLICATE_OBJECT) return false; // created meanwhile
    throw e;
  }
}

export async function currentRole(db: Db): Promise<RoleInfo | undefined> {
  const [r] = await db.query<RoleInfo>(
    'SELECT rolname, rolcreatedb, rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user',
  );
  return r;
}

// Branch roles (engine/roles.ts decides when). A branch role is stamped with COMMENT ON ROLE 'pgx:role'; nothing
// alters or drops a role without that stamp.
export const ROLE_STAMP = 'pgx:role';

/**
 * Creates a branch role with its stamp, in one implicit transaction (one simple-protocol message): a crash leaves
 * both or neither. `verifier` is a SCRAM verifier computed by pgx, so the password itself never reaches the server's
 * statement text (or its log). On a non-superuser admin the role is also granted to the admin (PG16+: ADMIN alone
 * does not let it give the role ownership of objects).
 */
export async function createBranchRole(
  db: Db,
  role: string,
  verifier: string,
  o: { login: boolean; grantToAdmin: boolean },
): Promise<void> {
  const r = quoteIdent(role);
  const attrs = `${o.login ? 'LOGIN' : 'NOLOGIN'} NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT`;
  await db.query(
    `CREATE ROLE ${r} ${attrs} PASSWORD ${quoteLiteral(verifier)}; COMMENT ON ROLE ${r} IS ${quoteLiteral(ROLE_STAMP)};` +
      (o.grantToAdmin ? ` GRANT ${r} TO CURRENT_USER;` : ''),
  );
}

export interface BranchRoleInfo {
  exists: boolean;
  /** Carries pgx's role stamp. */
  stamped: boolean;
  canLogin: boolean;
}

export async function branchRoleInfo(db: Db, role: string): Promise<BranchRoleInfo> {
  const [r] = await db.query<{ comment: string | null; rolcanlogin: boolean }>(
    `SELECT shobj_description(oid, 'pg_authid') AS comment, rolcanlogin FROM pg_roles WHERE rolname = $1`,
    [role],
  );
  return r
    ? { exists: true, stamped: r.comment === ROLE_STAMP, canLogin: r.rolcanlogin }
    : { exists: false, stamped: false, canLogin: false };
}

export async function setRoleLogin(db: Db, role: string, login: boolean): Promise<void> {
  await db.query(`ALTER ROLE ${quoteIdent(role)} ${login ? 'LOGIN' : 'NOLOGIN'}`);
}

/** Only the role has CONNECT (besides the owner, the admin); it may create schemas and temporary tables there. */
export async function grantBranchAccess(db: Db, database: string, role: string): Promise<void> {
  const d = quoteIdent(database);
  await db.query(
    `REVOKE CONNECT, TEMPORARY ON DATABASE ${d} FROM PUBLIC; GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${d} TO ${quoteIdent(role)}`,
  );
}

/** pgx's own databases (the registry): nobody but the admin connects. */
/** Does PUBLIC still have CONNECT on the database (PostgreSQL's default)? */
export async function publicCanConnect(db: Db, database: string): Promise<boolean> {
  const [r] = await db.query<{ ok: boolean }>(`SELECT has_database_privilege('public', $1, 'CONNECT') AS ok`, [
    database,
  ]);
  return r!.ok;
}

export async function revokePublicConnect(db: Db, database: string): Promise<void> {
  await db.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${quoteIdent(database)} FROM PUBLIC`);
}

/**
 * Run on a connection TO the branch: gives `role` every object of the branch that a migration may alter or drop
 * (schemas, relations, types, routines, collations, conversions, operators, text search dictionaries and
 * configurations, extended statistics, large objects), one ALTER … OWNER per object, in one round trip.
 *
 * Not REASSIGN OWNED: it also reassigns the old owner's SHARED objects (databases, tablespaces), so run for the
 * admin it would hand the role the source database, the template and pgx_registry. Skipped: PostgreSQL's own objects
 * (oid below 16384, except the `public` schema), extension members (the extension owns them), objects whose owner
 * the admin is not (a non-superuser admin can't give them away), sequences owned by a column (they follow their
 * table), and the branch database itself (owning it would let the role rewrite its stamp or drop it).
 */
export async function transferOwnershipInBranch(branch: Db, role: string): Promise<void> {
  const ext = (cat: string, x: string) =>
    `NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.classid = '${cat}'::regclass AND dep.objid = ${x}.oid ` +
    `AND dep.deptype = 'e')`;
  const mine = (owner: string) => `${owner} <> to_regrole(${quoteLiteral(role)}) AND pg_has_role(${owner}, 'USAGE')`;
  const loop = (
    select: string,
    alter: string,
  ) => `  FOR r IN ${select} LOOP EXECUTE format(${alter}, r.obj, role); END LOOP;
`;
  const body =
    loop(
      `SELECT quote_ident(n.nspname) AS obj FROM pg_namespace n WHERE (n.oid >= 16384 OR n.nspname = 'public') ` +
        `AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' AND ${mine('n.nspowner')} AND ${ext('pg_namespace', 'n')}`,
      `'ALTER SCHEMA %s OWNER TO %I'`,
    ) +
    `  FOR r IN SELECT c.oid::regclass::text AS obj, c.relkind FROM pg_class c WHERE c.oid >= 16384 AND c.relkind IN ('r','p','v','m','f','c','S')
      AND ${mine('c.relowner')} AND ${ext('pg_class', 'c')}
      AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.classid = 'pg_class'::regclass AND dep.objid = c.oid
        AND dep.refclassid = 'pg_class'::regclass AND dep.deptype IN ('a','i')))
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I',
      CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE'
        WHEN 'c' THEN 'TYPE' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
      r.obj, role);
  END LOOP;
` +
    loop(
      `SELECT t.oid::regtype::text AS obj FROM pg_type t WHERE t.oid >= 16384 AND t.typtype IN ('b','d','e','r') ` +
        `AND t.typcategory <> 'A' AND ${mine('t.typowner')} AND ${ext('pg_type', 't')}`,
      `'ALTER TYPE %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT p.oid::regprocedure::text AS obj FROM pg_proc p WHERE p.oid >= 16384 AND ${mine('p.proowner')} ` +
        `AND ${ext('pg_proc', 'p')}`,
      `'ALTER ROUTINE %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT format('%I.%I', n.nspname, c.collname) AS obj FROM pg_collation c JOIN pg_namespace n ON n.oid ` +
        `= c.collnamespace WHERE c.oid >= 16384 AND ${mine('c.collowner')} AND ${ext('pg_collation', 'c')}`,
      `'ALTER COLLATION %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT format('%I.%I', n.nspname, c.conname) AS obj FROM pg_conversion c JOIN pg_namespace n ON n.oid ` +
        `= c.connamespace WHERE c.oid >= 16384 AND ${mine('c.conowner')} AND ${ext('pg_conversion', 'c')}`,
      `'ALTER CONVERSION %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT o.oid::regoperator::text AS obj FROM pg_operator o WHERE o.oid >= 16384 AND ${mine('o.oprowner')} ` +
        `AND ${ext('pg_operator', 'o')}`,
      `'ALTER OPERATOR %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT t.oid::regdictionary::text AS obj FROM pg_ts_dict t WHERE t.oid >= 16384 AND ${mine('t.dictowner')} ` +
        `AND ${ext('pg_ts_dict', 't')}`,
      `'ALTER TEXT SEARCH DICTIONARY %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT c.oid::regconfig::text AS obj FROM pg_ts_config c WHERE c.oid >= 16384 AND ${mine('c.cfgowner')} ` +
        `AND ${ext('pg_ts_config', 'c')}`,
      `'ALTER TEXT SEARCH CONFIGURATION %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT format('%I.%I', n.nspname, s.stxname) AS obj FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid ` +
        `= s.stxnamespace WHERE ${mine('s.stxowner')} AND ${ext('pg_statistic_ext', 's')}`,
      `'ALTER STATISTICS %s OWNER TO %I'`,
    ) +
    loop(
      `SELECT l.oid::text AS obj FROM pg_largeobject_metadata l WHERE ${mine('l.lomowner')}`,
      `'ALTER LARGE OBJECT %s OWNER TO %I'`,
    );
  await branch.query(`DO $pgx$\nDECLARE r record; role text := ${quoteLiteral(role)};\nBEGIN\n${body}END\n$pgx$`);
}

export interface RoleBackends {
  terminated: number;
  remaining: number;
}

/** Ends every session of the role, on every database (the source included), and waits (bounded) until they are gone. */
export function terminateRoleBackends(db: Db, role: string, waitMs = 2000): Promise<RoleBackends> {
  return terminateWhere(db, 'usename', role, waitMs);
}

/**
 * Drops a stamped branch role. A role that still owns (or holds privileges on) something in another database can't
 * be dropped: the answer names those databases, and the role stays (NOLOGIN, stamped) for doctor to report.
 */
export async function dropBranchRole(
  db: Db,
  role: string,
): Promise<{ dropped: true } | { dropped: false; reason: string }> {
  try {
    await db.query(`DROP ROLE IF EXISTS ${quoteIdent(role)}`);
    return { dropped: true };
  } catch (e) {
    if (sqlstateOf(e) !== SQLSTATE.DEPENDENT_OBJECTS_STILL_EXIST) throw e;
    return {
      dropped: false,
      reason: `still owns or holds privileges on objects in ${(await roleDependentDatabases(db, role)).join(', ') || 'another database'}`,
    };
  }
}

/** The databases where `role` owns or holds privileges on something (pg_shdepend). */
export async function roleDependentDatabases(db: Db, role: string): Promise<string[]> {
  const rows = await db.query<{ d: string }>(
    `SELECT DISTINCT COALESCE(d.datname, '(shared objects)') AS d FROM pg_shdepend s LEFT JOIN pg_database d ON d.oid = s.dbid
      WHERE s.refclassid = 'pg_authid'::regclass AND s.refobjid = to_regrole($1) ORDER BY 1`,
    [role],
  );
  return rows.map((r) => r.d);
}

/** Roles carrying pgx's role stamp. */
export async function stampedRoles(db: Db): Promise<string[]> {
  const rows = await db.query<{ rolname: string }>(
    `SELECT rolname FROM pg_roles WHERE shobj_description(oid, 'pg_authid') = $1 ORDER BY 1`,
    [ROLE_STAMP],
  );
  return rows.map((r) => r.rolname);
}

export async function serverVersion(db: Db): Promise<string> {
  const [row] = await db.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  return row!.v;
}

/** The statements doctor prints as fixes, for the user to run: written here so that they quote as pgx does. */
export const fixStatement = {
  grantCreatedb: (role: string) => `ALTER ROLE ${quoteIdent(role)} CREATEDB`,
  /** Read-only: what a database is (size, comment), for a user deciding about a database pgx will not touch. */
  describeDatabase: (name: string) =>
    `SELECT datname, pg_size_pretty(pg_database_size(oid)), shobj_description(oid, 'pg_database') FROM pg_database ` +
    `WHERE datname = ${quoteLiteral(name)}`,
  createDatabase: (name: string) => `CREATE DATABASE ${quoteIdent(name)}`,
  dropDatabase: (name: string) => `DROP DATABASE ${quoteIdent(name)}`,
  renameDatabase: (from: string, to: string) => `ALTER DATABASE ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`,
  /** Read-only: who is connected to a database (a sync waits for them to leave the source's copy). */
  sessionsOn: (name: string) =>
    `SELECT pid, usename, application_name, backend_start FROM pg_stat_activity WHERE datname = ${quoteLiteral(name)}`,
  /** A branch role left owning objects: run in each database it names, then drop it. */
  dropLeftRole: (role: string, admin: string) =>
    `REASSIGN OWNED BY ${quoteIdent(role)} TO ${quoteIdent(admin)}; DROP OWNED BY ${quoteIdent(role)}`,
  dropRole: (role: string) => `DROP ROLE ${quoteIdent(role)}`,
  grantCreaterole: (role: string) => `ALTER ROLE ${quoteIdent(role)} CREATEROLE`,
  setSettings: (name: string, settings: [string, string][]) =>
    settings.map(([k, v]) => `ALTER DATABASE ${quoteIdent(name)} SET ${k} = ${quoteLiteral(v)}`).join('; '),
};

// ---------------------------------------------------------------------------------------------------------------
// What a database holds, for `pgx agent diff` (engine/diff.ts compares two of these). Run on a connection TO the
// database. Objects of PostgreSQL itself, of information_schema and of extensions (pg_depend 'e': the extension owns
// them, and its version stands for them) are left out. Definitions travel as md5s: a diff says WHAT changed, by name.

/** One schema object: its kind, its qualified name (quoted where it needs quotes) and an md5 of its definition. */
export interface SchemaObject {
  kind:
    | 'schema'
    | 'table'
    | 'column'
    | 'index'
    | 'constraint'
    | 'view'
    | 'function'
    | 'trigger'
    | 'sequence'
    | 'enum'
    | 'extension';
  name: string;
  def: string;
}

const USER_NS = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname !~ '^pg_(toast_)?temp_'`;
const notExtMember = (cat: string, x: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = '${cat}'::regclass AND e.objid = ${x} AND e.deptype = 'e')`;

export async function schemaObjects(db: Db): Promise<SchemaObject[]> {
  const rel = (relkinds: string) =>
    `c.relkind IN (${relkinds}) AND ${USER_NS} AND ${notExtMember('pg_class', 'c.oid')}`;
  return db.query<SchemaObject>(
    `SELECT kind, name, md5(def) AS def FROM (
       SELECT 'schema' AS kind, quote_ident(n.nspname) AS name, '' AS def FROM pg_namespace n WHERE ${USER_NS} AND ${notExtMember('pg_namespace', 'n.oid')}
       UNION ALL
       SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'view' WHEN 'S' THEN 'sequence' ELSE 'table' END,
              format('%I.%I', n.nspname, c.relname),
              CASE WHEN c.relkind IN ('v', 'm') THEN concat(c.relkind, pg_get_viewdef(c.oid))
                   WHEN c.relkind = 'S' THEN (SELECT concat_ws(' ', s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmax, s.seqmin, s.seqcache, s.seqcycle)
                     FROM pg_sequence s WHERE s.seqrelid = c.oid)
                   ELSE concat(c.relkind, c.relpersistence, pg_get_partkeydef(c.oid)) END
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${rel(`'r', 'p', 'f', 'v', 'm', 'S'`)}
       UNION ALL
       SELECT 'column', format('%I.%I.%I', n.nspname, c.relname, a.attname),
              concat_ws(' ', format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated, a.attcollation)
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attnum > 0 AND NOT a.attisdropped AND ${rel(`'r', 'p', 'f'`)}
       UNION ALL
       SELECT 'index', format('%I.%I', n.nspname, ci.relname), pg_get_indexdef(i.indexrelid)
         FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = ci.relnamespace
        WHERE ${rel(`'r', 'p', 'm', 'f'`)} AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x'))
       UNION ALL
       SELECT 'constraint', format('%I.%I.%I', n.nspname, c.relname, k.conname), concat(k.contype, pg_get_constraintdef(k.oid))
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${rel(`'r', 'p', 'f'`)}
       UNION ALL
       SELECT 'function', format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)),
              CASE WHEN p.prokind = 'a' THEN 'aggregate ' || p.prosrc ELSE pg_get_functiondef(p.oid) END
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_NS} AND ${notExtMember('pg_proc', 'p.oid')}
       UNION ALL
       SELECT 'trigger', format('%I.%I.%I', n.nspname, c.relname, t.tgname), pg_get_triggerdef(t.oid)
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal AND ${USER_NS}
       UNION ALL
       SELECT 'enum', format('%I.%I', n.nspname, t.typname), string_agg(quote_literal(en.enumlabel), ',' ORDER BY en.enumsortorder)
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum en ON en.enumtypid = t.oid
        WHERE ${USER_NS} AND ${notExtMember('pg_type', 't.oid')} GROUP BY n.nspname, t.typname
       UNION ALL
       SELECT 'extension', quote_ident(x.extname), x.extversion FROM pg_extension x
     ) o ORDER BY kind, name`,
  );
}

/** An ordinary table (a partition is one; its partitioned parent holds no rows) with what a data compare needs. */
export interface TableShape {
  schema: string;
  table: string;
  /** schema.table, quoted where needed (as the schema objects' names are). */
  qname: string;
  /** On-disk size (heap and TOAST, no indexes), and the planner's row estimate (-1: never vacuumed or analyzed). */
  bytes: number;
  est_rows: number;
  columns: { name: string; type: string }[];
  /** The primary key's columns, in key order (empty: no primary key). */
  key: string[];
}

export async function tableShapes(db: Db): Promise<TableShape[]> {
  const rows = await db.query<Omit<TableShape, 'bytes' | 'est_rows'> & { bytes: string; est_rows: string }>(
    `SELECT n.nspname AS schema, c.relname AS table, format('%I.%I', n.nspname, c.relname) AS qname,
      pg_table_size(c.oid)::text AS bytes, c.reltuples::bigint::text AS est_rows,
            (SELECT coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod)) ORDER BY a.attnum), '[]')
               FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT coalesce(json_agg(a.attname ORDER BY k.ord), '[]')
              FROM pg_constraint pk CROSS JOIN LATERAL unnest(pk.conkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = pk.conrelid AND a.attnum = k.attnum WHERE pk.conrelid = c.oid AND pk.contype = 'p') AS key
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND ${USER_NS} AND ${notExtMember('pg_class', 'c.oid')} ORDER BY 1, 2`,
  );
  return rows.map((r) => ({ ...r, bytes: Number(r.bytes), est_rows: Number(r.est_rows) }));
}

const qualified = (t: { schema: string; table: string }) => `${quoteIdent(t.schema)}.${quoteIdent(t.table)}`;
const rowOf = (cols: string[]) => `row(${cols.map(quoteIdent).join(', ')})::text`;

/** A table's row count and an order-independent sum of its rows' hashes, over `columns` (one scan, nothing sent). */
export async function tableFingerprint(
  db: Db,
  t: { schema: string; table: string },
  columns: string[],
): Promise<{ rows: number; hash: string }> {
  const [r] = await db.query<{ rows: string; hash: string }>(
    `SELECT count(*)::text AS rows, coalesce(sum(('x' || left(md5(${rowOf(columns)}), 15))::bit(60)::bigint), 0)::text AS hash FROM ${qualified(t)}`,
  );
  return { rows: Number(r!.rows), hash: r!.hash };
}

/** Each row's key (empty `key`: none) and hash over `columns`; at most `limit` rows (a caller asks one more than its bound). */
export async function rowHashes(
  db: Db,
  t: { schema: string; table: string },
  columns: string[],
  key: string[],
  limit: number,
): Promise<{ k: string | null; h: string }[]> {
  return db.query<{ k: string | null; h: string }>(
    `SELECT ${key.length ? rowOf(key) : 'NULL'} AS k, md5(${rowOf(columns)}) AS h FROM ${qualified(t)} LIMIT ` +
      `${Math.max(0, Math.floor(limit))}`,
  );
}

export async function rowCount(db: Db, t: { schema: string; table: string }): Promise<number> {
  const [r] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${qualified(t)}`);
  return Number(r!.n);
}
