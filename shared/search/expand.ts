/** Query expansion: a query's terms with their weights, plus prefix and typo expansions from the vocabulary. */
import { kthLargest } from '../top-k.ts';
import { RANKING } from './constants.ts';
import { byTerm, firstAtLeast, forEachNear, isCjk, isSpaceless, lastRunWords, stem, STOP_WORDS, tokens } from './text.ts';

/** The vocabulary a search expands its words against besides the index's: the delta's. */
export interface ExtraVocab {
  /** Stemmed terms (a set, or a map's keys). */
  terms: Pick<ReadonlySet<string> | ReadonlyMap<string, unknown>, 'has' | 'keys'>;
  /** Words whose stem differs from them, with that stem (see `Analyzed.surface`). */
  surfaces: ReadonlyMap<string, { stem: string }>;
  /** The same terms and words in code-unit order, searched instead of scanned when given. */
  sortedTerms?(): readonly string[];
  sortedSurfaces?(): readonly string[];
  /**
   * How many documents hold a term now: the build's and the delta's together, the build's copies
   * of changed or deleted documents left out. Without it, the build's own counts.
   */
  liveDf?(term: string): number;
  /**
   * How many of the build's documents that are changed or deleted since write each of the build's
   * surface words: a word no live document writes any more stands for nothing (as after the next
   * build), though another word keeps its stem live.
   */
  hiddenSurfaces?: ReadonlyMap<string, number>;
}
export const NO_EXTRA: ExtraVocab = { terms: new Set(), surfaces: new Map() };

/** Terms a half-typed last word stands for at most (its completions, most frequent first). */
const PREFIX_TERMS = 30;

/** The ways an unknown query word is split into two known words at most (`split`). */
const MAX_SPLITS = 2;
const DIGIT = /\p{N}/u;

/** The last words of a Thai, Lao, Khmer or Burmese run a half-typed word may have been split into at most. */
const JOINED_WORDS = 4;

/** Edits a typo of `word` may have: 1, or 2 from 8 letters. */
const typoEdits = (word: string): number => (word.length >= 8 ? 2 : 1);

/**
 * Expanded query terms with their weights (`expand`): a query word's own term weighs by how often
 * the query repeats it; a prefix or typo expansion also names the word's term it stands in for.
 */
export class Expansion extends Map<string, number> {
  /** Each expansion's query-word term: a document scores the best of a word and its expansions. */
  readonly standsFor = new Map<string, string>();

  constructor(
    /** The query's words, stop words included (a long query's words are held to a budget: rank.ts). */
    readonly words: number,
    /** The query's terms in the order of its words, stop words out (`terms` of the query): what term proximity pairs. */
    readonly sequence: readonly string[],
  ) {
    super();
  }
}

/** A build's vocabulary as expansion reads it. */
export interface BuildVocab {
  /** Terms, sorted. */
  vocab: readonly string[];
  /** Words whose stem differs from them, sorted, and the vocab index of each one's stem. */
  surface: readonly string[];
  surfaceStem: ArrayLike<number>;
  /** How many documents write each surface word (unknown for older builds: every word counts as written). */
  surfaceDf?: ArrayLike<number> | undefined;
  has(term: string): boolean;
  df(term: string): number;
}

/** Expands queries against one build's vocabulary (and a delta's); counts its typo lookups' work. */
export class QueryExpander {
  private longest = -1;
  /** Edit-distance rows computed by typo lookups so far (for tests and benchmarks). */
  typoWork = 0;

  constructor(private readonly build: BuildVocab) {}

  /** Whether a live document still writes the build's surface word at `at` (`ExtraVocab.hiddenSurfaces`). */
  private written(at: number, extra: ExtraVocab): boolean {
    const df = this.build.surfaceDf;
    if (!df) return true;
    return (df[at] as number) - (extra.hiddenSurfaces?.get(this.build.surface[at] as string) ?? 0) > 0;
  }

