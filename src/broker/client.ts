// The client side of the broker (protocol.ts): one request, one answer, over the user's unix socket. Loaded by the
// light hook entry on every hook, so node built-ins only. Whatever goes wrong here (no broker, a dead one, garbage),
// the answer is undefined and the caller does the work itself, as it would without a broker; a broker that is
// missing is started, detached, for the next call.
import { lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnDetachedOnce } from '../lib/processes.js';

import {
  brokerDisabled,
  socketKey,
  environmentMaterial,
  socketDir,
  socketPath,
  type BrokerRequest,
  type BrokerResponse,
} from './protocol.js';

// node:net and node:child_process load only when used, and by require: a dynamic import() would start node's ES
// module loader in this CommonJS entry (~3 ms of a hook's start-up).
const lazy = createRequire(import.meta.url);

export interface BrokerAddress {
  fp: string;
  /** The environment material the socket key is made from, sent with each request (protocol.ts). */
  fpm: string;
  dir: string;
  path: string;
}

export function brokerAddress(env: NodeJS.ProcessEnv, launcher: string, create = false): BrokerAddress | undefined {
  if (brokerDisabled(env)) return undefined;
  const dir = socketDir(env, create);
  if (!dir) return undefined;
  const fpm = environmentMaterial(env, launcher);
  const fp = socketKey(fpm);
  const path = socketPath(dir, fp);
  return path ? { fp, fpm, dir, path } : undefined;
}

export type Asked =
  { answer: BrokerResponse; failure?: undefined } | { answer?: undefined; failure: 'absent' | 'no-answer' | 'timeout' };

/** A request as the client writes it (the socket key and its material are added on the way). */
export type BrokerAsk = BrokerRequest extends infer R
  ? R extends BrokerRequest
    ? Omit<R, 'fp' | 'fpm'>
    : never
  : never;

function ownSocket(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isSocket() && st.uid === process.getuid?.();
  } catch {
    return false;
  }
}

/** Sends one request and waits up to timeoutMs for the answer. Never throws. */
export async function askBroker(
  addr: BrokerAddress,
  req: BrokerAsk,
  timeoutMs: number,
  onSent?: () => void,
): Promise<Asked> {
  // A socket file another user left in a directory that was open to them once (decision 443) is never asked: only a
  // socket of this user's is (bin/pgx.js's sh part checks the same with -O).
  if (!ownSocket(addr.path)) return { failure: 'absent' };
  const { connect } = lazy('node:net') as typeof import('node:net'); // not loaded by the hooks that never get here
  return new Promise((resolve) => {
    let settled = false;
    let connected = false;
    const chunks: Buffer[] = [];
    const sock = connect(addr.path);
    const done = (r: Asked) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ failure: connected ? 'timeout' : 'absent' }), timeoutMs);
    sock.on('connect', () => {
      connected = true;
      sock.end(JSON.stringify({ ...req, fp: addr.fp, fpm: addr.fpm }) + '\n');
      onSent?.(); // the broker works now: the caller may load what it needs meanwhile
    });
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', () => done({ failure: connected ? 'no-answer' : 'absent' }));
    sock.on('close', () => {
      if (!connected) return done({ failure: 'absent' });
      try {
        const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BrokerResponse;
        done(typeof answer === 'object' && answer !== null ? { answer } : { failure: 'no-answer' });
      } catch {
        done({ failure: 'no-answer' });
      }
    });
  });
}

/**
 * Starts this environment's broker, detached, unless one is starting: `<socket>.starting` holds the starter's pid
 * for the broker's first second, so a burst of 20 hooks that find none starts one, not 20.
 */
export async function startBroker(
  addr: BrokerAddress,
  launcher: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<'started' | 'starting' | 'failed'> {
  const started = spawnDetachedOnce(startingMarker(addr), {
    command: process.execPath,
    args: [launcher, 'agent', 'broker', 'serve'],
    env,
    cwd: addr.dir,
    held: (text) => {
      const [pid, at] = text.split(' ').map(Number);
      return Date.now() - (at ?? 0) < 5000 && !!pid;
    },
    stamp: (pid) => `${pid ?? 0} ${Date.now()}`,
  });
  return started === 'held' ? 'starting' : started;
}

export function startingMarker(addr: BrokerAddress): string {
  return `${addr.path}.starting`;
}
