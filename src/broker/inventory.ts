// Every pgx broker of this user, found by what it records: its socket in the socket directory (asked, it says its
// pid). `agent broker status|stop` and `local down --purge` (the way pgx is removed) list and stop them through this
// one module, so no broker is ever missed (issue 30: a broker outlived the purge, unseen by `broker status`). Since
// the HTTP transport was retired (decision 444) there is one kind; an old install's http.json is still removed.
import { readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { askBroker, type BrokerAddress } from './client.js';
import { socketDir, socketDirPath, type BrokerStatus } from './protocol.js';

export interface FoundBroker extends BrokerStatus {
  socket: string;
  this_environment: boolean;
}

const SOCKET = /^b-([0-9a-f]{24})\.sock$/;

/** Every broker of this user that answers on a socket of the socket directory. */
export async function findBrokers(own?: BrokerAddress): Promise<FoundBroker[]> {
  const found: FoundBroker[] = [];
  const dir = socketDir(process.env);
  for (const f of dir ? readdirSync(dir) : []) {
    const m = SOCKET.exec(f);
    if (!m) continue;
    const addr = { fp: m[1]!, fpm: '', dir: dir!, path: join(dir!, f) };
    const asked = await askBroker(addr, { op: 'status' }, 2000);
    if (asked.answer && 'status' in asked.answer)
      found.push({ ...asked.answer.status, socket: addr.path, this_environment: addr.fp === own?.fp });
  }
  return found;
}

/** Is `pid` a pgx broker of this user (its argv says `agent broker serve…`)? Only such a process is ever signalled. */
function isOurBroker(pid: number): boolean {
  try {
    return / agent broker serve(-http)?$/.test(
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim(),
    );
  } catch {
    return false;
  }
}

// Not lib/fsutil's pidAlive, which counts EPERM as alive (a lock's owner may be another user's process): a pid of
// another user is no broker of ours any more (reused), and is neither waited for nor signalled.
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Stops every broker of this user: each is asked (its `stop` request), then waited for up to 5 s; one still running
 * then gets SIGTERM if it is still a pgx broker. Returns those found.
 */
export async function stopAllBrokers(): Promise<FoundBroker[]> {
  const list = await findBrokers();
  for (const b of list) await askBroker({ fp: b.fingerprint, fpm: '', dir: '', path: b.socket }, { op: 'stop' }, 2000);
  const pids = list.map((b) => b.pid);
  for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) if (isOurBroker(pid)) process.kill(pid, 'SIGTERM');
  return list;
}

/**
 * What brokers leave in the socket directory: sockets (the broker's, the shell launcher's), their temp names and start
 * markers, and an old HTTP install's http.json (decision 444).
 */
const PGX_ENTRY = /^((b|h)-[0-9a-f]{24}\.sock(\.\d+|\.starting)?|http\.json(\.[^/]*)?)$/;

/**
 * After stopAllBrokers: removes pgx's entries of the socket directory (an old http.json, with its hook secret, included) and
 * the directory once nothing else is in it. Returns the directory when it was removed.
 */
export async function removeSocketDir(): Promise<string | null> {
  const dir = socketDirPath(process.env);
  if (!dir) return null;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return null;
  }
  for (let i = 0; i < 20 && entries.some((f) => SOCKET.test(f)); i++) {
    await new Promise((r) => setTimeout(r, 100)); // a stopping broker removes its own socket
    entries = readdirSync(dir);
  }
  for (const f of entries.filter((e) => PGX_ENTRY.test(e))) rmSync(join(dir, f), { force: true });
  try {
    if (readdirSync(dir).length) return null; // not pgx's: it stays, and so does the directory
    rmdirSync(dir);
    return dir;
  } catch {
    return null;
  }
}
