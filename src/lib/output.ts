// The one output writer: a result goes to stdout as JSON (--json) or as human text; progress and logs go to stderr.
// Colour only on a TTY and never with NO_COLOR.
import { describeError, exitCodeOf, isPgxError, redactSecrets } from './errors.js';

export interface Output {
  json: boolean;
  /** Print the command's result: the JSON value with --json, else the human rendering. */
  result(value: unknown, human: () => string): void;
  progress(msg: string): void;
}

export function createOutput(opts: { json?: boolean }): Output {
  const json = !!opts.json;
  return {
    json,
    result(value, human) {
      const text = json ? JSON.stringify(value) : human();
      if (text) process.stdout.write(text.endsWith('\n') ? text : text + '\n');
    },
    progress(msg) {
      process.stderr.write(`pgx: ${msg}\n`);
    },
  };
}

/**
 * A reader that went away (`pgx agent gc --help | head`): node ignores SIGPIPE, so a write to the closed pipe fails
 * with EPIPE, and the unhandled error printed a stack trace. The entry calls this once: the command then ends quietly,
 * as a program killed by SIGPIPE does, with the status it settled on (0 for --help; the rejection that sets it runs
 * after this error, hence setImmediate), else 128 + SIGPIPE = 141, the shells' convention (decision 456).
 */
export function endQuietlyOnClosedPipe(): void {
  let ending = false;
  const onError = (e: NodeJS.ErrnoException) => {
    // EPIPE, then ERR_STREAM_DESTROYED for every later write to that stream
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
    if (ending) return;
    ending = true;
    setImmediate(() => process.exit(typeof process.exitCode === 'number' ? process.exitCode : 141));
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
}

export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return !!stream.isTTY && process.env.NO_COLOR === undefined && process.env.TERM !== 'dumb';
}

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1, cyan: 36 } as const;
export function paint(text: string, color: keyof typeof codes, stream: NodeJS.WriteStream = process.stdout): string {
  return useColor(stream) ? `\u001b[${codes[color]}m${text}\u001b[0m` : text;
}

const visibleLength = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '').length;

/** An aligned table: a header row and one row per item; empty cells show "-". */
export function table(headers: string[], rows: (string | null | undefined)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined || c === '' ? '-' : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => visibleLength(r[i] ?? ''))));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i]! - visibleLength(c ?? ''))))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * "2026-12-05 17:07:04 (in 23h 59m)": a moment as local date and time, and how far off it is. Always with the date:
 * a bare "until 17:07:04" a day away reads as today (issue 30). The one formatter for a deadline or a time in a message.
 */
export function clockTime(at: Date | string, now = Date.now()): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  const date = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  return `${date} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} (${relativeTime(d, now)})`;
}

/** "in 1h 59m", "3m ago", "now". */
export function relativeTime(to: Date | string, now = Date.now()): string {
  const ms = new Date(to).getTime() - now;
  const abs = Math.abs(ms);
  if (abs < 1000) return 'now';
  const s = Math.floor(abs / 1000);
  const parts = [
    Math.floor(s / 86400) && `${Math.floor(s / 86400)}d`,
    Math.floor((s % 86400) / 3600) && `${Math.floor((s % 86400) / 3600)}h`,
    Math.floor((s % 3600) / 60) && `${Math.floor((s % 3600) / 60)}m`,
    s < 3600 && s % 60 && `${s % 60}s`,
  ]
    .filter(Boolean)
    .slice(0, 2)
    .join(' ');
  return ms > 0 ? `in ${parts}` : `${parts} ago`;
}

/**
 * An error as the text a person reads (`error: …` and `hint: …` lines, credentials masked) and the exit status it
 * ends the command with: what every printer of an error prints, the CLI's, the in-process exec's and the broker's
 * answer to a routed exec. `color`: paint the labels (a TTY of ours); `stack`: add an unexpected error's stack.
 */
export function errorReply(
  e: unknown,
  opts: { color?: boolean; stack?: boolean } = {},
): { text: string; exitCode: number } {
  const d = describeError(e);
  const label = (text: string, color: keyof typeof codes) => (opts.color ? paint(text, color, process.stderr) : text);
  let text = `${label('error', 'red')}: ${d.message}\n`;
  if (d.hint) text += `${label('hint', 'yellow')}: ${d.hint}\n`;
  if (opts.stack && !isPgxError(e) && e instanceof Error && e.stack) text += redactSecrets(e.stack) + '\n';
  return { text, exitCode: exitCodeOf(e) };
}

/**
 * Prints an error once: JSON on stdout with --json (so scripts get a parseable object), text on stderr otherwise.
 * Returns the exit status the error ends the command with.
 */
export function printError(e: unknown, json: boolean, jsonStream: NodeJS.WritableStream = process.stdout): number {
  if (json) {
    jsonStream.write(JSON.stringify({ error: describeError(e) }) + '\n');
    return exitCodeOf(e);
  }
  const reply = errorReply(e, { color: true, stack: !!process.env.DEBUG?.includes('pgx') });
  process.stderr.write(reply.text);
  return reply.exitCode;
}