  /**
   * Query terms with their weights: a word's own term by how often the query repeats it (BM25's
   * k3 saturation), typo and prefix expansions less, each naming the word's term it stands in for
   * (`Expansion.standsFor`). The last word is taken as half typed only when the query ends in it
   * (no space or punctuation after it). In term order, whatever order the delta's terms are in:
   * scores are sums over these terms, and a sum in another order can differ in its last bit,
   * which is enough to move a hit across a cursor. Terms count with the build's and the delta's
   * documents together (`extra.liveDf`), as one build over the same items would count them.
   */
  expand(query: string, extra: ExtraVocab = NO_EXTRA): Expansion {
    const df = extra.liveDf ? (t: string) => (extra.liveDf as (t: string) => number)(t) : (t: string) => this.build.df(t);
    const raw = tokens(query);
    const open = /[\p{L}\p{N}\p{M}]$/u.test(query);
    const qtf = new Map<string, number>();
    const variants = new Map<string, [weight: number, word: string]>();
    const sequence: string[] = [];
    let typos = 0;
    raw.forEach((w, i) => {
      const isLast = i === raw.length - 1;
      const stop = STOP_WORDS.has(w);
      const t = stem(w);
      if (!stop) sequence.push(t);
      if (!stop && (qtf.has(t) || qtf.size < RANKING.maxQueryTerms)) qtf.set(t, (qtf.get(t) ?? 0) + 1);
      if (isLast && open) {
        // The last word may be half typed: every term it starts, or whose word it starts
        // ("runni" → running → run), most frequent first.
        for (const x of this.withPrefix(w, PREFIX_TERMS, extra, df)) if (x !== t && !variants.has(x)) variants.set(x, [RANKING.prefixWeight, t]);
        // In Thai, Lao, Khmer or Burmese the dictionary may have split a half-typed word into
        // others ("รองเท", half of รองเท้า, is รอง|เท): the run's last words joined (up to
        // JOINED_WORDS of them) stand for the terms they start as well.
        const run = isSpaceless(w) ? lastRunWords(query) : [];
        if (run[run.length - 1] === w)
          for (let j = run.length - 2; j >= Math.max(0, run.length - JOINED_WORDS); j--)
            for (const x of this.withPrefix(run.slice(j).join(''), PREFIX_TERMS, extra, df)) if (x !== t && !variants.has(x)) variants.set(x, [RANKING.prefixWeight, t]);
      }
      // Unknown term: likely a typo.
      // (A Chinese, Japanese or Korean pair has no typos: two characters beyond the basic plane
      // are 4 code units, one apart from many other pairs.)
      const unknown = !stop && w.length >= 4 && !isCjk(w) && qtf.has(t) && df(t) === 0;
      if (unknown && typos < RANKING.maxTypoWords) {
        // Take close vocabulary terms instead.
        typos++;
        for (const x of this.near(w, t, typoEdits(w), extra, df)) if (!variants.has(x)) variants.set(x, [RANKING.fuzzyWeight, t]);
      }
      if (unknown && isLast && open) {
        // Half typed with a typo ("jakc" → jacket): an unknown last word also stands for the terms
        // it starts within the typo rule's edits, weighed as both a prefix and a typo, below
        // every exact prefix.
        for (const x of this.withPrefixNear(w, typoEdits(w), PREFIX_TERMS, extra, df)) if (x !== t && !variants.has(x)) variants.set(x, [RANKING.prefixWeight * RANKING.fuzzyWeight, t]);
      }
    });
    this.split(raw, qtf, variants, df);
    return weighted(qtf, variants, raw.length, sequence);
  }

