// Every pgx broker of this user, whatever its kind, found by what each kind records: a socket broker by its socket in
// the socket directory (asked, it says its pid), the HTTP broker by http.json (port, secret and pid). `agent broker
// status|stop` and `local down --purge` (the way pgx is removed) list and stop them through this one module, so a
// broker of either kind is never missed (issue 30: the HTTP broker outlived the purge, unseen by `broker status`).
import { readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { askBroker, type BrokerAddress } from './client.js';
import { askHttpBroker, forgetHttpState, httpStatePath, readHttpState } from './http.js';
import { socketDir, socketDirPath, type BrokerStatus } from './protocol.js';

export interface SocketBroker extends BrokerStatus {
  kind: 'socket';
  socket: string;
  this_environment: boolean;
}

export interface HttpBroker {
  kind: 'http';
  pid: number;
  port: number;
  build: string;
  /** http.json, which holds its port and the hook secret. */
  state: string;
}

export type FoundBroker = SocketBroker | HttpBroker;

const SOCKET = /^b-([0-9a-f]{24})\.sock$/;

/** Every broker of this user that answers: the socket brokers (one per environment) and the HTTP broker. */
export async function findBrokers(own?: BrokerAddress): Promise<FoundBroker[]> {
  const found: FoundBroker[] = [];
  const dir = socketDir(process.env);
  for (const f of dir ? readdirSync(dir) : []) {
    const m = SOCKET.exec(f);
    if (!m) continue;
    const addr = { fp: m[1]!, fpm: '', dir: dir!, path: join(dir!, f) };
    const asked = await askBroker(addr, { op: 'status' }, 2000);
    if (asked.answer && 'status' in asked.answer) found.push({ kind: 'socket', ...asked.answer.status, socket: addr.path, this_environment: addr.fp === own?.fp });
  }
  const state = readHttpState();
  const http = state ? await askHttpBroker(state, 'status', 2000) : undefined;
  if (state && http) found.push({ kind: 'http', pid: http.pid, port: state.port, build: http.build, state: httpStatePath()! });
  return found;
}

/** Is `pid` a pgx broker of this user (its argv says `agent broker serve…`)? Only such a process is ever signalled. */
function isOurBroker(pid: number): boolean {
  try {
    return / agent broker serve(-http)?$/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim());
  } catch {
    return false;
  }
}

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
 * then, or one http.json names that no longer answers (hung), gets SIGTERM if it is still a pgx broker. Returns those
 * found.
 */
export async function stopAllBrokers(): Promise<FoundBroker[]> {
  const list = await findBrokers();
  const state = readHttpState();
  for (const b of list) {
    if (b.kind === 'socket') await askBroker({ fp: b.fingerprint, fpm: '', dir: '', path: b.socket }, { op: 'stop' }, 2000);
    else if (state) await askHttpBroker(state, 'stop', 2000);
  }
  const pids = list.map((b) => b.pid);
  // an HTTP broker that holds http.json but does not answer is still this user's broker
  if (state?.pid && !pids.includes(state.pid) && isOurBroker(state.pid)) pids.push(state.pid);
  for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) if (isOurBroker(pid)) process.kill(pid, 'SIGTERM');
  return list;
}

/** What brokers leave in the socket directory: sockets (the broker's, the shell launcher's), their temp names and start markers, http.json. */
const PGX_ENTRY = /^((b|h)-[0-9a-f]{24}\.sock(\.\d+|\.starting)?|http\.json(\.[^/]*)?)$/;

/**
 * After stopAllBrokers: removes pgx's entries of the socket directory (http.json, with the hook secret, included) and
 * the directory once nothing else is in it. Returns the directory when it was removed.
 */
export async function removeSocketDir(): Promise<string | null> {
  const dir = socketDirPath(process.env);
  if (!dir) return null;
  forgetHttpState();
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
