// The names the name strategies write: invented but plausible first and last names, built from syllables, 600 of
// each (360,000 pairs; decision 467). Invented so that a masked name is rarely anyone's real one, and many so that
// distinct values mostly stay distinct (the old 32 × 32 pools merged 1,499 usernames into 793). A masking run also
// drops from the pools every word of the values it masks (`avoiding`), so no original name of the copy can come out
// of them by chance; a value whose pick was dropped takes the next name kept, so the others do not move.

const FIRST_HEADS = ['Al', 'Bel', 'Cor', 'Dar', 'Ev', 'Fen', 'Gal', 'Hal', 'Is', 'Jor', 'Kel', 'Lor', 'Mar', 'Nev'];
const FIRST_HEADS_2 = ['Or', 'Per', 'Quil', 'Ros', 'Sel', 'Tam', 'Ul', 'Vel', 'Wen', 'Yor', 'Zan', 'Bry', 'Cal', 'Dov'];
const FIRST_TAILS = ['ana', 'eth', 'ira', 'ova', 'une', 'ric', 'enna', 'ian', 'oria', 'wyn', 'ella', 'ander'];
const FIRST_TAILS_2 = ['is', 'ette', 'o', 'ara', 'iel', 'yne', 'asha', 'in', 'ado', 'ika', 'ius', 'essa', 'om'];
const LAST_HEADS = ['Ash', 'Brem', 'Cald', 'Dorn', 'Eld', 'Fair', 'Grim', 'Hollen', 'Ing', 'Jarr', 'Kest', 'Lind'];
const LAST_HEADS_2 = [
  'Mor',
  'Norr',
  'Oak',
  'Pell',
  'Quen',
  'Rav',
  'Stav',
  'Thorn',
  'Ulm',
  'Vand',
  'Wex',
  'Yarl',
  'Zorn',
];
const LAST_TAILS = ['ford', 'wick', 'holm', 'ley', 'mere', 'dale', 'strom', 'berg', 'ton', 'vik', 'well', 'by'];
const LAST_TAILS_2 = ['more', 'stead', 'cott', 'ham', 'ridge', 'shaw', 'wood', 'gard', 'land', 'mont', 'field', 'sen'];

/** Every head with every tail, in a fixed order (the pools never change between versions without a decision). */
function pool(heads: string[], tails: string[], size: number): string[] {
  const out: string[] = [];
  for (const t of tails) for (const h of heads) out.push(h + t);
  return [...new Set(out)].slice(0, size);
}

export const POOL_SIZE = 600;
export const FIRST_NAMES = pool([...FIRST_HEADS, ...FIRST_HEADS_2], [...FIRST_TAILS, ...FIRST_TAILS_2], POOL_SIZE);
export const LAST_NAMES = pool([...LAST_HEADS, ...LAST_HEADS_2], [...LAST_TAILS, ...LAST_TAILS_2], POOL_SIZE);

/** The pools a masking run writes from: each as long as the full pool, every dropped name replaced by the next kept. */
export interface NamePools {
  first: string[];
  last: string[];
}

/** The pools with every name in `words` (lower case) replaced by the next name that is not (decision 467). */
export function avoiding(words: ReadonlySet<string>): NamePools {
  const remap = (names: string[]) => {
    const kept = names.map((n) => !words.has(n.toLowerCase()));
    if (!kept.some(Boolean)) throw new Error('every name of the pool is a word of the data');
    return names.map((_, i) => {
      let j = i;
      while (!kept[j]) j = (j + 1) % names.length;
      return names[j]!;
    });
  };
  return { first: remap(FIRST_NAMES), last: remap(LAST_NAMES) };
}

/** The pools with nothing to avoid (what the scan checks suggestions against). */
export const PLAIN_POOLS: NamePools = { first: FIRST_NAMES, last: LAST_NAMES };
