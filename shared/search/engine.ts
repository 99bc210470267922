import type { ItemWithVector, JsonObject } from '../domain/types.ts';
import { normalize } from './embedding.ts';
import { editDistance, forEachNear, words, stem, STOP_WORDS } from './text.ts';
import { Int8Rows } from './int8-vectors.ts';

/** An item as the search index sees it: the item with its vector (null until embedded). */
export type SearchDoc = ItemWithVector;

export type SearchMode = 'hybrid' | 'keyword' | 'semantic';

export interface Hit {
  doc: SearchDoc;
  score: number;
}

/** Filters as a predicate over documents (built from the request's filters). */
export type DocFilter = (d: SearchDoc) => boolean;
/** The filter of a request without filters: ranking recognises it and reads no document for it. */
export const NO_FILTER: DocFilter = () => true;

/**
 * Ranking constants. Each was chosen on one collection of `../shared/data` and is reported on the
 * other by `npm run bench:search` (the README says which chose which); none is fitted per tenant.
 */
export const RANKING = {
  /** BM25 saturation (chosen on Cranfield). */
  k1: 1.2,
  /**
   * BM25F: each field's term frequency is normalised by that field's own average length (b), then
   * weighted (boost) and summed before saturation (chosen on Cranfield).
   */
  fields: {
    name: { boost: 2.0, b: 0.75 },
    description: { boost: 1.0, b: 0.75 },
    meta: { boost: 0.5, b: 0.5 },
  },
  /**
   * A word repeated in the query weighs more, saturating like a document's term frequency
   * (BM25's k3): (k3 + 1) qtf / (k3 + qtf). Long, verbose queries say what matters by repeating it.
   */
  k3: 8,
  /**
   * Prefix and typo expansions of a query word stand in for it, never add to it: a document scores
   * the best of the word and its expansions (not their sum), an expansion at most this share of what
   * the word itself would add at the same term frequency (its IDF capped at the word's when the
   * word is known). Common sense, checked on both collections (their queries are whole words).
   */
  prefixWeight: 0.6,
  fuzzyWeight: 0.5,
  /** Weight of the keyword score in hybrid fusion (the rest is vector similarity); chosen on CACM. */
  hybridAlpha: 0.6,
  /** Pseudo-relevance feedback in vector space (Rocchio): the query vector moves toward the top documents (chosen on Cranfield). */
  feedbackDocs: 5,
  feedbackWeight: 1.0,
  /** How many vector neighbours hybrid and semantic modes consider. */
  vectorCandidates: 300,
  /** A result found only by vector similarity needs at least this share of the best similarity... */
  vectorOnlyMin: 0.5,
  /** ...and at least this cosine to the query (VECTOR_ONLY_MIN_COSINE; tuned for the local embedding). */
  vectorOnlyMinCosine: Number(process.env.VECTOR_ONLY_MIN_COSINE ?? 0.3),
  personalWeight: 0.15,
  /**
   * Unknown words of one query looked up as typos (each brings at most 5 close terms); later ones
   * count only as themselves. No Cranfield or CACM query has more than 3 and 6.
   */
  maxTypoWords: 8,
  /** Distinct query terms scored (the first ones; a 1,000-character query has at most ~150 words). */
  maxQueryTerms: 64,
};

/** Collection statistics BM25F scores with: a build's own, or a build's and its delta's together. */
export interface CollectionStats {
  /** Documents (active or not). */
  n: number;
  /** Average length of each field over them. */
  avgLen: readonly number[];
  df(term: string): number;
}

/** BM25's IDF (never negative). */
export const idfOf = (n: number, df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));

const FIELD_NAMES = ['name', 'description', 'meta'] as const;
type Field = (typeof FIELD_NAMES)[number];

function metaText(m: JsonObject): string {
  return Object.values(m).filter((v) => typeof v === 'string' || typeof v === 'number').join(' ');
}

interface Analyzed {
  tf: Map<string, [number, number, number]>;
  len: [number, number, number];
  /**
   * Words that do not start with their own stem's letters all the way ("running" → "run",
   * "hiking" → "hike"), each with its stem: a half-typed last word ("runni", "hikin") is a prefix
   * of the word, not of the stem.
   */
  surface: Map<string, string>;
}

