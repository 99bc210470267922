/** Text analysis of a document: its fields' terms (stemmed, stop words out) and lengths. */
import type { JsonObject } from '../domain/types.ts';
import { compounds, stem, STOP_WORDS, terms, tokens, words } from './text.ts';
import type { SearchDoc } from './types.ts';

/** The fields BM25F scores, in the order of every per-field array (`lens`, term frequencies). */
export const FIELD_NAMES = ['name', 'description', 'meta'] as const;
export type Field = (typeof FIELD_NAMES)[number];

function metaText(m: JsonObject): string {
  return Object.values(m)
    .filter((v) => typeof v === 'string' || typeof v === 'number')
    .join(' ');
}

export interface Analyzed {
  tf: Map<string, [number, number, number]>;
  len: [number, number, number];
  /**
   * Words that do not start with their own stem's letters all the way ("running" → "run",
   * "hiking" → "hike"), each with its stem: a half-typed last word ("runni", "hikin") is a prefix
   * of the word, not of the stem.
   */
  surface: Map<string, string>;
}

/** The terms of a text's compounds as one word each (`compounds`): "Wi-Fi" → wifi. */
const joinedTerms = (text: string): string[] => Array.from(compounds(text), (c) => c.word).filter((w) => !STOP_WORDS.has(w));

/**
 * A document's terms by field. `joined`: with its compounds' joined words (what is indexed); without
 * them, its words alone (what term feedback weighs: a joined word's letters are its words' again).
 */
export function analyze(d: SearchDoc, joined = true): Analyzed {
  const tf = new Map<string, [number, number, number]>();
  const surface = new Map<string, string>();
  const texts = [d.name, d.description ?? '', metaText(d.metadata)];
  const len: [number, number, number] = [0, 0, 0];
  texts.forEach((text, f) => {
    const add = (w: string) => {
      const t = stem(w);
      if (t !== w) surface.set(w, t);
      let e = tf.get(t);
      if (!e) tf.set(t, (e = [0, 0, 0]));
      e[f] = (e[f] as number) + 1;
    };
    const letters: string[] = [];
    for (const w of tokens(text, letters)) {
      if (STOP_WORDS.has(w)) continue;
      add(w);
      len[f] = (len[f] as number) + 1;
    }
    // Beside the pairs, their letters alone (what a one-character query finds), and beside the
    // words of a compound the compound as one word ("Wi-Fi" is also wifi), in no field's length:
    // the same letters again, as Lucene leaves overlapping tokens out of a field's length.
    for (const c of letters) add(c);
    if (joined) for (const w of joinedTerms(text)) add(w);
  });
  return { tf, len, surface };
}

/**
 * Per document, a value kept for the documents asked for last (by object: a changed item is a new
 * document), the oldest dropped first once the values' sizes add up past `budget`.
 */
class KeptForLastAsked<V> {
  private readonly kept = new Map<SearchDoc, V>();
  private total = 0;

  constructor(
    private readonly budget: number,
    private readonly size: (v: V) => number,
    private readonly make: (d: SearchDoc) => V,
  ) {}

  get(d: SearchDoc): V {
    let v = this.kept.get(d);
    if (v !== undefined) this.kept.delete(d);
    else {
      v = this.make(d);
      this.total += this.size(v);
      for (const [old, k] of this.kept) {
        if (this.total <= this.budget) break;
        this.kept.delete(old);
        this.total -= this.size(k);
      }
    }
    this.kept.set(d, v);
    return v;
  }
}

/**
 * A document's name as `words` reads it, joined by single spaces (the exact criterion compares
 * it with the query's), kept for the documents asked for last: up to about 1 MB of names.
 */
export const nameWords = (d: SearchDoc): string => namesCache.get(d);
const namesCache = new KeptForLastAsked<string>(
  1 << 19,
  (v) => v.length + 16,
  (d) => foldedName(d.name),
);

/** A name as `words` reads it, joined by single spaces (`nameWords`, uncached). */
export const foldedName = (name: string): string => words(name).join(' ');

/**
 * The stop word a name begins with (as `words` reads it), or undefined: what the build and the
 * delta key a name under for queries of stop words only (`namesBeginning`). Read from the name's
 * first space-separated pieces only, about a microsecond a name where reading a whole name with
 * accents took 10.
 */
export function stopWordOpening(name: string): string | undefined {
  PIECE.lastIndex = 0;
  // Eight pieces as a split on spaces would give, the empty one before leading spaces counted.
  const pieces = LEADING_SPACE.test(name) ? 7 : 8;
  for (let k = 0; k < pieces; k++) {
    const piece = PIECE.exec(name)?.[0];
    if (piece === undefined) return undefined;
    // A piece of lower-case ASCII letters is its own word (most names' first piece): no regex.
    const first = LOWER_ASCII.test(piece) ? piece : words(piece)[0];
    if (first !== undefined) return STOP_WORDS.has(first) ? first : undefined;
  }
  return undefined;
}

/** A name's space-separated pieces, read one at a time (`stopWordOpening` stops at the first with a word). */
const PIECE = /\S+/g;
const LOWER_ASCII = /^[a-z]+$/;
const LEADING_SPACE = /^\s/;

/** Names whose first word is a stop word (`SearchIndex.namesBeginning`): keys, and each one's name as `nameWords` reads it. */
export interface NamesBeginning {
  keys: readonly number[];
  names: readonly string[];
}
export const NO_NAMES: NamesBeginning = { keys: [], names: [] };

/**
 * Terms `analysedTerms` keeps, over all the documents it keeps: about 20 bytes each (the term is
 * the stemmer cache's string), 5 MB in all; about 2,000 abstracts of 150 words, or 250 of the
 * longest descriptions an item can have.
 */
