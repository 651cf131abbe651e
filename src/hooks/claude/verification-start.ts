// SessionStart's part of verification: on a Claude Code version that is neither built in nor recorded, start
// `pgx agent verify claude` detached, once (a marker per version, taken exclusively: single flight, like the broker's
// start), and say so. The hook itself never waits for it: the session asks as before until a verdict is recorded.
import { openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  claimVerification,
  handOverVerification,
  releaseVerification,
  verdictFor,
  verificationRunning,
} from './claude-version.js';

/**
 * 'started' (this call spawned it), 'running' (another one is on it), or 'none': a verdict exists already (a failed one
 * stays on ask until the user re-runs `pgx agent verify claude`), PGX_AUTO_VERIFY=0, or this is a probe's own run.
 */
export function startVerificationIfNeeded(
  home: string,
  version: string,
  launcher: string,
  env: NodeJS.ProcessEnv = process.env,
): 'started' | 'running' | 'none' {
  if (env.PGX_VERIFY_PROBE || env.PGX_AUTO_VERIFY === '0') return 'none';
  if (verdictFor(home, version)) return 'none';
  if (verificationRunning(home, version)) return 'running';
  if (!claimVerification(home, version)) return 'running';
  try {
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process'); // not loaded by sessions that never get here
    const log = openSync(join(home, 'agent', 'claude-code-verify.log'), 'a', 0o600);
    const args = [launcher, 'agent', 'verify', 'claude', '--for-version', version];
    // The Claude Code that runs this hook, when PATH's `claude` is another one: its binary is an ancestor process.
    const near = process.ppid;
    if (near > 1) args.push('--near-pid', String(near));
    const child = spawn(process.execPath, args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...env, PGX_HOME: home },
    });
    if (!child.pid) throw new Error('spawn failed');
    handOverVerification(home, version, child.pid);
    child.unref();
    return 'started';
  } catch {
    releaseVerification(home, version);
    return 'none';
  }
}
