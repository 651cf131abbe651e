import { accessSync, constants, statSync } from 'node:fs';

/** POSIX single-quoting, always (even when a word needs none): `a'b` → `'a'\''b'`. The one shell-quoting helper. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Bare words stay bare (readable transcripts and exports); anything else is single-quoted. */
export function quoteIfNeeded(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : shellQuote(word);
}

/**
 * The shell Claude Code's Bash tool runs commands in, so that a routed command (`<shell> -c '<original>'`) is parsed
 * by the same shell as an unrouted one: `[[ … ]]` and arrays work in both or in neither. Read from Claude Code
 * 2.1.328's own code (the function logging `CLAUDE_CODE_SHELL="…" is not a valid bash/zsh path, falling back to
 * detection`), and checked with the real binary by tests/e2e/pgx-shell.test.ts. Candidates, first executable wins:
 *   1. $CLAUDE_CODE_SHELL, then $SHELL, each only if its path contains "bash" or "zsh";
 *   2. when basename($SHELL) is "bash": bash on PATH, /bin/bash, /usr/bin/bash, /usr/local/bin/bash,
 *      /opt/homebrew/bin/bash, the same four for zsh, then zsh on PATH;
 *      otherwise (SHELL unset, sh, dash, fish, zsh…): the same with zsh first, and bash on PATH last.
 * So SHELL=/bin/sh (dash) does NOT give dash: Claude Code uses zsh if installed, else bash. It never uses sh, dash,
 * fish or csh. Claude Code fails to start its Bash tool when nothing qualifies; pgx then falls back to /bin/sh.
 */
export function claudeCodeShell(
  env: NodeJS.ProcessEnv = process.env,
  executable: (path: string) => boolean = isExecutable,
): string {
  const which = (name: string): string | null => {
    for (const dir of (env.PATH ?? '').split(':')) {
      if (dir && executable(`${dir}/${name}`)) return `${dir}/${name}`;
    }
    return null;
  };
  const named = [env.CLAUDE_CODE_SHELL, env.SHELL].filter(
    (s): s is string => s !== undefined && (s.includes('bash') || s.includes('zsh')),
  );
  const bashFirst = baseName(env.SHELL ?? '') === 'bash';
  const order = bashFirst ? ['bash', 'zsh'] : ['zsh', 'bash'];
  const dirs = ['/bin', '/usr/bin', '/usr/local/bin', '/opt/homebrew/bin'];
  const [onPathFirst, onPathLast] = bashFirst ? [which('bash'), which('zsh')] : [which('zsh'), which('bash')];
  const candidates = [
    ...named,
    onPathFirst,
    ...order.flatMap((sh) => dirs.map((d) => `${d}/${sh}`)),
    onPathLast,
  ].filter((c): c is string => c !== null);
  for (const c of candidates) {
    // Claude Code runs a relative candidate (CLAUDE_CODE_SHELL=bash) by name, i.e. from PATH
    const path = c.startsWith('/') ? c : which(c);
    if (path && executable(path)) return path;
  }
  return '/bin/sh';
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
