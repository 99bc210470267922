import { cosine, normalize } from './embedding.ts';
import { Expansion, idfOf, IntList, NO_FILTER, RANKING, scorePostings, type CollectionStats, type DocFilter, type Hit, type SearchDoc, type SearchIndex, type SearchMode } from './engine.ts';
import { PreparedDelta, type Delta } from './delta.ts';

export { PreparedDelta, type Delta };

export interface RankRequest {
  query: string;
  mode: SearchMode;
  filter: DocFilter;
  queryVector: Float32Array | null;
  profile: Float32Array | null;
  /** The Platform's item search also finds inactive items; Core search never does. */
  includeInactive?: boolean;
}

/** Which page: at most `limit` hits strictly after `after` in rank order. */
export interface PageRequest {
  limit: number;
  after?: { score: number; id: number } | undefined;
  /**
   * Sees every match with its score (facets, sort by a field: shared/search/service.ts). With
   * it, no match is skipped by the shortcuts that only count matches that cannot enter the page.
   */
  visit?: ((doc: SearchDoc, score: number) => void) | undefined;
}

export interface Ranked {
  /** The page, plus one more hit when there is a next page. */
  hits: Hit[];
  /** Every match of the query and filters. */
  total: number;
}

/** The one order of results: score descending, then id ascending. Cursors follow it. */
export const byRank = (a: Hit, b: Hit): number => b.score - a.score || a.doc.id - b.doc.id;

/** Keyword matches beyond this many (by keyword score) are not given a vector score in hybrid mode. */
const HYBRID_VECTOR_LIMIT = 500;

// Keyword accumulator and scratch lists reused across requests (ranking is synchronous, so
// never shared at once).
let acc = new Float64Array(0);
let best = new Float64Array(0);
const touchedList = new IntList();
const bestTouched = new IntList();
const kwList = new IntList();

/** Collects the best `limit + 1` hits after the cursor, in rank order. */
class PageCollector {
  readonly hits: Hit[] = [];
  total = 0;
  constructor(private readonly page: PageRequest) {}
  add(doc: SearchDoc, score: number): void {
    this.total += 1;
    this.page.visit?.(doc, score);
    const a = this.page.after;
    if (a && !(score < a.score || (score === a.score && doc.id > a.id))) return;
    const keep = this.page.limit + 1;
    // Most candidates of a broad query cannot enter a full page: decide before allocating.
    if (this.hits.length === keep) {
      const last = this.hits[keep - 1] as Hit;
      if (score < last.score || (score === last.score && doc.id > last.doc.id)) return;
    }
    const h = { doc, score };
    let lo = 0;
    let hi = this.hits.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byRank(this.hits[mid] as Hit, h) <= 0) lo = mid + 1;
      else hi = mid;
    }
    this.hits.splice(lo, 0, h);
    if (this.hits.length > keep) this.hits.pop();
  }
  /** True when no score up to `bound` can enter the page any more (it only counts toward the total). */
  full(bound: number): boolean {
    if (this.page.visit) return false;
    const keep = this.page.limit + 1;
    return this.hits.length === keep && bound < (this.hits[keep - 1] as Hit).score;
  }
}