function analyze(d: SearchDoc): Analyzed {
  const tf = new Map<string, [number, number, number]>();
  const surface = new Map<string, string>();
  const texts = [d.name, d.description ?? '', metaText(d.metadata)];
  const len: [number, number, number] = [0, 0, 0];
  texts.forEach((text, f) => {
    for (const w of words(text)) {
      if (STOP_WORDS.has(w)) continue;
      const t = stem(w);
      if (t !== w) surface.set(w, t);
      let e = tf.get(t);
      if (!e) tf.set(t, (e = [0, 0, 0]));
      e[f] = (e[f] as number) + 1;
      len[f] = (len[f] as number) + 1;
    }
  });
  return { tf, len, surface };
}

/** The vocabulary a search expands its words against besides the index's: the delta's. */
export interface ExtraVocab {
  /** Stemmed terms. */
  terms: ReadonlySet<string>;
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
}
const NO_EXTRA: ExtraVocab = { terms: new Set(), surfaces: new Map() };

/**
 * Expanded query terms with their weights (`expand`): a query word's own term weighs by how often
 * the query repeats it; a prefix or typo expansion also names the word's term it stands in for.
 */
export class Expansion extends Map<string, number> {
  /** Each expansion's query-word term: a document scores the best of a word and its expansions. */
  readonly standsFor = new Map<string, string>();
}

/** A posting list: documents (index positions or delta slots) and their 3 field term frequencies each. */
export interface Postings {
  docs: ArrayLike<number>;
  tfs: ArrayLike<number>;
  start: number;
  end: number;
}

/**
 * Adds `weightedIdf` × BM25F of one term to `target` for each document of a posting list (key =
 * `base` + its position), or keeps the larger of the two when `max` (an expansion competing with
 * its word). The one formula the build and the delta are scored with, so that an item scores the
 * same to the last bit in either. `live` (the delta's) skips replaced documents.
 */
export function scorePostings(
  p: Postings, lens: readonly ArrayLike<number>[], base: number, weightedIdf: number, stats: CollectionStats,
  target: Float64Array, touched: IntList, max: boolean, live?: ArrayLike<number>,
): void {
  const { k1, fields } = RANKING;
  const fb = FIELD_NAMES.map((f) => fields[f as Field]);
  const [B0, B1, B2] = fb.map((f) => f.boost) as [number, number, number];
  const [C0, C1, C2] = fb.map((f) => 1 - f.b) as [number, number, number];
  const [N0, N1, N2] = fb.map((f, k) => f.b / (stats.avgLen[k] as number)) as [number, number, number];
  const [l0, l1, l2] = lens as [ArrayLike<number>, ArrayLike<number>, ArrayLike<number>];
  const { docs, tfs } = p;
  for (let j = p.start; j < p.end; j++) {
    const i = docs[j] as number;
    if (live && !live[i]) continue;
    const t0 = tfs[j * 3] as number;
    const t1 = tfs[j * 3 + 1] as number;
    const t2 = tfs[j * 3 + 2] as number;
    let tf = 0;
    if (t0) tf += (B0 * t0) / (C0 + N0 * (l0[i] as number));
    if (t1) tf += (B1 * t1) / (C1 + N1 * (l1[i] as number));
    if (t2) tf += (B2 * t2) / (C2 + N2 * (l2[i] as number));
    const c = (weightedIdf * tf) / (k1 + tf);
    const key = base + i;
    const before = target[key] as number;
    if (before === 0) touched.push(key);
    target[key] = max ? Math.max(before, c) : before + c;
  }
}

/** Inverted file over unit vectors: k-means centroids and one list of doc indexes per centroid. */
interface Ivf {
  centroids: Float32Array;
  lists: Uint32Array[];
}