  /**
   * An unknown word written without the space the catalog has ("supersonic" for "super sonic"; a
   * hyphen's compound is also indexed joined, `compounds`, but not by a build made before), as
   * Algolia's word splitting: when it has no typo correction, it also stands for the two words of
   * two letters or more it splits into, when the catalog holds both (`MAX_SPLITS` ways at most),
   * at a word's own weight: the same letters in another spelling, not a guess. (The other way,
   * "wi-fi" for "Wifi", would have a join stand for two query words, which an expansion cannot:
   * standing for the first alone, measured on both collections, it lowered Cranfield.)
   */
  private split(raw: readonly string[], qtf: ReadonlyMap<string, number>, variants: Map<string, [number, string]>, df: (t: string) => number): void {
    const plain = (w: string) => !STOP_WORDS.has(w) && !isCjk(w) && !isSpaceless(w);
    const add = (x: string, t: string) => {
      if (!qtf.has(x) && !variants.has(x)) variants.set(x, [1, t]);
    };
    // Words a typo correction (or a completion) stands in for: "cones" is cone mistyped, not co|nes.
    const corrected = new Set([...variants.values()].map(([, of]) => of));
    let splitWords = 0;
    for (const w of raw) {
      const t = stem(w);
      // Nor a number.
      if (w.length < 4 || !plain(w) || !qtf.has(t) || df(t) > 0 || DIGIT.test(w) || corrected.has(t)) continue;
      if (splitWords++ >= RANKING.maxTypoWords) break;
      let ways = 0;
      // Parts of two letters or more: a letter alone is in many a vocabulary ("stop" is not s|top).
      for (let k = 2; k + 2 <= w.length && ways < MAX_SPLITS; k++) {
        const [a, b] = [w.slice(0, k), w.slice(k)];
        if (STOP_WORDS.has(a) || STOP_WORDS.has(b) || df(stem(a)) === 0 || df(stem(b)) === 0) continue;
        ways++;
        add(stem(a), t);
        add(stem(b), t);
      }
    }
  }

  /** Terms (the build's and the delta's) that start with `prefix`, or whose word does: the `limit` most frequent (ties by term). */
  private withPrefix(prefix: string, limit: number, extra: ExtraVocab, df: (t: string) => number): string[] {
    const hits = new Set<string>();
    const { vocab, surface, surfaceStem } = this.build;
    forEachWithPrefix(vocab, prefix, (t) => hits.add(t));
    forEachWithPrefix(surface, prefix, (_, i) => {
      if (this.written(i, extra)) hits.add(vocab[surfaceStem[i] as number] as string);
    });
    if (extra.sortedTerms) forEachWithPrefix(extra.sortedTerms(), prefix, (t) => hits.add(t));
    else for (const x of extra.terms.keys()) if (x.startsWith(prefix)) hits.add(x);
    if (extra.sortedSurfaces) {
      forEachWithPrefix(extra.sortedSurfaces(), prefix, (w) => {
        const e = extra.surfaces.get(w);
        if (e) hits.add(e.stem);
      });
    } else for (const [word, { stem: x }] of extra.surfaces) if (word.startsWith(prefix)) hits.add(x);
    return mostFrequent(hits, limit, df);
  }

  /**
   * Terms (the build's and the delta's) that start with something within `max` edits of `word`,
   * or whose word as written does (`forEachNear` with `prefix`): the `limit` closest, most
   * frequent first (ties by term).
   */
  private withPrefixNear(word: string, max: number, limit: number, extra: ExtraVocab, df: (t: string) => number): string[] {
    const least = new Map<string, number>();
    const take = (t: string, d: number) => {
      const before = least.get(t);
      if (before === undefined || d < before) least.set(t, d);
    };
    const { vocab, surface, surfaceStem } = this.build;
    this.typoWork += forEachNear(vocab, word, max, take, true);
    this.typoWork += forEachNear(surface, word, max, (_, d, at) => this.written(at, extra) && take(vocab[surfaceStem[at] as number] as string, d), true);
    this.typoWork += forEachNear(sortedTermsOf(extra), word, max, take, true);
    this.typoWork += forEachNear(
      sortedSurfacesOf(extra),
      word,
      max,
      (w, d) => {
        const e = extra.surfaces.get(w);
        if (e) take(e.stem, d);
      },
      true,
    );
    return [...least]
      .map(([t, d]): [string, number, number] => [t, d, df(t)])
      .filter(([, , n]) => n > 0)
      .sort((a, b) => a[1] - b[1] || b[2] - a[2] || byTerm(a[0], b[0]))
      .slice(0, limit)
      .map(([t]) => t);
  }

