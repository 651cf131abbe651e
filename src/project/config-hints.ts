// What an invalid .pgx.toml's error says about a key it does not know: the line it is on, and the key it was
// probably meant to be ("idle_tl" → "idle_ttl", a key under the wrong table → where it belongs). Only the key's
// name and line are quoted, never a value (a [server] url may hold a password).
import { didYouMean } from '../lib/did-you-mean.js';

/** The 1-based line of `key = …` in `[table]` (or before any table, for table ""), if the text has it there. */
export function keyLine(text: string, table: string, key: string): number | undefined {
  let current = '';
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    const header = /^\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header) {
      current = header[1]!.replace(/^["']|["']$/g, '');
      if (table === '' && current === key) return i + 1; // an unknown table: its header's line
      continue;
    }
    const k = /^["']?([^"'=\s]+)["']?\s*=/.exec(line)?.[1];
    if (current === table && k === key) return i + 1;
  }
  return undefined;
}

/**
 * One unknown key as the error names it: `"idle_tl" (line 4; did you mean "idle_ttl"?)`. `known`: each table's keys
 * (the top level's are the tables).
 */
export function unknownKeyNote(
  text: string | undefined,
  table: string,
  key: string,
  known: Record<string, readonly string[]>,
): string {
  const line = text === undefined ? undefined : keyLine(text, table, key);
  const near = didYouMean(key, table === '' ? Object.keys(known) : (known[table] ?? []));
  const elsewhere = table === '' ? undefined : Object.keys(known).find((t) => t !== table && known[t]!.includes(key));
  const hint = near ? `did you mean "${near}"?` : elsewhere ? `it belongs under [${elsewhere}]` : undefined;
  const parts = [line ? `line ${line}` : undefined, hint].filter(Boolean);
  return `"${key}"${parts.length ? ` (${parts.join('; ')})` : ''}`;
}
