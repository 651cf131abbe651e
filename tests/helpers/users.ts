// What a test needs to act as another Unix user (read a file, bind a port, own a socket as `nobody`): root, and the
// tools. As an ordinary user those tests skip and say why, as the loop-mount test does (xfs-cluster.ts); CI runs the
// suite as root, so there they always run.
import { spawnSync } from 'node:child_process';

/** Why this process cannot act as `nobody` (runuser, chown), or undefined when it can. */
export function otherUserUnavailable(): string | undefined {
  if (process.getuid?.() !== 0)
    return 'not root: acting as another Unix user (runuser -u nobody, chown to nobody) needs root; CI runs it as root';
  if (spawnSync('id', ['-u', 'nobody']).status !== 0) return 'no `nobody` user on this machine';
  if (spawnSync('runuser', ['--help'], { stdio: 'ignore' }).status !== 0) return 'no runuser (util-linux) on PATH';
  return undefined;
}