const TERMS_CACHE_TERMS = 1 << 18;

export interface AnalysedTerms {
  /** The document's terms, in `analyze`'s order. */
  terms: string[];
  /** Term i's frequency in field f (FIELD_NAMES order) at `tf[3 * i + f]`, as a word of the text (not a compound's joined word). */
  tf: Uint32Array;
  /** The name's compounds as one word each (`compounds`), stemmed: what else the name holds ("Wi-Fi" is also wifi). */
  nameJoined: ReadonlySet<string>;
}

/**
 * `analyze(d, false).tf` in two arrays, kept for the documents asked for last (by object: a changed
 * item is a new document), the oldest dropped first beyond TERMS_CACHE_TERMS terms. Term feedback
 * reads the few documents a query's lists agree on, and a query asked again (or another that
 * agrees on the same documents) finds them analysed: analysing them was an eighth of a long
 * query's ranking (docs/benchmarks.md, 2026-11-27 session 17).
 */
export const analysedTerms = (d: SearchDoc): AnalysedTerms => termsCache.get(d);
const termsCache = new KeptForLastAsked<AnalysedTerms>(
  TERMS_CACHE_TERMS,
  (e) => e.terms.length,
  (d) => {
    const { tf } = analyze(d, false);
    const e = { terms: [...tf.keys()], tf: new Uint32Array(3 * tf.size), nameJoined: new Set(joinedTerms(d.name).map(stem)) };
    let i = 0;
    for (const f of tf.values()) e.tf.set(f, 3 * i++);
    return e;
  },
);

/** Pairs `fieldPairs` keeps, over all the documents it keeps (8 bytes each). */
const PAIRS_CACHE_PAIRS = 1 << 19;

/**
 * A pair of adjacent stems as a 53-bit code (an integer a double holds exactly): two 32-bit hashes
 * of both stems with a separator between (FNV-1a, and a multiply-xorshift one), the first whole and
 * 21 bits of the second. Two pairs of a query and a document share a code about once in 10^12
 * (32 bits alone: "comput place" and "thu contract" do).
 */
export function pairCode(a: string, b: string): number {
  let h = 0x811c9dc5;
  let g = 0x9747b28c;
  // The characters of a, 0x1f, then those of b, in one loop: a closure per call (the mixing step)
  // kept h and g in a context object and cost 3.5 % of a 100K catalog's ranking.
  const n = a.length + 1 + b.length;
  for (let i = 0; i < n; i++) {
    const c = i < a.length ? a.charCodeAt(i) : i === a.length ? 0x1f : b.charCodeAt(i - a.length - 1);
    h = Math.imul(h ^ c, 0x01000193);
    g = Math.imul(g ^ c, 0x5bd1e995);
    g ^= g >>> 15;
  }
  return (h >>> 0) * 2 ** 21 + (g >>> 11);
}

/** The codes of a text's adjacent stems (stop words out), sorted: a pair's frequency is its run's length. */
function pairsOf(text: string): Float64Array {
  const ts = terms(text);
  const out = new Float64Array(Math.max(0, ts.length - 1));
  for (let i = 0; i + 1 < ts.length; i++) out[i] = pairCode(ts[i] as string, ts[i + 1] as string);
  return out.sort();
}

/**
 * The adjacent stem pairs of a document's name and description (`pairsOf`), for term proximity
 * (rank.ts `proximity`), kept for the documents asked for last (by object, as `analysedTerms`),
 * the oldest dropped first beyond PAIRS_CACHE_PAIRS pairs.
 */
export const fieldPairs = (d: SearchDoc): readonly [Float64Array, Float64Array] => pairsCache.get(d);
const pairsCache = new KeptForLastAsked<readonly [Float64Array, Float64Array]>(
  PAIRS_CACHE_PAIRS,
  (e) => e[0].length + e[1].length,
  (d) => [pairsOf(d.name), pairsOf(d.description ?? '')],
);

/** The index of the first of ascending `sorted` at least `x` (its length when none is; 0 for NaN, which no number equals or exceeds). */
export function firstAtLeast(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How often `code` is in `sorted` (a run found by binary search). */
export function countOf(sorted: Float64Array, code: number): number {
  const lo = firstAtLeast(sorted, code);
  let n = 0;
  while (lo + n < sorted.length && sorted[lo + n] === code) n++;
  return n;
}

/**
 * Adds to `counts[at[k]]` how many times each of the ascending distinct `codes` occurs in
 * ascending `sorted`, as `countOf` for each code would: in one pass over both when that reads
 * fewer values than a binary search per code (a long query's pairs against a document's), else
 * by `countOf`.
 */
export function addCounts(sorted: Float64Array, codes: Float64Array, at: Int32Array, counts: Float64Array): void {
  const n = sorted.length;
  const m = codes.length;
  if (n === 0 || m === 0) return;
  if (m * Math.log2(n + 1) < n + m) {
    for (let k = 0; k < m; k++) {
      const c = countOf(sorted, codes[k] as number);
      const j = at[k] as number;
      if (c > 0) counts[j] = (counts[j] as number) + c;
    }
    return;
  }
  let i = 0;
  let k = 0;
  while (i < n && k < m) {
    const x = sorted[i] as number;
    const code = codes[k] as number;
    if (x < code) i++;
    else if (x > code) k++;
    else {
      const j = at[k] as number;
      counts[j] = (counts[j] as number) + 1;
      i++;
    }
  }
}

/** Each field's average length over n documents from their total lengths (1 when there are none). */
export const averageLengths = (sums: readonly number[], n: number): number[] => sums.map((sum) => (n ? sum / n : 0) || 1);
