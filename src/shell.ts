/** POSIX single-quoting, always (even when a word needs none): `a'b` → `'a'\''b'`. The one shell-quoting helper. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Bare words stay bare (readable transcripts and exports); anything else is single-quoted. */
export function quoteIfNeeded(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : shellQuote(word);
}