/** The k-th largest value (1-based) of `xs` (which it reorders): quickselect. */
export function kthLargest(xs: Float64Array | Float32Array, k: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = xs[(lo + hi) >> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((xs[i] as number) > pivot) i++;
      while ((xs[j] as number) < pivot) j--;
      if (i <= j) {
        const t = xs[i] as number;
        xs[i] = xs[j] as number;
        xs[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return xs[target] as number;
  }
  return xs[target] as number;
}

/**
 * Adds the BM25F keyword scores of the build's documents and the delta's for the expanded query
 * terms into `acc` (keys: build positions, then N + delta slot), recording each key touched.
 * A query word with prefix or typo expansions adds the best of the word's own score and its
 * expansions' (each at most its weight times the word's IDF), never their sum; other terms add up.
 */
function keywordScores(index: SearchIndex, delta: PreparedDelta, expanded: Map<string, number>, stats: CollectionStats, touched: IntList): void {
  const N = index.docs.length;
  const standsFor = expanded instanceof Expansion ? expanded.standsFor : new Map<string, string>();
  // Units in the order of their first term: a word alone, or a word with its expansions.
  const units = new Map<string, string[]>();
  for (const t of expanded.keys()) {
    const word = standsFor.get(t) ?? t;
    const u = units.get(word);
    if (u) u.push(t);
    else units.set(word, [t]);
  }
  const score = (t: string, widf: number, target: Float64Array, list: IntList, max: boolean) => {
    const p = index.postingsOf(t);
    if (p) scorePostings(p, index.lens, 0, widf, stats, target, list, max);
    const q = delta.postingsOf(t);
    if (q) scorePostings(q, delta.lens, N, widf, stats, target, list, max, delta.live);
  };
  for (const [word, ts] of units) {
    if (ts.length === 1 && !standsFor.has(ts[0] as string)) {
      const t = ts[0] as string;
      score(t, (expanded.get(t) as number) * idfIn(stats, t), acc, touched, false);
      continue;
    }
    // An expansion's IDF is capped at its word's when the word is known.
    const cap = stats.df(word) > 0 ? idfIn(stats, word) : Infinity;
    bestTouched.clear();
    for (const t of ts) score(t, (expanded.get(t) as number) * (t === word ? idfIn(stats, t) : Math.min(idfIn(stats, t), cap)), best, bestTouched, true);
    for (const key of bestTouched.view()) {
      if (acc[key] === 0) touched.push(key);
      acc[key] = (acc[key] as number) + (best[key] as number);
      best[key] = 0;
    }
  }
}

const idfIn = (stats: CollectionStats, t: string): number => idfOf(stats.n, stats.df(t));

/**
 * Ranks the index plus the delta for one request: BM25F keyword scores, vector similarity,
 * their fusion (hybrid: a convex combination of max-normalised scores), pseudo-relevance
 * feedback in vector space (the query vector moves toward its best few documents and the vector
 * part is scored again), an optional taste boost from the user's profile, with filters and
 * activity applied to every candidate. Documents are keys: index position i, or N + s for the
 * delta's slot s. Every score uses the build's and the delta's statistics together
 * (`PreparedDelta.stats`), and the delta's vectors as a build quantises them: a document ranks
 * the same whether it is in the delta or in the next build. Returns one page in `byRank` order
 * and the number of matches.
 */
export function rank(index: SearchIndex, delta: PreparedDelta, r: RankRequest, page: PageRequest): Ranked {
  delta.bind(index);
  const N = index.docs.length;
  const S = delta.slotCount;
  const stats = delta.stats();
  const docOf = (key: number): SearchDoc => (key < N ? index.docs[key] : delta.docAt(key - N)) as SearchDoc;
  const eligible = (d: SearchDoc) => (d.active || r.includeInactive === true) && r.filter(d);
  // Broad queries match tens of thousands of indexed documents: without filters, accepting one
  // reads two typed arrays instead of the document object.
  const unfiltered = r.filter === NO_FILTER;
  const anyMasked = delta.masked.size > 0;
  const acceptIndexed = (i: number) => {
    if (anyMasked && delta.masked.has(index.ids[i] as number)) return false;
    return unfiltered ? r.includeInactive === true || index.active[i] === 1 : eligible(index.docs[i] as SearchDoc);
  };
  const acceptSlot = (s: number) => delta.live[s] === 1 && eligible(delta.docAt(s));
  const accept = (key: number) => (key < N ? acceptIndexed(key) : acceptSlot(key - N));
  const vectorOfKey = (key: number): Float32Array | null => (key < N ? index.vectorOf(key) : delta.vectorOf(key - N));
  const out = new PageCollector(page);

  if (r.query.trim() === '') {
    // Browsing: by the user's taste when known, else newest first (ids grow with creation).
    const indexed = r.profile ? index.similarityTo(r.profile) : undefined;
    const fresh = r.profile ? delta.similarityTo(r.profile) : undefined;
    const taste = (key: number) => (key < N ? (indexed as (i: number) => number)(key) : (fresh as (s: number) => number)(key - N));
    for (let key = 0; key < N + S; key++) {
      if (!accept(key)) continue;
      const d = docOf(key);
      out.add(d, r.profile ? Math.max(0, taste(key)) + 1e-12 * d.id : d.id);
    }
    return { hits: out.hits, total: out.total };
  }

  // Keyword scores into the pooled accumulator.
  if (acc.length < N + S) {
    acc = new Float64Array(Math.max(N + S, Math.ceil(acc.length * 1.5)));
    best = new Float64Array(acc.length);
  }
  touchedList.clear();
  const touched = touchedList;
  if (r.mode !== 'semantic') keywordScores(index, delta, index.expand(r.query, delta), stats, touched);
  kwList.clear();
  let maxKw = 1e-9;
  for (const key of touched.view()) {
    if (!accept(key)) continue;
    kwList.push(key);
    if ((acc[key] as number) > maxKw) maxKw = acc[key] as number;
  }
  const kwKeys = kwList.view();
  const kwOf = (key: number) => (key < acc.length ? (acc[key] as number) : 0);

  try {
    let vec = new Map<number, number>();
    /** Hybrid with many keyword matches: the keyword score the vector-scored head starts at. */
    let headFrom: number | undefined;
    if (r.mode !== 'keyword' && r.queryVector) {
      // Hybrid gives vector scores to the strongest keyword matches; the tail keeps its keyword score.
      let head: ArrayLike<number> & Iterable<number> = kwKeys;
      if (r.mode === 'hybrid' && kwKeys.length > HYBRID_VECTOR_LIMIT) {
        const kws = new Float64Array(kwKeys.length);
        for (let j = 0; j < kwKeys.length; j++) kws[j] = acc[kwKeys[j] as number] as number;
        const threshold = kthLargest(kws, HYBRID_VECTOR_LIMIT);
        headFrom = threshold;
        const strongest: number[] = [];
        for (const key of kwKeys) if ((acc[key] as number) >= threshold) strongest.push(key);
        head = strongest;
      } else if (r.mode !== 'hybrid') head = [];
      // With plenty of keyword matches, hybrid scores their strongest with vectors instead of also
      // probing the vector index for documents without a keyword match.
      const probe = r.mode === 'semantic' || kwKeys.length < HYBRID_VECTOR_LIMIT;
      const vectorScores = (q: Float32Array, base: Iterable<number> | null): Map<number, number> => {
        const indexed = index.similarityTo(q);
        const fresh = delta.similarityTo(q);
        const similarity = (key: number): number => (key < N ? indexed(key) : fresh(key - N));
        const m = new Map<number, number>();
        if (base) {
          for (const key of base) m.set(key, similarity(key));
        } else if (probe) {
          // The nearest of the build's and of the delta's: together, the nearest of both.
          const near: [key: number, score: number, id: number][] = [];
          index.nearest(q, RANKING.vectorCandidates, acceptIndexed).forEach((i, s) => near.push([i, s, index.ids[i] as number]));
          if (S) delta.nearest(q, RANKING.vectorCandidates, acceptSlot).forEach((slot, s) => near.push([N + slot, s, delta.docAt(slot).id]));
          if (near.length > RANKING.vectorCandidates) near.sort((a, b) => b[1] - a[1] || a[2] - b[2]).length = RANKING.vectorCandidates;
          for (const [key, s] of near) m.set(key, s);
        }
        for (const key of head) if (!m.has(key)) m.set(key, similarity(key));
        return m;
      };
      vec = vectorScores(r.queryVector, null);
      if (RANKING.feedbackWeight > 0) {
        // The best few documents of a first fusion move the query vector (Rocchio); the same
        // candidates are then scored again.
        const top = new TopKeys(RANKING.feedbackDocs);
        const maxVec = maxOf(vec);
        const consider = (key: number) => {
          const f = fused(r.mode, kwOf(key), maxKw, vec.get(key), maxVec);
          if (f !== null) top.push(key, f, docOf(key).id);
        };
        // Below the head, a keyword match has no vector score and a lower keyword score than any
        // head document, so it cannot be among the best: only the head is considered.
        for (const key of headFrom === undefined ? kwKeys : head) consider(key);
        // In semantic mode the neighbours are the evidence; in hybrid only keyword matches are.
        if (r.mode === 'semantic' || kwKeys.length === 0) for (const key of vec.keys()) if (kwOf(key) === 0) consider(key);
        const tops = top.keys().map(vectorOfKey).filter((v): v is Float32Array => v !== null);
        if (tops.length) {
          const q2 = Float32Array.from(r.queryVector);
          for (const v of tops) for (let k = 0; k < q2.length; k++) q2[k] = (q2[k] as number) + (RANKING.feedbackWeight * (v[k] as number)) / tops.length;
          vec = vectorScores(normalize(q2), vec.keys());
        }
      }
    }
    const maxVec = maxOf(vec);
    const emit = (key: number) => {
      let score = fused(r.mode, kwOf(key), maxKw, vec.get(key), maxVec);
      if (score === null) return;
      if (r.profile) {
        // The taste boost is at most (1 + personalWeight): skip its dot product when even that cannot enter the page.
        if (out.full(score * (1 + RANKING.personalWeight))) {
          out.total += 1;
          return;
        }
        score *= 1 + RANKING.personalWeight * Math.max(0, cosine(r.profile, vectorOfKey(key)));
      }
      out.add(docOf(key), score);
    };
    // The vector-scored candidates first: they fill the page with strong hits, so most of a
    // broad query's keyword tail is dismissed by one comparison.
    for (const key of vec.keys()) emit(key);
    // The rest are keyword matches below the head, without a vector score: each scores under
    // alpha * headFrom / maxKw (times the largest taste boost). When that cannot enter the page,
    // they only count toward the total.
    const tailBound = headFrom === undefined ? Infinity : ((RANKING.hybridAlpha * headFrom) / maxKw) * (r.profile ? 1 + RANKING.personalWeight : 1);
    if (out.full(tailBound)) {
      let scoredKw = 0;
      for (const key of vec.keys()) if (kwOf(key) > 0) scoredKw += 1;
      out.total += kwKeys.length - scoredKw;
    } else {
      for (const key of kwKeys) if (!vec.has(key)) emit(key);
    }
    return { hits: out.hits, total: out.total };
  } finally {
    for (const key of touched.view()) acc[key] = 0;
  }
}

function maxOf(m: Map<number, number>): number {
  let max = 1e-9;
  for (const v of m.values()) if (v > max) max = v;
  return max;
}

/** The fused score of a candidate, or null when it is no result. */
function fused(mode: SearchMode, kw: number, maxKw: number, vec: number | undefined, maxVec: number): number | null {
  if (mode === 'keyword') return kw > 0 ? kw : null;
  const v = Math.max(0, vec ?? 0);
  if (mode === 'semantic') return v > 0 ? v : null;
  const k = kw / maxKw;
  const vn = v / maxVec;
  // Without a keyword match, only close neighbours count: weak similarity is noise, not a result.
  if (k === 0 && (vn < RANKING.vectorOnlyMin || v < RANKING.vectorOnlyMinCosine)) return null;
  const score = RANKING.hybridAlpha * k + (1 - RANKING.hybridAlpha) * vn;
  return score > 0 ? score : null;
}

/**
 * The k best keys by score (small k), ties to the lower document id: a delta document's key
 * changes when it is re-read, its id does not.
 */
class TopKeys {
  private readonly items: [key: number, score: number, id: number][] = [];
  constructor(private readonly k: number) {}
  push(key: number, score: number, id: number): void {
    const last = this.items[this.items.length - 1];
    if (this.items.length === this.k && last && (score < last[1] || (score === last[1] && id > last[2]))) return;
    this.items.push([key, score, id]);
    this.items.sort((a, b) => b[1] - a[1] || a[2] - b[2]);
    if (this.items.length > this.k) this.items.pop();
  }
  keys(): number[] {
    return this.items.map(([k]) => k);
  }
}
