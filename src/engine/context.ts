// What every engine step works with: the config, the admin connection parameters, and the ONE connection of this
// command or hook, to the registry database. Catalog statements (creating a database …) go over that same connection:
// a statement about databases runs from any database, and one connection is one server round trip fewer.
import type { Config } from '../project/config.js';
import type { Db, StatementGate } from '../server/db.js';
import { parseUrl, type ConnParams } from '../server/conn-params.js';
import { ensureLocalServer } from '../server/local.js';
import { openRegistry, REGISTRY_DB, type RegistryDb } from '../registry/connection.js';

export interface EngineContext {
  config: Config;
  /** Admin connection parameters (with the statement timeout, if any, that every connection of this work gets). */
  admin: ConnParams;
  /** The registry connection: records, advisory locks, and catalog statements. */
  registry: RegistryDb;
  /** Passed to every other connection this work opens (tests only). */
  gate?: StatementGate;
  /** Set when the registry connection is lent by the broker: close() gives it back instead of closing it. */
  giveBack?: () => void;
  /** Command hooks: makes a frozen copy in a process that outlives this one (engine/freeze.ts). */
  freezeElsewhere?: FreezeElsewhere;
}

/**
 * Starts `pgx agent freeze --branch <parent> --after-ticket <ticket>` detached (a hook process ends at its deadline,
 * and a copy of a large branch may take longer); resolves `ended` with its exit code (null: it could not run).
 * Undefined: it could not be started.
 */
export type FreezeElsewhere = (parent: string, ticket: string) => { ended: Promise<number | null> } | undefined;

export interface OpenOptions {
  /** No progress output (hooks): the local server starts silently. */
  quiet?: boolean;
  /** Hooks: no statement outlives the hook's deadline (see ConnParams.statementTimeoutMs). */
  statementTimeoutMs?: number;
  /** Hooks: connection attempts wait for the time the hook has left (see ConnParams.connectDeadlineAt). */
  connectDeadlineAt?: number;
  /** The broker: how long a connection attempt may wait (see ConnParams.connectWaitMs). */
  connectWaitMs?: number;
  /** Tests: the fault-injection seam (src/server/db.ts, tests/helpers/faults.ts). */
  gate?: StatementGate;
  /** The broker: the hot path's registry connection is kept for the next request (broker/connections.ts). */
  reuse?: ConnectionReuse;
  /** Command hooks: frozen copies of large branches are made by a detached process (EngineContext.freezeElsewhere). */
  freezeElsewhere?: FreezeElsewhere;
}

/** Registry connections kept open between pieces of work; only the one-statement attach uses them. */
export interface ConnectionReuse {
  /**
   * A kept connection for these parameters (reused: true), else a new one from `open`. `release` gives it back, or
   * closes it when it failed (it may be dead: a server restart, a terminated backend).
   */
  acquire(
    p: ConnParams,
    open: () => Promise<Db>,
  ): Promise<{ db: Db; reused: boolean; release(healthy: boolean): void }>;
  /**
   * A connection of its own for one engine's whole piece of work (locks, transactions): a kept one, else a new one
   * from `open`. `giveBack` returns it to be kept only if it is idle with no lock held, and closes it otherwise.
   */
  lend(p: ConnParams, open: () => Promise<Db>): Promise<{ db: Db; giveBack(): void }>;
}

/** The admin connection: [server] url / PGX_DATABASE_URL, else the embedded local server (started if needed). */
export async function resolveServer(config: Config, opts: { quiet?: boolean } = {}): Promise<ConnParams> {
  if (config.serverUrl) return parseUrl(config.serverUrl, config.serverUrlFrom, config.serverEnv ?? process.env);
  return ensureLocalServer(config.home, opts);
}

/** The server's parameters with this work's limits on them: carried per connection, never process-wide state. */
export function withLimits(server: ConnParams, opts: OpenOptions): ConnParams {
  const { statementTimeoutMs, connectDeadlineAt, connectWaitMs } = opts;
  if (statementTimeoutMs === undefined && connectDeadlineAt === undefined && connectWaitMs === undefined) return server;
  return {
    ...server,
    ...(statementTimeoutMs !== undefined ? { statementTimeoutMs } : {}),
    ...(connectDeadlineAt !== undefined ? { connectDeadlineAt } : {}),
    ...(connectWaitMs !== undefined ? { connectWaitMs } : {}),
  };
}

export async function openContext(config: Config, opts: OpenOptions = {}): Promise<EngineContext> {
  const server = await resolveServer(config, opts);
  const admin = withLimits(server, opts);
  if (opts.reuse) {
    const lent = await opts.reuse.lend({ ...admin, database: REGISTRY_DB }, () =>
      openRegistry(admin, { gate: opts.gate }),
    );
    return {
      config,
      admin,
      registry: lent.db as RegistryDb,
      gate: opts.gate,
      giveBack: lent.giveBack,
      freezeElsewhere: opts.freezeElsewhere,
    };
  }
  const registry = await openRegistry(admin, { gate: opts.gate });
  return { config, admin, registry, gate: opts.gate, freezeElsewhere: opts.freezeElsewhere };
}
