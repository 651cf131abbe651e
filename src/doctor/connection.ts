// The doctor's server connection: opened on first use and shared, so a doctor run costs one connection (two with
// the registry). Unlike every other command, the doctor never STARTS the local server: it reports on it.
import { findBinaries } from '../server/binaries.js';
import { parseUrl, type ConnParams } from '../server/conn-params.js';
import { connect, NOT_RUNNING_HINT, type Db } from '../server/db.js';
import { localStatus, readState } from '../server/local.js';
import { registryIfItExists, serverVersion, type RegistryDb } from '../engine/inspect.js';
import { isPgxError } from '../lib/errors.js';
import type { Config } from '../project/config.js';
import type { ServerConn } from './types.js';

export interface LazyServer {
  server(): Promise<ServerConn>;
  registry(): Promise<RegistryDb | null>;
  close(): Promise<void>;
}

export function lazyServer(config: Config | undefined, home: string): LazyServer {
  let server: Promise<ServerConn> | undefined;
  let registry: Promise<RegistryDb | null> | undefined;
  const open: Db[] = [];
  return {
    server() {
      server ??= probe(config, home).then((s) => {
        if (s.ok) open.push(s.db);
        return s;
      });
      return server;
    },
    registry() {
      registry ??= (async () => {
        const s = await this.server();
        if (!s.ok) return null;
        const db = await registryIfItExists(s.admin);
        if (db) open.push(db);
        return db;
      })();
      return registry;
    },
    async close() {
      await Promise.all(open.map((db) => db.close()));
    },
  };
}

async function probe(config: Config | undefined, home: string): Promise<ServerConn> {
  if (!config) return { ok: false, status: 'skip', detail: 'not checked: .pgx.toml is invalid (see the config check)' };
  let admin: ConnParams;
  let what: string;
  if (config.serverUrl) {
    what = config.serverUrlFrom ?? `[server] url in ${config.file}`;
    try {
      admin = parseUrl(config.serverUrl, what);
    } catch (e) {
      // parseUrl's errors never quote the URL: safe to show, and they say what is wrong (an unencoded "#", template1…)
      return {
        ok: false,
        status: 'fail',
        detail: `${what}: ${isPgxError(e) ? e.message : 'not a valid postgres:// URL'}`,
        fix: isPgxError(e) ? e.hint : `fix ${what}`,
      };
    }
  } else {
    const local = localServerParams(home);
    if (!local.ok) return local;
    admin = local.admin;
    what = 'the local server';
  }
  const where = `${admin.host}:${admin.port} as role "${admin.user}"`;
  try {
    const db = await connect(admin);
    return { ok: true, admin, db, version: await serverVersion(db), where };
  } catch (e) {
    const message = isPgxError(e) ? e.message : (e as Error).message;
    const auth = isPgxError(e) && e.code === 'SERVER_AUTH';
    // Only an address nobody listens on calls for starting a server; a timeout, an SSL mismatch, full slots say otherwise.
    const specific = isPgxError(e) && !auth && e.hint !== NOT_RUNNING_HINT;
    const fix = specific
      ? e.hint
      : config.serverUrl
        ? auth
          ? `correct the user/password in ${what}`
          : `start PostgreSQL on ${admin.host}:${admin.port}, or point ${what} at a running server (remove the url to use pgx's own: \`pgx local up\`)`
        : 'pgx local down && pgx local up';
    return { ok: false, status: 'fail', detail: `${message} (from ${what})`, fix };
  }
}

/** No [server] url: the embedded local server. Stopped is only a warning: the first hook starts it. */
function localServerParams(home: string): { ok: true; admin: ConnParams } | Extract<ServerConn, { ok: false }> {
  const state = readState(home);
  const status = localStatus(home);
  if (!state || !status.initialized) {
    try {
      const bins = findBinaries();
      return {
        ok: false,
        status: 'warn',
        detail:
          `no [server] url, and the local server is not initialised yet (PostgreSQL ${bins.version} from ${bins.source}); ` +
          `the first hook creates it`,
        fix: 'pgx local up',
      };
    } catch (e) {
      return {
        ok: false,
        status: 'fail',
        detail: `no [server] url, and no PostgreSQL binaries to run a local server: ${(e as Error).message}`,
        fix: 'apt-get install postgresql (or set PGX_PG_BINDIR), or set [server] url: pgx init --force --url postgresql://user@host:5432/postgres',
      };
    }
  }
  if (!status.running)
    return {
      ok: false,
      status: 'warn',
      detail: `no [server] url; the local server (${state.data_dir}) is stopped; the first hook starts it`,
      fix: 'pgx local up',
    };
  return {
    ok: true,
    admin: { host: '127.0.0.1', port: state.port, user: state.user, password: state.password, database: 'postgres' },
  };
}