  /**
   * Terms (the build's and the delta's) within `max` edits of `term` (the unknown word's stem), or
   * whose word as written is within `max` edits of `word` as typed: the 5 closest, most frequent
   * first. Typos are made on words, not on stems: "pgrty" is one letter from "party" and two from
   * its stem, parti; "estaitc" one swap from "estatic" and more from estat.
   */
  private near(word: string, term: string, max: number, extra: ExtraVocab, df: (t: string) => number): string[] {
    const least = new Map<string, number>();
    const take = (v: string, d: number) => {
      const before = least.get(v);
      if (before === undefined || d < before) least.set(v, d);
    };
    const { vocab, surface, surfaceStem } = this.build;
    const freshTerms = sortedTermsOf(extra);
    const freshWords = sortedSurfacesOf(extra);
    // The stem, and the word as typed when it is another.
    const asTyped = word === term ? [term] : [term, word];
    const fresh = (v: string, d: number) => {
      if (!this.build.has(v)) take(v, d);
    };
    const freshWord = (w: string, d: number) => {
      const e = extra.surfaces.get(w);
      if (e) take(e.stem, d);
    };
    // The index's vocabulary (it can hold 100,000 terms) is walked as a trie, not scanned; the
    // delta's new terms and words the same way.
    const longest = this.longestTerm();
    for (const q of asTyped) {
      if (q.length - max <= longest) this.typoWork += forEachNear(vocab, q, max, take);
      this.typoWork += forEachNear(freshTerms, q, max, fresh);
    }
    this.typoWork += forEachNear(surface, word, max, (_, d, at) => this.written(at, extra) && take(vocab[surfaceStem[at] as number] as string, d));
    this.typoWork += forEachNear(freshWords, word, max, freshWord);
    // A typo in the first letter counts as two (as Meilisearch counts it): only a word allowed two
    // edits may have one, as its only edit, and only when no candidate shares its first letter
    // (the walks above keep to the first letter, which spares most of the vocabulary).
    if (max >= 2 && ![...least.keys()].some((v) => df(v) > 0)) {
      for (const q of asTyped) {
        this.typoWork += firstLetterTypos(vocab, q, (v) => take(v, 2));
        this.typoWork += firstLetterTypos(freshTerms, q, (v) => take(v, 2));
      }
      this.typoWork += firstLetterTypos(surface, word, (_, at) => this.written(at, extra) && take(vocab[surfaceStem[at] as number] as string, 2));
      this.typoWork += firstLetterTypos(freshWords, word, (w) => freshWord(w, 2));
    }
    return [...least]
      .map(([v, d]): [string, number, number] => [v, d, df(v)])
      .filter(([, , n]) => n > 0)
      .sort((a, b) => a[1] - b[1] || b[2] - a[2] || byTerm(a[0], b[0]))
      .slice(0, 5)
      .map(([v]) => v);
  }

  /** The length of the longest vocabulary term (found once per loaded index). */
  private longestTerm(): number {
    if (this.longest < 0) this.longest = this.build.vocab.reduce((n, t) => Math.max(n, t.length), 0);
    return this.longest;
  }
}

/** The delta's terms in code-unit order (sorted here when it does not keep them so: an empty vocabulary, tests). */
const sortedTermsOf = (extra: ExtraVocab): readonly string[] => extra.sortedTerms?.() ?? [...extra.terms.keys()].sort(byTerm);
/** The delta's words as written, the same way. */
const sortedSurfacesOf = (extra: ExtraVocab): readonly string[] => extra.sortedSurfaces?.() ?? [...extra.surfaces.keys()].sort(byTerm);

/** First letters a first-letter typo may put instead, on each side of the word's own in code-point order. */
const NEAR_FIRST_LETTERS = 32;

/**
 * Each value of sorted `xs` that is `q` with its first letter alone edited: another first letter,
 * a letter put before it, it left out, or it swapped with the second; with its position. Another
 * letter is one of the `NEAR_FIRST_LETTERS` first letters `xs` holds nearest to the word's own on
 * each side, in code-point order (its own script's, mostly: a catalog can hold thousands of first
 * letters, each a look-up), looked up by binary search, not scanned. Answers the look-ups made.
 */
