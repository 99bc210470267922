import { afterEach, describe, expect, it } from 'vitest';
import { RANKING, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { seededRandom } from '../../shared/random.ts';
import { editDistance, forEachNear, stem, words } from '../../shared/search/text.ts';

// Issue 18, defect 9: each unknown query word of four or more letters scanned the whole
// vocabulary, so a 1,000-character query of invented words cost tens of millions of comparisons.

/** What the scan found: terms with the same first letter, a length within `max`, and within `max` edits. */
function scan(vocab: readonly string[], term: string, max: number): [string, number][] {
  const out: [string, number][] = [];
  for (const v of vocab) {
    if (Math.abs(v.length - term.length) > max || v[0] !== term[0]) continue;
    const d = editDistance(term, v, max);
    if (d <= max) out.push([v, d]);
  }
  return out;
}

function walk(vocab: readonly string[], term: string, max: number, prefix = false): [string, number][] {
  const out: [string, number][] = [];
  forEachNear(vocab, term, max, (v, d) => out.push([v, d]), prefix);
  return out;
}

/** What a scan finds as a half-typed word with typos: terms with the same first letter that start with something within `max` edits, with the least distance. */
function scanPrefix(vocab: readonly string[], term: string, max: number): [string, number][] {
  const out: [string, number][] = [];
  for (const v of vocab) {
    if (v[0] !== term[0]) continue;
    let d = max + 1;
    for (let k = 0; k <= v.length; k++) d = Math.min(d, editDistance(term, v.slice(0, k), max));
    if (d <= max) out.push([v, d]);
  }
  return out;
}

/** A vocabulary of made-up words from a few syllables: many near neighbours, as typos meet them. */
function vocabulary(n: number, seed: number, alphabet: string[]): string[] {
  const r = seededRandom(seed);
  const out = new Set<string>();
  while (out.size < n) {
    let w = '';
    const parts = 1 + Math.floor(r() * 5);
    for (let k = 0; k < parts; k++) w += alphabet[Math.floor(r() * alphabet.length)];
    out.add(w);
  }
  return [...out].sort();
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ten', 'vor', 'ul', 'sa', 'dre', 'po', 'nix', 'ta', 'gel', 'bri', 'so', 'fa', 'a', 'e', 'st', 'ing'];

describe('forEachNear (typo lookup over the sorted vocabulary)', () => {
  it('finds exactly the terms and distances a scan finds, in vocabulary order (whole words, and words as typed so far)', () => {
    const r = seededRandom(7);
    const alphabets = [SYLLABLES, ['a', 'b', 'ab', 'ba', 'c'], ['é', 'e', 'ü', 'ß', '日本', '𝔘', '\u{1F600}', 'x']];
    let compared = 0;
    let found = 0;
    let foundStarting = 0;
    alphabets.forEach((alphabet, a) => {
      const vocab = vocabulary(a === 1 ? 200 : 3000, 100 + a, alphabet);
      for (let n = 0; n < 400; n++) {
        // Queries near terms (one or two edits of a real term) and made up outright.
        let term = vocabulary(1, 1000 * a + n, alphabet)[0] as string;
        if (n % 2 === 0) {
          const base = vocab[Math.floor(r() * vocab.length)] as string;
          const at = Math.floor(r() * base.length);
          const edits = [
            base.slice(0, at) + base.slice(at + 1),
            `${base.slice(0, at)}q${base.slice(at)}`,
            `${base.slice(0, at)}z${base.slice(at + 1)}`,
            base.slice(0, at) + base.slice(at + 1, at + 2) + base.slice(at, at + 1) + base.slice(at + 2),
          ];
          term = edits[n % edits.length] as string;
        }
        for (const max of [0, 1, 2, 3]) {
          const expected = scan(vocab, term, max);
          expect(walk(vocab, term, max), `${JSON.stringify(term)} within ${max}`).toEqual(expected);
          compared++;
          found += expected.length;
          const starts = scanPrefix(vocab, term, max);
          expect(walk(vocab, term, max, true), `${JSON.stringify(term)} starts within ${max}`).toEqual(starts);
          foundStarting += starts.length;
        }
      }
    });
    expect(compared).toBe(4800);
    expect(found).toBeGreaterThan(2000);
    expect(foundStarting).toBeGreaterThan(2 * found);
  });

  it('counts a swap of two adjacent letters as one edit, and handles the edges', () => {
    const vocab = ['jacket', 'jaket', 'jakcet', 'jacquet', 'shoe', 'sheo', 'sh', 's'].sort();
    expect(walk(vocab, 'jakcet', 1)).toEqual([
      ['jacket', 1],
      ['jakcet', 0],
      ['jaket', 1],
    ]);
    expect(walk(vocab, 'shoe', 1)).toEqual([
      ['sheo', 1],
      ['shoe', 0],
    ]);
    expect(walk(vocab, 'shoe', 2)).toEqual([
      ['sh', 2],
      ['sheo', 1],
      ['shoe', 0],
    ]);
    expect(walk(vocab, '', 2)).toEqual([]);
    expect(walk([], 'shoe', 2)).toEqual([]);
    expect(walk(vocab, 's'.repeat(1000), 2)).toEqual([]);
  });
});

describe('typo expansion cost (issue 18, defect 9)', () => {
  const vocab = vocabulary(30_000, 1, SYLLABLES);
  const docs: SearchDoc[] = [];
  for (let i = 0; i < vocab.length; i += 10) {
    docs.push({ id: i + 1, name: vocab.slice(i, i + 10).join(' '), description: '', metadata: {}, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: null });
  }
  const index = SearchIndex.build(docs, 8, 1);
  const known = new Set(index.parts.vocab);
  /** 1,000 characters of words that are not in the vocabulary but close to many of its terms. */
  const r = seededRandom(3);
  let query = '';
  while (query.length < 1000) {
    let w = '';
    while (w.length < 8 || known.has(stem(w))) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    query += `${w} `;
  }
  query = query.slice(0, 1000);
  const unknown = words(query).filter((w) => w.length >= 4 && !known.has(stem(w)));
  const defaultCap = RANKING.maxTypoWords;
  afterEach(() => {
    RANKING.maxTypoWords = defaultCap;
  });

  it('looks up at most maxTypoWords unknown words of a query, each for at most 5 terms', () => {
    expect(unknown.length).toBeGreaterThan(80);
    const expanded = index.expand(query);
    const typoTerms = [...expanded].filter(([, weight]) => weight === RANKING.fuzzyWeight);
    expect(typoTerms.length).toBeGreaterThan(0);
    expect(typoTerms.length).toBeLessThanOrEqual(5 * 8);
    expect(defaultCap).toBe(8);
    // The first unknown words are the ones looked up.
    const firstTypos = index.expand(unknown.slice(0, defaultCap).join(' '));
    for (const [t, w] of firstTypos) if (w === RANKING.fuzzyWeight) expect(expanded.get(t), t).toBeDefined();
  });

  it('walks a small part of the vocabulary per unknown word instead of all of it', () => {
    RANKING.maxTypoWords = Infinity;
    const before = index.typoWork;
    index.expand(query);
    const rows = index.typoWork - before;
    // A scan compared every unknown word with every term (of its first letter at least).
    expect(rows).toBeGreaterThan(0);
    expect(rows / unknown.length).toBeLessThan(index.parts.vocab.length / 20);
  });

  it('a normal typo still finds its terms', () => {
    const term = index.parts.vocab.find((t) => t.length >= 9 && stem(t) === t) as string;
    const typo = term.slice(0, 3) + term.slice(4);
    expect(index.has(stem(typo))).toBe(false);
    expect(index.expand(`${typo} and more`).get(term)).toBe(RANKING.fuzzyWeight);
  });
});
