// A libpq passfile (~/.pgpass format) for one server, so a shell that eval'd pgx's exports can connect without the
// password ever appearing on stdout, in argv or in the environment. One file per (host, port, role), database `*`:
// `pgx local env` and `pgx agent up` rewrite it on every call (the local server's port can change on restart).
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConnParams } from './conn-params.js';

/** `\` and `:` are the only characters a passfile field escapes. */
const esc = (s: string) => s.replace(/[\\:]/g, (c) => `\\${c}`);

export function serverPassfilePath(home: string, p: Pick<ConnParams, 'host' | 'port' | 'user'>): string {
  const tag = createHash('sha256').update(`${p.host}\0${p.port}\0${p.user}`).digest('hex').slice(0, 12);
  return join(home, 'passfiles', `${tag}.pgpass`);
}

/** Writes (0600, in a 0700 directory) the passfile for `p`'s server and returns its path; undefined without a password. */
export function writeServerPassfile(home: string, p: ConnParams): string | undefined {
  if (!p.password) return undefined;
  const file = serverPassfilePath(home, p);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${esc(p.host)}:${p.port}:*:${esc(p.user)}:${esc(p.password)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // an existing file keeps its mode otherwise
  return file;
}
