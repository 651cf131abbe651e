// How a destructive command asks (decision 134, the same for `local down --purge` and `agent down --project`): it
// lists what it would remove first; --yes skips the question; with no terminal to ask on (no TTY on stdin, or
// --json) and no --yes it refuses with exit 2 and nothing done; a "no" is exit 2 too.
import { createInterface } from 'node:readline/promises';
import { PgxError } from '../lib/errors.js';

async function ask(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/**
 * True when the command may go on. `what` is the listing (it goes in the refusal, or on stderr before the question);
 * false means the user said no (the caller prints "nothing …" and exits 2).
 */
export async function confirmDestructive(o: {
  yes?: boolean;
  json?: boolean;
  header: string;
  what: string;
  question: string;
  refusal: string;
}): Promise<boolean> {
  if (o.yes) return true;
  if (!process.stdin.isTTY || o.json)
    throw new PgxError('USAGE', `${o.refusal}\n${o.what}`, 'Pass --yes to confirm (nothing was changed).');
  process.stderr.write(`${o.header}\n${o.what}\n`);
  return ask(o.question);
}
