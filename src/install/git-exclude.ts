// `.claude/settings.local.json` holds this machine's paths (pgx's permission rules name the launcher and the
// project), so it must stay out of git. Claude Code ignores it when Claude Code creates it; when pgx creates it, pgx
// adds it to the clone's own `.git/info/exclude` (never committed, never shared) unless git already ignores it, and
// uninstall takes out exactly the lines pgx added.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';

/** already: git ignores it; added / would-add: pgx's lines in `exclude`; not-in-git: no repository (or no git). */
export type GitIgnoreResult =
  { status: 'already' | 'not-in-git' | 'no-file' } | { status: 'added' | 'would-add'; exclude: string };

const MARKER = "# pgx agent install claude: this machine's permission rules (launcher and project paths)";

function git(cwd: string, args: string[]): { status: number | null; out: string } {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
  return { status: r.error ? null : r.status, out: (r.stdout ?? '').trim() };
}

function repoOf(file: string): { top: string; rel: string; exclude: string } | undefined {
  const dir = dirname(file);
  const top = git(dir, ['rev-parse', '--show-toplevel']);
  if (top.status !== 0 || !top.out) return undefined;
  const ex = git(top.out, ['rev-parse', '--git-path', 'info/exclude']);
  if (ex.status !== 0 || !ex.out) return undefined;
  return {
    top: top.out,
    rel: relative(top.out, join(dir, basename(file)))
      .split('\\')
      .join('/'),
    exclude: isAbsolute(ex.out) ? ex.out : join(top.out, ex.out),
  };
}

export function keepOutOfGit(file: string, opts: { dryRun?: boolean } = {}): GitIgnoreResult {
  const repo = repoOf(file);
  if (!repo) return { status: 'not-in-git' };
  if (git(repo.top, ['check-ignore', '-q', '--no-index', '--', repo.rel]).status === 0) return { status: 'already' };
  if (opts.dryRun) return { status: 'would-add', exclude: repo.exclude };
  let text = '';
  try {
    text = readFileSync(repo.exclude, 'utf8');
  } catch {
    // no exclude file yet (git creates one with `git init`, but it may have been deleted)
  }
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  writeFileSync(repo.exclude, `${text}${sep}${MARKER}\n/${repo.rel}\n`);
  return { status: 'added', exclude: repo.exclude };
}

/** Takes pgx's two lines out of the clone's exclude file, if they are there; true when it did. */
export function dropGitExclude(file: string, opts: { dryRun?: boolean } = {}): boolean {
  const repo = repoOf(file);
  if (!repo) return false;
  let text: string;
  try {
    text = readFileSync(repo.exclude, 'utf8');
  } catch {
    return false;
  }
  const ours = `${MARKER}\n/${repo.rel}\n`;
  if (!text.includes(ours)) return false;
  if (!opts.dryRun) writeFileSync(repo.exclude, text.replace(ours, ''));
  return true;
}