function firstLetterTypos(xs: readonly string[], q: string, fn: (x: string, at: number) => void): number {
  const first = q.charCodeAt(0);
  // A first letter of two code units (beyond the basic plane) is left alone.
  if (q.length < 2 || (first >= 0xd800 && first <= 0xdfff)) return 0;
  let work = 0;
  const found = new Set<number>();
  const exact = (x: string) => {
    work++;
    const at = firstAtLeast(xs, x);
    if (xs[at] === x && !found.has(at)) {
      found.add(at);
      fn(x, at);
    }
  };
  exact(q.slice(1));
  if (q[0] !== q[1]) exact(`${q[1]}${q[0]}${q.slice(2)}`);
  const tryLetter = (c: number) => {
    if (c === first) return;
    const letter = String.fromCharCode(c);
    exact(letter + q.slice(1));
    exact(letter + q);
  };
  const own = firstAtLeast(xs, q[0] as string);
  // After the word's own first letter: each next first letter is past every value starting with the one before.
  for (let i = own, n = 0; i < xs.length && n < NEAR_FIRST_LETTERS; n++) {
    const c = (xs[i] as string).charCodeAt(0);
    tryLetter(c);
    work++;
    i = c === 0xffff ? xs.length : firstAtLeast(xs, String.fromCharCode(c + 1));
  }
  // Before it: each first letter is the one of the value just before the first value starting with the next.
  for (let i = own, n = 0; i > 0 && n < NEAR_FIRST_LETTERS; n++) {
    const c = (xs[i - 1] as string).charCodeAt(0);
    tryLetter(c);
    work++;
    i = firstAtLeast(xs, String.fromCharCode(c));
  }
  return work;
}

/** `mostFrequent`'s counts, and a copy to select from (reused: a short prefix starts thousands of terms). */
let counts = new Float64Array(1024);
let selecting = new Float64Array(1024);

/**
 * The `limit` terms of `terms` that most documents hold (ties by term), none that no document
 * holds. A short prefix starts thousands of terms: their counts are read into one array and only
 * those at least as frequent as the limit-th are paired with their terms and sorted.
 */
function mostFrequent(terms: ReadonlySet<string>, limit: number, df: (t: string) => number): string[] {
  if (counts.length < terms.size) {
    counts = new Float64Array(Math.max(terms.size, 2 * counts.length));
    selecting = new Float64Array(counts.length);
  }
  const all = [...terms];
  let held = 0;
  for (let j = 0; j < all.length; j++) {
    const n = df(all[j] as string);
    // Not held (or not a count): 0, which no held term's count is.
    if (n > 0) {
      counts[j] = n;
      held++;
    } else counts[j] = 0;
  }
  // The limit-th largest count among those held (of a copy: quickselect reorders it), or any held.
  let least = 1;
  if (held > limit) {
    const copy = selecting.subarray(0, all.length);
    copy.set(counts.subarray(0, all.length));
    least = kthLargest(copy, limit);
  }
  const chosen: [string, number][] = [];
  for (let j = 0; j < all.length; j++) {
    const n = counts[j] as number;
    if (n > 0 && n >= least) chosen.push([all[j] as string, n]);
  }
  return chosen
    .sort((a, b) => b[1] - a[1] || byTerm(a[0], b[0]))
    .slice(0, limit)
    .map(([t]) => t);
}

/** Each value of sorted `xs` that starts with `prefix`, with its position. */
function forEachWithPrefix(xs: readonly string[], prefix: string, fn: (x: string, i: number) => void): void {
  for (let i = firstAtLeast(xs, prefix); i < xs.length && (xs[i] as string).startsWith(prefix); i++) fn(xs[i] as string, i);
}

/** The query's own terms (k3-saturated) and their expansions, in term order. */
function weighted(qtf: ReadonlyMap<string, number>, variants: ReadonlyMap<string, [weight: number, word: string]>, words: number, sequence: readonly string[]): Expansion {
  const k3 = RANKING.k3;
  const out = new Expansion(words, sequence);
  const all = [...new Set([...qtf.keys(), ...variants.keys()])].sort(byTerm);
  for (const t of all) {
    const n = qtf.get(t);
    if (n !== undefined) out.set(t, ((k3 + 1) * n) / (k3 + n));
    else {
      const [weight, word] = variants.get(t) as [number, string];
      out.set(t, weight);
      out.standsFor.set(t, word);
    }
  }
  return out;
}