/** Everything an index is made of; what the artifact stores. */
export interface IndexParts {
  docs: SearchDoc[];
  dims: number;
  builtAt: number;
  vocab: string[];
  /** Words whose stem differs from them, sorted, and the vocab index of each one's stem. */
  surface: string[];
  surfaceStem: Uint32Array;
  /** postings of vocab[k] are docs[offsets[k]..offsets[k+1]), tfs 3 per posting. */
  offsets: Uint32Array;
  postingDocs: Uint32Array;
  postingTfs: Uint16Array;
  lens: Float32Array[];
  /** Item vectors quantised to int8, one scale per vector: a quarter of the memory of float32. */
  vectors: Int8Array;
  scales: Float32Array;
  hasVector: Uint8Array;
  ivf: Ivf | null;
}

/** Builds the parts of an index over `docs` (the index builder's work). */
export function buildIndexParts(docs: SearchDoc[], dims: number, builtAt: number): IndexParts {
  const n = docs.length;
  const lens = FIELD_NAMES.map(() => new Float32Array(n));
  const tmp = new Map<string, number[]>();
  const surfaces = new Map<string, string>();
  docs.forEach((d, i) => {
    const a = analyze(d);
    for (const [w, t] of a.surface) surfaces.set(w, t);
    a.len.forEach((l, f) => ((lens[f] as Float32Array)[i] = l));
    for (const [t, tf] of a.tf) {
      let p = tmp.get(t);
      if (!p) tmp.set(t, (p = []));
      p.push(i, Math.min(tf[0], 65535), Math.min(tf[1], 65535), Math.min(tf[2], 65535));
    }
  });
  const vocab = [...tmp.keys()].sort();
  const vocabIndex = new Map(vocab.map((t, k) => [t, k]));
  const surface = [...surfaces.keys()].sort();
  const surfaceStem = Uint32Array.from(surface, (w) => vocabIndex.get(surfaces.get(w) as string) as number);
  const offsets = new Uint32Array(vocab.length + 1);
  let total = 0;
  vocab.forEach((t, k) => {
    offsets[k] = total;
    total += (tmp.get(t) as number[]).length / 4;
  });
  offsets[vocab.length] = total;
  const postingDocs = new Uint32Array(total);
  const postingTfs = new Uint16Array(total * 3);
  vocab.forEach((t, k) => {
    const p = tmp.get(t) as number[];
    const o = offsets[k] as number;
    for (let j = 0; j < p.length / 4; j++) {
      postingDocs[o + j] = p[j * 4] as number;
      postingTfs[(o + j) * 3] = p[j * 4 + 1] as number;
      postingTfs[(o + j) * 3 + 1] = p[j * 4 + 2] as number;
      postingTfs[(o + j) * 3 + 2] = p[j * 4 + 3] as number;
    }
  });
  const vectors = new Int8Array(n * dims);
  const scales = new Float32Array(n);
  const hasVector = new Uint8Array(n);
  docs.forEach((d, i) => {
    if (!d.vector || d.vector.length !== dims) return;
    scales[i] = quantiseInto(d.vector, 0, dims, vectors, i * dims);
    hasVector[i] = scales[i] ? 1 : 0;
  });
  const stored = docs.map((d) => ({ ...d, vector: null }));
  return { docs: stored, dims, builtAt, vocab, surface, surfaceStem, offsets, postingDocs, postingTfs, lens, vectors, scales, hasVector, ivf: buildIvf(vectors, scales, hasVector, dims) };
}

