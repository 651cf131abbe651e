// What every doctor check returns, and the context they share. A problem is a result, not an exception; a check
// that throws anyway is reported as a fail by runDoctor, and the other checks still run.
import type { Config } from '../project/config.js';
import type { ConnParams } from '../server/conn-params.js';
import type { Db } from '../server/db.js';
import type { RegistryDb } from '../engine/inspect.js';

/** skip: the check could not run because something it depends on failed (that one is reported as fail). */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  /** The exact command (or edit) that fixes a warn/fail; for a `decide` warning, the choice and how to make it. */
  fix?: string;
  /**
   * A warning about a choice only the user can make (trust this folder; whether agents load .env with override), not
   * a fault of the setup: the doctor then says the setup is done, and which choices are left (issue 30).
   */
  decide?: true;
}

/** The server as the doctor sees it: connected, or why not (and what fixes it). */
export type ServerConn =
  | { ok: true; admin: ConnParams; db: Db; version: string; where: string }
  | { ok: false; status: 'fail' | 'warn' | 'skip'; detail: string; fix?: string };

export interface DoctorContext {
  /** The directory the hooks would treat as the project (where .pgx.toml is, else the starting directory). */
  projectDir: string;
  /** The validated config, or undefined when .pgx.toml is missing (defaults) or invalid. */
  config?: Config;
  /** pgx's home: the hook log and the local server's state live there. */
  home: string;
  /** Connects on first call, then returns the same answer. Never throws. */
  server(): Promise<ServerConn>;
  /** The registry database, or null when it does not exist yet (no branch was ever made on this server). */
  /** Call only after server() answered ok. */
  registry(): Promise<RegistryDb | null>;
}

export const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
export const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
export const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });
/** A warning that is the user's decision: `choice` says what to weigh and what to do either way. */
export const decide = (name: string, detail: string, choice: string): Check => ({
  name,
  status: 'warn',
  detail,
  fix: choice,
  decide: true,
});
export const skip = (name: string, detail: string): Check => ({ name, status: 'skip', detail });

/**
 * A check that needs the server, skipped: with an invalid .pgx.toml the server was never tried, so the reason is
 * the config, not the server.
 */
export const skipNoServer = (name: string, ctx: Pick<DoctorContext, 'config'>): Check =>
  skip(
    name,
    ctx.config
      ? 'not checked: no connection to the server (see the server check)'
      : 'not checked: .pgx.toml is invalid, so the server was not tried (see the config check)',
  );
