// Reading and writing a Claude Code settings file (JSON) safely.
//
// - A file we cannot parse is never overwritten: the caller gets a SettingsFileError naming the file.
// - Writes are atomic: the new text goes to `<path>.tmp-<pid>`, is fsync'ed, then renamed over the file.
//   A symlinked settings file (dotfile managers) is written through to its target, so the link survives.
// - The parent directory (`.claude/`) is created when absent; an existing file keeps its mode.

import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The settings file exists but is not something pgx can safely edit: invalid JSON, a top level that is
 * not an object, a `hooks` (or an event list, or `permissions.allow`) of the wrong type, or unreadable.
 * The file is left untouched.
 */
export class SettingsFileError extends Error {
  readonly code = 'SETTINGS_INVALID' as const;
  /** Same exit status as other invalid configuration (EXIT.config in src/errors.ts). */
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
    return fs.readFileSync(file, 'utf8');
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

/** Write `text` to `file` atomically (tmp + fsync + rename), creating the parent directory if needed. */
export function writeFileAtomic(file: string, text: string): void {
  let target = file;
  let mode: number | undefined;
  try {
    target = fs.realpathSync(file); // write through a symlink instead of replacing it
    mode = fs.statSync(target).mode & 0o7777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // A dangling symlink: write to where it points, so the link becomes valid.
    try {
      const link = fs.readlinkSync(file);
      target = path.resolve(path.dirname(file), link);
    } catch {
      target = file;
    }
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  let renamed = false;
  try {
    const fd = fs.openSync(tmp, 'w', mode ?? 0o666);
    try {
      fs.writeFileSync(fd, text, 'utf8');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (mode !== undefined) fs.chmodSync(tmp, mode); // openSync's mode is filtered by the umask
    fs.renameSync(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        fs.unlinkSync(tmp);
      } catch {
        /* nothing to clean up */
      }
    }
  }
}