function buildIvf(q8: Int8Array, scales: Float32Array, hasVector: Uint8Array, dims: number): Ivf | null {
  const at = (i: number, d: number) => (q8[i * dims + d] as number) * (scales[i] as number);
  const withVec: number[] = [];
  for (let i = 0; i < hasVector.length; i++) if (hasVector[i]) withVec.push(i);
  // Up to IVF_MIN vectors every search compares the query with each (exact, and ≈ 1 ms).
  if (withVec.length < IVF_MIN) return null;
  const nlist = Math.max(8, Math.round(Math.sqrt(withVec.length) / 2));
  // Deterministic sample for training the centroids.
  let seed = 12345;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const sample = withVec.length > nlist * 40 ? Array.from({ length: nlist * 40 }, () => withVec[Math.floor(rand() * withVec.length)] as number) : withVec;
  const centroids = new Float32Array(nlist * dims);
  for (let c = 0; c < nlist; c++) {
    const s = sample[Math.floor(rand() * sample.length)] as number;
    for (let d = 0; d < dims; d++) centroids[c * dims + d] = at(s, d);
  }
  // Assignments score every centroid against every item with the SIMD kernel (a copy of the rows).
  const rows = new Int8Rows(q8, dims);
  /** For each item, the centroid of the highest dot product (ties: the lower centroid). */
  const assign = (items: number[]): Int32Array => {
    const best = new Int32Array(items.length);
    const bestScore = new Float64Array(items.length).fill(-Infinity);
    for (let c = 0; c < nlist; c++) {
      const dot = rows.query(centroids.subarray(c * dims, (c + 1) * dims));
      for (let j = 0; j < items.length; j++) {
        const score = dot(items[j] as number);
        if (score > (bestScore[j] as number)) {
          bestScore[j] = score;
          best[j] = c;
        }
      }
    }
    return best;
  };
  for (let iter = 0; iter < 6; iter++) {
    const sums = new Float32Array(nlist * dims);
    const of = assign(sample);
    sample.forEach((i, j) => {
      const c = of[j] as number;
      for (let d = 0; d < dims; d++) sums[c * dims + d] = (sums[c * dims + d] as number) + at(i, d);
    });
    for (let c = 0; c < nlist; c++) {
      const v = normalize(sums.subarray(c * dims, (c + 1) * dims));
      if (v.some((x) => x !== 0)) centroids.set(v, c * dims);
    }
  }
  const lists: number[][] = Array.from({ length: nlist }, () => []);
  const of = assign(withVec);
  withVec.forEach((i, j) => (lists[of[j] as number] as number[]).push(i));
  return { centroids, lists: lists.map((l) => Uint32Array.from(l)) };
}

/** Below this many vectors a build has no IVF: nearest neighbours are exact. */
const IVF_MIN = 20_000;
/**
 * Whether nearest neighbours among this many candidates are found with a coarse pass on a quarter
 * of the dimensions first (over 10,000: an IVF's probed lists, or a large delta); exact below.
 */
export const coarsePass = (candidates: number, k: number): boolean => candidates > 10_000 && candidates > k * 8;

/** Each field's average length over n documents from their total lengths (1 when there are none). */
export const averageLengths = (sums: readonly number[], n: number): number[] => sums.map((sum) => (n ? sum / n : 0) || 1);

/** Terms in code-unit order: a tie-break that does not depend on the order terms were met in. */
export const byTerm = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The first position in sorted `xs` whose value is not below `x`. */
export function firstAtLeast(xs: readonly string[], x: string): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as string) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * An immutable, in-memory search index over a snapshot of a tenant's catalog: BM25F over
 * name/description/metadata with a sorted vocabulary for prefix and typo expansion, and an IVF
 * over item vectors for semantic and hybrid ranking. Built by the index builder, serialised to
 * the blob store, loaded once per container; fresh changes are scored beside it (`delta`).
 */
export class SearchIndex {
  readonly docs: SearchDoc[];
  readonly dims: number;
  readonly builtAt: number;
  readonly parts: IndexParts;
  private readonly termIndex = new Map<string, number>();
  private readonly vocab: string[];
  readonly lens: Float32Array[];
  /** The build's own collection statistics. */
  readonly stats: CollectionStats;
  /** Total length of each field over the build's documents (whole numbers). */
  readonly sumLen: number[];
  /** The item vectors (int8) in the SIMD kernel's memory. */
  private readonly vectors: Int8Rows;
  private readonly scales: Float32Array;
  private readonly hasVector: Uint8Array;
  private readonly ivf: Ivf | null;
  /** The IVF centroids, quantised like the item vectors, to rank lists with the same kernel. */
  private readonly centroids: { rows: Int8Rows; scales: Float32Array } | null;
  readonly byId = new Map<number, number>();
  /** Per indexed document, its id and whether it is active: ranking checks them for every keyword match without touching the document. */
  readonly ids: Float64Array;
  readonly active: Uint8Array;

