// "did you mean": the nearest known name to a mistyped one (a config key, a table), by edit distance. Small and
// dependency-free: the candidates are a dozen keys, and the hot path never calls it (only an invalid config does).

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours cost 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate nearest to `word` (case-insensitive), when it is near enough to be a typo: at most 2 edits, and
 * fewer than half of the word's letters (so "ab" never becomes "pool"). Ties go to the first candidate.
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: { name: string; dist: number } | undefined;
  for (const c of candidates) {
    const dist = editDistance(w, c.toLowerCase());
    if (c !== word && (!best || dist < best.dist)) best = { name: c, dist };
  }
  return best && best.dist <= 2 && best.dist * 2 < Math.max(w.length, 2) ? best.name : undefined;
}
