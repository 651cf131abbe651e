// Reading and writing a JSON settings file safely: Claude Code's settings, Codex's hooks.json (install writes them, the
// hooks and doctor read them; in lib/ because all three do).
//
// - A file we cannot parse is never overwritten: the caller gets a SettingsFileError naming the file.
// - Writes are atomic (fsutil.ts writeFileAtomic with throughLinks): a symlinked settings file (dotfile managers)
//   is written through to its target, so the link survives; the parent directory (`.claude/`) is created when
//   absent; an existing file keeps its mode.

import { readFileSync } from 'node:fs';

/**
 * The settings file exists but is not something pgx can safely edit: invalid JSON, a top level that is
 * not an object, a `hooks` (or an event list, or `permissions.allow`) of the wrong type, or unreadable.
 * The file is left untouched.
 */
export class SettingsFileError extends Error {
  readonly code = 'SETTINGS_INVALID' as const;
  /** Same exit status as other invalid configuration (EXIT.config in src/lib/errors.ts). */
  readonly exitCode = 3;
  readonly hint: string;
  readonly path: string;
  constructor(file: string, detail: string, options?: { cause?: unknown }) {
    super(`Claude Code settings file ${file} cannot be edited: ${detail}`, options);
    this.name = 'SettingsFileError';
    this.path = file;
    this.hint = `Fix ${file} by hand (it must be a JSON object, with "hooks" an object of event arrays), or move it aside, then re-run. pgx did not change it.`;
  }
  toJSON() {
    return { code: this.code, message: this.message, hint: this.hint, exit_code: this.exitCode };
  }
}

export type JsonObject = Record<string, unknown>;

export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The file's text, or undefined when it does not exist. */
export function readSettingsFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SettingsFileError(file, `cannot read it (${(e as Error).message})`, { cause: e });
  }
}

/**
 * Parse settings text into an object. Absent or blank text is an empty object.
 * A leading UTF-8 BOM is tolerated (and dropped if pgx rewrites the file).
 */
export function parseSettingsText(text: string | undefined, label: string): JsonObject {
  if (text === undefined) return {};
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    throw new SettingsFileError(label, `it is not valid JSON (${(e as Error).message})`, { cause: e });
  }
  if (!isPlainObject(value)) throw new SettingsFileError(label, 'its top level is not a JSON object');
  return value;
}

export function serializeSettings(obj: JsonObject): string {
  return JSON.stringify(obj, null, 2) + '\n';
}