  constructor(built: IndexParts) {
    this.vectors = new Int8Rows(built.vectors, built.dims);
    // The parts (serialised by the index builder) hold the kernel's copy, not a second one.
    const parts = { ...built, vectors: this.vectors.rows };
    this.parts = parts;
    this.docs = parts.docs;
    this.dims = parts.dims;
    this.builtAt = parts.builtAt;
    this.vocab = parts.vocab;
    parts.vocab.forEach((t, k) => this.termIndex.set(t, k));
    parts.docs.forEach((d, i) => this.byId.set(d.id, i));
    this.ids = Float64Array.from(parts.docs, (d) => d.id);
    this.active = Uint8Array.from(parts.docs, (d) => (d.active ? 1 : 0));
    this.lens = parts.lens;
    const n = parts.docs.length;
    this.sumLen = this.lens.map((l) => l.reduce((a, b) => a + b, 0));
    this.stats = { n, avgLen: averageLengths(this.sumLen, n), df: (t) => this.df(t) };
    this.scales = parts.scales;
    this.hasVector = parts.hasVector;
    this.ivf = parts.ivf;
    this.centroids = parts.ivf ? quantisedRows(parts.ivf.centroids, parts.dims) : null;
  }

  static build(docs: SearchDoc[], dims: number, builtAt = Math.floor(Date.now() / 1000)): SearchIndex {
    return new SearchIndex(buildIndexParts(docs, dims, builtAt));
  }

  /** Posting range of a term, or undefined. */
  private posting(term: string): { start: number; end: number } | undefined {
    const k = this.termIndex.get(term);
    if (k === undefined) return undefined;
    return { start: this.parts.offsets[k] as number, end: this.parts.offsets[k + 1] as number };
  }

  has(term: string): boolean {
    return this.termIndex.has(term);
  }

  get size(): number {
    return this.docs.length;
  }

  df(term: string): number {
    const p = this.posting(term);
    return p ? p.end - p.start : 0;
  }

  /** BM25's IDF of a term, with the build's statistics or the given ones. */
  idf(term: string, stats: CollectionStats = this.stats): number {
    return idfOf(stats.n, stats.df(term));
  }

