// Finding the user's Claude Code binary and asking it its version, without running any of its hooks or settings.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { executableOnPath } from '../lib/fsutil.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `claude` on PATH, resolved (a symlink such as ~/.local/bin/claude to its versioned target), or undefined. */
export function claudeOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return executableOnPath('claude', env);
}

/**
 * "2.1.332" from `<bin> --version` ("2.1.332 (Claude Code)"), or undefined. Run in an empty HOME with nothing of the
 * caller's environment but PATH: --version reads no settings, but nothing of the user's is offered to it either.
 */
export function claudeVersionOf(bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const home = mkdtempSync(join(tmpdir(), 'pgx-verify-version-'));
  try {
    const r = spawnSync(bin, ['--version'], {
      env: {
        PATH: env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      encoding: 'utf8',
      timeout: 15_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return /^(\d+\.\d+\.\d+)\b/.exec((r.stdout ?? '').trim())?.[1];
  } catch {
    return undefined;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The Claude Code binary among the ancestors of `pid` (Linux /proc) whose version is `version`: the one running the
 * session whose SessionStart asked, when PATH's `claude` is another install.
 */
export function claudeAmongAncestors(
  pid: number,
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  for (let i = 0, p = pid; i < 8 && p > 1; i++) {
    let exe: string;
    let parent: number;
    try {
      exe = realpathSync(`/proc/${p}/exe`);
      const stat = readFileSync(`/proc/${p}/stat`, 'latin1');
      parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return undefined;
    }
    // Only a binary that names itself Claude Code's (…/claude, …/claude/versions/2.1.332) is asked: never a terminal,
    // a multiplexer or a shell that happens to be an ancestor.
    if (/claude/i.test(exe) && claudeVersionOf(exe, env) === version) return exe;
    p = parent;
  }
  return undefined;
}
