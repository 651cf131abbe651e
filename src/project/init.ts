// `pgx init` and the minimal .pgx.toml that `pgx agent install claude` writes when a project has none.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { basename, join, resolve } from 'node:path';
import { parseUrl } from '../server/conn-params.js';
import { CONFIG_FILE } from './config.js';
import { exampleConfigPath, validateConfigText } from './config-schema.js';
import { PgxError } from '../lib/errors.js';

export interface InitOptions {
  dir: string;
  name?: string;
  url?: string;
  source?: string;
  force?: boolean;
  /** `install`: the file `pgx agent install` writes when a project has none, which uninstall removes while unchanged. */
  by?: 'install';
}

const tomlString = (s: string) => JSON.stringify(s); // TOML basic strings accept JSON string escapes

/** The line that marks a .pgx.toml written by `pgx agent install` (decision 421). */
export const INSTALL_WROTE =
  '# Written by `pgx agent install`: `pgx agent uninstall` deletes this file while it is unchanged.';

export function renderConfig(o: { name: string; url?: string; source?: string; by?: 'install' }): string {
  return `# pgx: every coding agent gets its own PostgreSQL branch. Every key: ${exampleConfigPath()}
${o.by === 'install' ? `${INSTALL_WROTE}\n` : ''}[server]
# The admin connection (a role with CREATEDB). Unset = pgx runs its own local PostgreSQL (\`pgx local status\`).
${o.url ? `url = ${tomlString(o.url)}` : '# url = "postgresql://me@127.0.0.1:5432/postgres"'}

[project]
name = ${tomlString(o.name)}
# The database branches are cloned from (a frozen template of it). Unset = branches start empty.
${o.source ? `source = ${tomlString(o.source)}` : '# source = "myapp_dev"'}

[agent]
idle_ttl = "2h"   # a branch with no activity for this long is dropped by gc
grace = "10m"     # a retired branch is kept this long before gc drops it

[guards]          # set on every branch (never on the source or template); "off" disables one
client_connection_check_interval = "5s"
idle_in_transaction_session_timeout = "15m"
statement_timeout = "1h"
`;
}

/** Writes .pgx.toml. The text is validated BEFORE writing, so a bad flag never leaves a broken file behind. */
export function initProject(o: InitOptions): { path: string; written: boolean; name: string } {
  const dir = resolve(o.dir);
  const path = join(dir, CONFIG_FILE);
  if (existsSync(path) && !o.force) {
    throw new PgxError('USAGE', `${path} already exists.`, 'Pass --force to overwrite it, or edit it by hand.');
  }
  const name =
    o.name ??
    (basename(dir)
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .replace(/^[.-]+/, '')
      .slice(0, 63) ||
      'project');
  const text = renderConfig({ name, url: o.url, source: o.source, by: o.by });
  validateConfigText(text, path);
  const hasPassword = o.url ? parseUrl(o.url).password !== undefined : false; // also rejects an unparseable url, before writing
  writeFileSync(path, text, { mode: hasPassword ? 0o600 : 0o644 });
  if (hasPassword) chmodSync(path, 0o600); // an existing file (--force) keeps its mode otherwise
  return { path, written: true, name };
}

/**
 * Sets `[project] source` in an existing .pgx.toml (`pgx source import` when the project had none), keeping the rest
 * of the text: the commented `# source = …` line `pgx init` writes is replaced, else the key goes under [project].
 * The result is validated, and must read back as that source, before it is written.
 */
export function setConfigSource(file: string, source: string): void {
  const text = readFileSync(file, 'utf8');
  const line = `source = ${tomlString(source)}`;
  let next: string;
  if (/^#\s*source\s*=.*$/m.test(text)) next = text.replace(/^#\s*source\s*=.*$/m, line);
  else if (/^\[project\]\s*$/m.test(text)) next = text.replace(/^\[project\]\s*$/m, (h) => `${h}\n${line}`);
  else next = `${text.replace(/\n*$/, '\n')}\n[project]\n${line}\n`;
  validateConfigText(next, file);
  if (parseToml(next).project && (parseToml(next).project as { source?: string }).source !== source) {
    throw new PgxError(
      'CONFIG_INVALID',
      `${file}: could not set [project] source safely.`,
      `Add \`${line}\` under [project] by hand.`,
    );
  }
  writeFileSync(file, next);
}

/**
 * Is `file` the .pgx.toml `pgx agent install` wrote, unchanged since? Its text must be what install writes for the
 * name it holds, but for the path of the example file in the first comment (another pgx install or version there is
 * not a change of the user's). 'changed' and 'not-install' say why it stays.
 */
export function installWroteUnchanged(file: string): 'unchanged' | 'changed' | 'not-install' | 'missing' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return 'missing';
  }
  if (!text.split('\n').includes(INSTALL_WROTE)) return 'not-install';
  let name: unknown;
  try {
    name = (parseToml(text).project as { name?: unknown } | undefined)?.name;
  } catch {
    return 'changed';
  }
  if (typeof name !== 'string') return 'changed';
  const firstLine = (t: string) => t.replace(/^# pgx: every coding agent[^\n]*\n/, '');
  return firstLine(text) === firstLine(renderConfig({ name, by: 'install' })) ? 'unchanged' : 'changed';
}