  /** A term's posting list in the build, or undefined. */
  postingsOf(term: string): Postings | undefined {
    const p = this.posting(term);
    return p ? { docs: this.parts.postingDocs, tfs: this.parts.postingTfs, start: p.start, end: p.end } : undefined;
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
  expand(query: string, extra: ExtraVocab = NO_EXTRA): Map<string, number> {
    const df = extra.liveDf ? (t: string) => (extra.liveDf as (t: string) => number)(t) : (t: string) => this.df(t);
    const raw = words(query);
    const open = /[\p{L}\p{N}\p{M}]$/u.test(query);
    const qtf = new Map<string, number>();
    const variants = new Map<string, [weight: number, word: string]>();
    let typos = 0;
    raw.forEach((w, i) => {
      const isLast = i === raw.length - 1;
      const stop = STOP_WORDS.has(w);
      const t = stem(w);
      if (!stop && (qtf.has(t) || qtf.size < RANKING.maxQueryTerms)) qtf.set(t, (qtf.get(t) ?? 0) + 1);
      if (isLast && open && w.length >= 2) {
        // The last word may be half typed: every term it starts, or whose word it starts
        // ("runni" → running → run), most frequent first.
        for (const x of this.withPrefix(w, 30, extra, df)) if (x !== t && !variants.has(x)) variants.set(x, [RANKING.prefixWeight, t]);
      }
      if (!stop && w.length >= 4 && qtf.has(t) && df(t) === 0 && typos < RANKING.maxTypoWords) {
        // Unknown term: likely a typo; take close vocabulary terms instead.
        typos++;
        const max = w.length >= 8 ? 2 : 1;
        for (const x of this.near(t, max, extra, df)) if (!variants.has(x)) variants.set(x, [RANKING.fuzzyWeight, t]);
      }
    });
    const k3 = RANKING.k3;
    const out = new Expansion();
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

  /** Terms (the build's and the delta's) that start with `prefix`, or whose word does: the `limit` most frequent (ties by term). */
  private withPrefix(prefix: string, limit: number, extra: ExtraVocab, df: (t: string) => number): string[] {
    const hits = new Set<string>();
    for (let i = firstAtLeast(this.vocab, prefix); i < this.vocab.length && (this.vocab[i] as string).startsWith(prefix); i++) hits.add(this.vocab[i] as string);
    const { surface, surfaceStem } = this.parts;
    for (let i = firstAtLeast(surface, prefix); i < surface.length && (surface[i] as string).startsWith(prefix); i++) hits.add(this.vocab[surfaceStem[i] as number] as string);
    if (extra.sortedTerms) {
      const ts = extra.sortedTerms();
      for (let i = firstAtLeast(ts, prefix); i < ts.length && (ts[i] as string).startsWith(prefix); i++) hits.add(ts[i] as string);
    } else for (const x of extra.terms) if (x.startsWith(prefix)) hits.add(x);
    if (extra.sortedSurfaces) {
      const ws = extra.sortedSurfaces();
      for (let i = firstAtLeast(ws, prefix); i < ws.length && (ws[i] as string).startsWith(prefix); i++) {
        const e = extra.surfaces.get(ws[i] as string);
        if (e) hits.add(e.stem);
      }
    } else for (const [word, { stem: x }] of extra.surfaces) if (word.startsWith(prefix)) hits.add(x);
    const counted = [...hits].map((t): [string, number] => [t, df(t)]).filter(([, n]) => n > 0);
    return counted.sort((a, b) => b[1] - a[1] || byTerm(a[0], b[0])).slice(0, limit).map(([t]) => t);
  }

  /** Terms (the build's and the delta's) within `max` edits of `term`: the 5 closest, most frequent first. */
  private near(term: string, max: number, extra: ExtraVocab, df: (t: string) => number): string[] {
    const hits: [string, number, number][] = [];
    const take = (v: string, d: number) => {
      const n = df(v);
      if (n > 0) hits.push([v, d, n]);
    };
    // The index's vocabulary (it can hold 100,000 terms) is walked as a trie, not scanned.
    if (term.length - max <= this.longestTerm()) this.typoWork += forEachNear(this.vocab, term, max, take);
    // The delta's new terms: walked the same way when sorted, else one by one.
    const fresh = (v: string, d: number) => {
      if (!this.termIndex.has(v)) take(v, d);
    };
    if (extra.sortedTerms) this.typoWork += forEachNear(extra.sortedTerms(), term, max, fresh);
    else {
      for (const v of extra.terms) {
        if (Math.abs(v.length - term.length) > max || v[0] !== term[0]) continue;
        const d = editDistance(term, v, max);
        if (d <= max) fresh(v, d);
      }
    }
    return hits.sort((a, b) => a[1] - b[1] || b[2] - a[2] || byTerm(a[0], b[0])).slice(0, 5).map(([v]) => v);
  }

  private longest = -1;
  /** The length of the longest vocabulary term (found once per loaded index). */
  private longestTerm(): number {
    if (this.longest < 0) this.longest = this.vocab.reduce((n, t) => Math.max(n, t.length), 0);
    return this.longest;
  }

  /** Edit-distance rows computed by typo lookups in this index so far (for tests and benchmarks). */
  typoWork = 0;

  /**
   * Whether the index holds this very version of `d` (the same update and embedding times,
   * activity, content and vector presence): read again as a change, it changes nothing.
   */
  holds(d: SearchDoc): boolean {
    const i = this.byId.get(d.id);
    if (i === undefined) return false;
    const x = this.docs[i] as SearchDoc;
    return (
      x.updated_at === d.updated_at && x.embedding_updated_at === d.embedding_updated_at && x.active === d.active &&
      (this.hasVector[i] === 1) === (d.vector !== null && d.vector.length === this.dims) &&
      x.name === d.name && x.description === d.description && JSON.stringify(x.metadata) === JSON.stringify(d.metadata)
    );
  }

  /** The (dequantised) vector of indexed document i. */
  vectorOf(i: number): Float32Array | null {
    if (!this.hasVector[i]) return null;
    const v = new Float32Array(this.dims);
    const o = i * this.dims;
    const scale = this.scales[i] as number;
    const rows = this.vectors.rows;
    for (let k = 0; k < this.dims; k++) v[k] = (rows[o + k] as number) * scale;
    return v;
  }

  /**
   * into += Σ weights[j] × the vector of indexed document rows[j]; those without a vector add
   * nothing. How many added theirs (0 when `into` is not of this index's size). Uses both lists
   * as its scratch: they are left holding the rows with a vector and their scaled weights.
   */
  addVectorsTo(rows: number[], weights: number[], into: Float32Array): number {
    if (into.length !== this.dims) return 0;
    let n = 0;
    for (let j = 0; j < rows.length; j++) {
      const i = rows[j] as number;
      if (!this.hasVector[i]) continue;
      rows[n] = i;
      weights[n] = (weights[j] as number) * (this.scales[i] as number);
      n++;
    }
    rows.length = n;
    weights.length = n;
    if (n) this.vectors.addRows(rows, weights, into);
    return n;
  }

  /** q · the vector of indexed document i, for any number of documents (0 without a vector). */
  similarityTo(q: Float32Array): (i: number) => number {
    const dot = this.vectors.query(q);
    const { hasVector, scales } = this;
    return (i) => (hasVector[i] ? dot(i) * (scales[i] as number) : 0);
  }

  /**
   * Approximate nearest neighbours by cosine: probe the IVF lists closest to the query (every
   * document when small), the closest ~5 % of them but no more than about max(4k, n / 12)
   * candidates: lists are uneven, and one dense region can hold a tenth of a catalog. When the
   * candidates are many (over 8k), score them on their first quarter of dimensions (a random
   * projection of its own, for the hashing embedding) and rescore the best 4k exactly.
   */
  nearest(q: Float32Array, k: number, accept: (i: number) => boolean): TopK {
    // The probed lists, or every document when there is no IVF.
    let probed: Uint32Array[] | undefined;
    let candidates = this.docs.length;
    if (this.ivf && this.centroids) {
      const { lists } = this.ivf;
      const nlist = lists.length;
      const sims = new Float64Array(nlist);
      const toCentroid = this.centroids.rows.query(q);
      for (let c = 0; c < nlist; c++) sims[c] = toCentroid(c) * (this.centroids.scales[c] as number);
      const order = Array.from({ length: nlist }, (_, c) => c).sort((a, b) => (sims[b] as number) - (sims[a] as number));
      const probes = Math.max(4, Math.ceil(nlist / 20));
      const budget = Math.max(k * 4, this.docs.length / 12);
      probed = [];
      candidates = 0;
      for (const c of order) {
        if (probed.length === probes || candidates >= budget) break;
        const list = lists[c] as Uint32Array;
        probed.push(list);
        candidates += list.length;
      }
    }
    // A coarse pass pays off only when it leaves out most candidates: rescoring keeps its best 4k.
    const coarseDims = coarsePass(candidates, k) ? Math.max(32, this.dims >> 2) : this.dims;
    const coarse = new TopK(coarseDims === this.dims ? k : k * 4);
    const { scales, hasVector } = this;
    const dot = this.vectors.query(q);
    const visit = (i: number) => {
      if (!hasVector[i] || !accept(i)) return;
      coarse.push(i, dot(i, coarseDims) * (scales[i] as number));
    };
    if (probed) {
      for (const list of probed) for (let j = 0; j < list.length; j++) visit(list[j] as number);
    } else {
      for (let i = 0; i < this.docs.length; i++) visit(i);
    }
    if (coarseDims === this.dims) return coarse;
    const top = new TopK(k);
    coarse.forEach((i) => top.push(i, dot(i) * (scales[i] as number)));
    return top;
  }
}

/**
 * Adds Σ weights[j] × the vector of docs[j] to `into`: a fresh document's own vector, an indexed
 * one read in place (no dequantised copy). False when none has a vector of that size.
 */
export function addDocVectors(index: SearchIndex, docs: readonly (SearchDoc | undefined)[], docWeights: readonly number[], into: Float32Array): boolean {
  let any = false;
  const rows: number[] = [];
  const weights: number[] = [];
  for (let j = 0; j < docs.length; j++) {
    const d = docs[j];
    const w = docWeights[j] as number;
    if (!d) continue;
    if (d.vector) {
      if (d.vector.length !== into.length) continue;
      for (let k = 0; k < into.length; k++) into[k] = (into[k] as number) + w * (d.vector[k] as number);
      any = true;
      continue;
    }
    const i = index.byId.get(d.id);
    if (i === undefined || index.docs[i] !== d) continue;
    rows.push(i);
    weights.push(w);
  }
  return index.addVectorsTo(rows, weights, into) > 0 || any;
}

/**
 * Writes values[from..from+dims) as int8 to out[at..), its largest magnitude as ±127, and returns
 * the scale back to floats (0, and nothing written, for a zero vector).
 */
export function quantiseInto(values: ArrayLike<number>, from: number, dims: number, out: Int8Array, at: number): number {
  let max = 0;
  for (let k = 0; k < dims; k++) max = Math.max(max, Math.abs(values[from + k] as number));
  if (max === 0) return 0;
  const scale = max / 127;
  for (let k = 0; k < dims; k++) out[at + k] = Math.round((values[from + k] as number) / scale);
  return scale;
}

/** Float rows as int8 rows with one scale each, for the kernel. */
function quantisedRows(values: Float32Array, dims: number): { rows: Int8Rows; scales: Float32Array } {
  const q8 = new Int8Array(values.length);
  const scales = Float32Array.from({ length: dims ? values.length / dims : 0 }, (_, r) => quantiseInto(values, r * dims, dims, q8, r * dims));
  return { rows: new Int8Rows(q8, dims), scales };
}

/**
 * A growable list of integers in one typed buffer, for scratch lists that a broad query fills
 * with tens of thousands of positions: reused (cleared) instead of growing a fresh array each time.
 */
export class IntList {
  private buf = new Int32Array(1024);
  length = 0;

  clear(): void {
    this.length = 0;
  }

  push(v: number): void {
    if (this.length === this.buf.length) {
      const grown = new Int32Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf[this.length++] = v;
  }

  /** The values, as a view (valid until the next push or clear). */
  view(): Int32Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Keeps the k best (key, score) pairs seen: a binary min-heap. */
export class TopK {
  // A min-heap of the best so far in typed arrays: pushing allocates nothing, and a sift moves
  // one hole instead of swapping pairs (a destructuring swap allocated on every step).
  private readonly keys: Float64Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(private readonly k: number) {
    const capacity = Math.max(0, k);
    this.keys = new Float64Array(capacity);
    this.scores = new Float64Array(capacity);
  }

  push(key: number, score: number): void {
    const { keys, scores } = this;
    if (this.size < this.k) {
      // Sift up from the new leaf.
      let i = this.size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if ((scores[p] as number) <= score) break;
        keys[i] = keys[p] as number;
        scores[i] = scores[p] as number;
        i = p;
      }
      keys[i] = key;
      scores[i] = score;
    } else if (this.k > 0 && score > (scores[0] as number)) {
      // Replace the root and sift down.
      const n = this.size;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const m = r < n && (scores[r] as number) < (scores[l] as number) ? r : l;
        if ((scores[m] as number) >= score) break;
        keys[i] = keys[m] as number;
        scores[i] = scores[m] as number;
        i = m;
      }
      keys[i] = key;
      scores[i] = score;
    }
  }

  /** Each kept (key, score), in no particular order. */
  forEach(fn: (key: number, score: number) => void): void {
    for (let i = 0; i < this.size; i++) fn(this.keys[i] as number, this.scores[i] as number);
  }
}

export { analyze, type Analyzed };
