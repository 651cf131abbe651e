// Whether a directory is a project, before pgx makes it one: `pgx init` and `pgx agent install` write a .pgx.toml
// and a project's Claude Code settings, and every directory below then resolves to that project. Run by mistake in
// $HOME, that turned the whole home into a project and put the hooks into Claude Code's user-wide settings file
// (issue 30). So they go ahead only in a directory with a project marker, never in $HOME or /, unless told to with
// `--here` (decision 421).
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PgxError } from '../lib/errors.js';

/** What makes a directory a project: version control, a language's manifest, or pgx's own file. */
export const PROJECT_MARKERS = [
  '.pgx.toml',
  '.git',
  '.hg',
  '.svn',
  '.jj',
  'package.json',
  'deno.json',
  'pyproject.toml',
  'setup.py',
  'requirements.txt',
  'Pipfile',
  'go.mod',
  'Cargo.toml',
  'Gemfile',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'composer.json',
  'mix.exs',
  'Makefile',
  'docker-compose.yml',
  'compose.yaml',
] as const;

/** The first marker in `dir`, or undefined. */
export function projectMarker(dir: string): string | undefined {
  return PROJECT_MARKERS.find((m) => existsSync(join(dir, m)));
}

/** The path with its links resolved (a HOME given as /home/me where /home is a link), or as given if it is not there. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** $HOME or /: never a project by default, whatever is in them (a dotfiles repo, a stray package.json). */
export function isHomeOrRoot(dir: string, home = homedir()): boolean {
  const d = real(dir);
  return d === dirname(d) || d === real(home);
}

/** The nearest ancestor of `dir` below $HOME (or /) with a marker: where the user probably meant. */
function markedAncestor(dir: string, home: string): { dir: string; marker: string } | undefined {
  for (let d = dirname(resolve(dir)); !isHomeOrRoot(d, home); d = dirname(d)) {
    const marker = projectMarker(d);
    if (marker) return { dir: d, marker };
  }
  return undefined;
}

/**
 * Refuses (NOT_A_PROJECT, exit 2) to make `dir` a project unless it looks like one, or `here` says so. `command` is
 * what to run instead, e.g. `pgx agent install claude`; `userScope` is the user-wide alternative when there is one.
 */
export function requireProjectDir(
  dir: string,
  o: { here?: boolean; command: string; userScope?: string; home?: string; extra?: string },
): void {
  if (o.here) return;
  const home = o.home ?? homedir();
  const d = resolve(dir);
  const atTop = isHomeOrRoot(d, home);
  if (!atTop && projectMarker(d)) return;
  const near = atTop ? undefined : markedAncestor(d, home);
  const what =
    d === dirname(d)
      ? `${d} is the root directory`
      : real(d) === real(home)
        ? `${d} is your home directory ($HOME)`
        : `${d} has no project marker (${PROJECT_MARKERS.slice(0, 8).join(', ')}, …)`;
  const why = atTop
    ? ': a .pgx.toml there makes every directory below it one project, and its .claude/settings.json is Claude ' +
      "Code's user-wide file."
    : ': pgx would make it a project (a .pgx.toml, and every directory below it resolving to it).';
  const ways = [
    o.extra,
    near
      ? `the project looks like ${near.dir} (it has ${near.marker}): \`${o.command} --cwd ${near.dir}\``
      : `run it in your project, or \`${o.command} --cwd <project>\``,
    o.userScope ? `for every project of yours: \`${o.userScope}\`` : undefined,
    `to make ${d} a project anyway: \`${o.command} --here\``,
  ].filter(Boolean);
  const hint = ways.join('; ');
  throw new PgxError(
    'NOT_A_PROJECT',
    `${what}${why}`,
    `Nothing was written. ${hint.charAt(0).toUpperCase()}${hint.slice(1)}.`,
  );
}
