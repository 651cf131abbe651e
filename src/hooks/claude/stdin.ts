// The hook payload's text, read once per hook process, in one place: the light entry (entries/hook-fast.ts) reads it and
// passes it on to the in-process hook (bin/pgx.js, as an argument) or to the broker (in the request); the CLI's
// `agent hook` reads it here too. Node built-ins only: the light entry loads it on every hook.
import { readFileSync } from 'node:fs';

/** Claude Code's payloads are small; anything larger is refused by the hook runner (run.ts), failing closed. */
export const MAX_STDIN = 1024 * 1024;

/**
 * All of stdin, as text. One synchronous read of fd 0 first: process.stdin would build a stream (a net.Socket for
 * Claude Code's pipe). A non-blocking pipe (EAGAIN) or none: the stream, stopped once past MAX_STDIN. A terminal
 * (`emptyOnTty`, the CLI's `agent hook` typed by hand) is no payload.
 */
export async function readHookStdin(opts: { emptyOnTty?: boolean } = {}): Promise<string> {
  if (opts.emptyOnTty && process.stdin.isTTY) return '';
  try {
    return readFileSync(0, 'utf8');
  } catch {
    // the stream way below
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of process.stdin) {
    chunks.push(c as Buffer);
    if ((size += (c as Buffer).length) > MAX_STDIN) break; // refused whole by the hook runner
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * No agent nests a payload this deep; past it, JSON.stringify and the schemas recurse until the stack runs out, and
 * a Copilot payload 100,000 deep was answered with nothing (the command ran as typed: decision 455).
 */
export const MAX_PAYLOAD_DEPTH = 128;

/** How deep `text`'s arrays and objects nest (outside strings), counted up to one past `max`: one pass, no parse. */
function nesting(text: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest && (deepest = depth) > max) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** The payload text within MAX_STDIN and MAX_PAYLOAD_DEPTH, or the error the hook runner turns into its event's failure. */
export function withinLimit(text: string): string {
  if (text.length > MAX_STDIN) throw new Error('hook payload larger than 1 MiB');
  if (nesting(text, MAX_PAYLOAD_DEPTH) > MAX_PAYLOAD_DEPTH)
    throw new Error(`hook payload nested deeper than ${MAX_PAYLOAD_DEPTH} levels`);
  return text;
}
