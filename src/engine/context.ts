// One engine context per command or hook: the config, the admin connection parameters, and the registry client.
import type { Config } from '../config.js';
import { parseUrl, type ConnParams, type Db } from '../server/db.js';
import { ensureLocalServer } from '../server/local.js';
import { openRegistry } from '../registry.js';

export interface Engine {
  config: Config;
  admin: ConnParams;
  db: Db;
}

/** The admin connection: [server] url / PGX_DATABASE_URL, else the embedded local server (started if needed). */
export async function resolveServer(config: Config, opts: { quiet?: boolean } = {}): Promise<ConnParams> {
  if (config.serverUrl) return parseUrl(config.serverUrl);
  return ensureLocalServer(config.home, opts);
}

export async function withEngine<T>(config: Config, fn: (e: Engine) => Promise<T>, opts: { quiet?: boolean } = {}): Promise<T> {
  const admin = await resolveServer(config, opts);
  const db = await openRegistry(admin);
  try {
    return await fn({ config, admin, db });
  } finally {
    await db.raw.end().catch(() => {});
  }
}
