// Which PID namespace pgx trusts to show it the whole process tree (decision 452). routed-ancestry.ts judges a pgx by
// the routed commands it descends from, read from /proc; in a PID namespace of its own (`unshare -Urpf --mount-proc`,
// allowed to an ordinary user) a process sees none of its real ancestors, so a command of subagent A's that starts pgx
// there looked like the user at a terminal. A walk in any other namespace is judged "inside", not "free".
//
// Trusted: the machine's initial PID namespace (its inode is fixed by the kernel: PROC_PID_INIT_INO), and the one pgx
// was first used in since /dev/shm was made (this boot, or this container: a container gets a /dev/shm of its own),
// recorded in /dev/shm/pgx-<uid>/pid-namespace by the first pgx that judges anything. So a user who runs everything
// in a container of theirs (Claude Code, its hooks, pgx) keeps working there, and a namespace made later inside it is
// not trusted. The record is written only from the initial user namespace: an ordinary user's new PID namespace comes
// with a user namespace of its own (the kernel requires it), in which it could mount an empty /dev/shm and be "first".
// Its place depends on no variable the command controls (PGX_HOME, HOME, TMPDIR would let it name a fresh one).
// Node built-ins only: the hooks and the routed exec load it on every command.
import { lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';

/** The initial PID namespace's inode on every Linux since 3.8 (PROC_PID_INIT_INO). */
export const INITIAL_PID_NAMESPACE = '4026531836';
/** The initial user namespace's inode (PROC_USER_INIT_INO). */
const INITIAL_USER_NAMESPACE = '4026531837';

/** The inode of a process's namespace: `pid:[4026531836]` → `4026531836`; '' when it can't be read. */
export function namespaceOf(pid: number | 'self', kind: 'pid' | 'user' = 'pid'): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/${kind}`))?.[1] ?? '';
  } catch {
    return '';
  }
}

/** Where the trusted namespace is recorded for this user (undefined: no uid, not a POSIX system). */
export function trustRecordPath(root = '/dev/shm'): string | undefined {
  const uid = process.getuid?.();
  return uid === undefined ? undefined : `${root}/pgx-${uid}/pid-namespace`;
}

/** The recorded namespace, when its directory and file are this user's and nobody else may write them. */
function readTrusted(file: string): string | undefined {
  try {
    const dir = lstatSync(file.slice(0, file.lastIndexOf('/')));
    const f = lstatSync(file);
    const uid = process.getuid?.();
    if (!dir.isDirectory() || dir.uid !== uid || (dir.mode & 0o077) !== 0) return undefined;
    if (!f.isFile() || f.uid !== uid || (f.mode & 0o022) !== 0) return undefined;
    return /^\d+$/.exec(readFileSync(file, 'utf8').trim())?.[0];
  } catch {
    return undefined;
  }
}

/** First use: this process's namespace becomes the trusted one (exclusive create: a concurrent first use wins alone). */
function recordTrusted(file: string): void {
  if (namespaceOf('self', 'user') !== INITIAL_USER_NAMESPACE) return;
  const own = namespaceOf('self');
  if (!own) return;
  try {
    mkdirSync(file.slice(0, file.lastIndexOf('/')), { mode: 0o700 });
  } catch {
    // there already (judged by readTrusted), or no /dev/shm: nothing recorded
  }
  try {
    writeFileSync(file, own + '\n', { mode: 0o600, flag: 'wx' });
  } catch {
    // another pgx recorded it first, or the directory is not ours
  }
}

/** Why a namespace is not trusted, as the refusal says it (and what a user does in a container of theirs). */
export interface UntrustedNamespace {
  why: string;
  hint: string;
}

/**
 * Is a walk in PID namespace `ns` (a process's `/proc/<pid>/ns/pid` inode) one pgx can trust to have reached the top
 * of the tree? Undefined: yes. Records the trusted namespace on first use (`file`: tests point it elsewhere).
 */
export function untrustedNamespace(ns: string, file = trustRecordPath()): UntrustedNamespace | undefined {
  let trusted = file === undefined ? undefined : readTrusted(file);
  if (trusted === undefined && file !== undefined) {
    recordTrusted(file);
    trusted = readTrusted(file);
  }
  if (ns === INITIAL_PID_NAMESPACE || (ns !== '' && ns === trusted)) return undefined;
  const where = ns ? `a PID namespace (pid:[${ns}])` : 'a PID namespace pgx cannot read';
  const which = trusted
    ? `the one pgx was first used in on this machine (pid:[${trusted}], recorded in ${file})`
    : `the machine's own (no other is recorded as trusted in ${file ?? '/dev/shm'})`;
  return {
    why: `it runs in ${where} other than ${which}, where pgx can't see the processes it descends from`,
    hint:
      'If this is not a command an agent started but a container or namespace of your own, pgx must be used first ' +
      'there: it trusts the PID namespace of the first pgx run after /dev/shm is made (each container has its own ' +
      'unless it shares the host\'s, e.g. --ipc=host), from the initial user namespace. See "PID namespaces" in ' +
      'docs/pgx/local-dev/security.md.',
  };
}
