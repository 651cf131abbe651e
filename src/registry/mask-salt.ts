// A project's masking salt: the secret part of every masked value (md5(salt || value)), so that the same value masks
// the same way in every table, template and sync of the project, while nobody without the salt can test a guess
// ("is this alice@corp.com?") against a masked value. Kept in the registry (decision 461): on the server beside the
// copies it masks, out of git and out of the project directory, readable only by the admin role (branch roles cannot
// connect to pgx_registry).
import { randomBytes } from 'node:crypto';
import type { RegistryDb } from './locks.js';

/** The project's salt, made (32 random bytes, hex) the first time it is asked for. */
export async function maskSalt(db: RegistryDb, project: string): Promise<string> {
  await db.query(`INSERT INTO pgx_mask_salt (project, salt) VALUES ($1, $2) ON CONFLICT (project) DO NOTHING`, [
    project,
    randomBytes(32).toString('hex'),
  ]);
  const [row] = await db.query<{ salt: string }>(`SELECT salt FROM pgx_mask_salt WHERE project = $1`, [project]);
  return row!.salt;
}

/** Whether the project has a salt yet (the doctor reports it; nothing is made). */
export async function hasMaskSalt(db: RegistryDb, project: string): Promise<boolean> {
  const rows = await db.query(`SELECT 1 FROM pgx_mask_salt WHERE project = $1`, [project]).catch(() => []);
  return rows.length > 0;
}
