import { cosine, normalize } from './embedding.ts';
import { analyze, IntList, NO_FILTER, RANKING, type Analyzed, type DocFilter, type Hit, type SearchDoc, type SearchIndex, type SearchMode } from './engine.ts';

/** Items changed since the index was built (scored beside it) and ids it must no longer show. */
export interface Delta {
  docs: SearchDoc[];
  /** Ids whose indexed copy is superseded (changed or deleted). */
  masked: Set<number>;
}

/**
 * The changes since the index build, analysed once and kept up to date incrementally: each
 * request applies only the changes it has not seen yet (a document replaces its older version;
 * a deletion removes it), so the per-request cost follows the rate of change, not its backlog.
 */
export class PreparedDelta {
  private readonly byId = new Map<number, { doc: SearchDoc; analyzed: Analyzed }>();
  readonly masked = new Set<number>();
  readonly df = new Map<string, number>();
  readonly terms = new Set<string>();
  /** The delta documents' words whose stem differs from them, with that stem and how many documents hold them. */
  readonly surfaces = new Map<string, { stem: string; n: number }>();
  private arrays: { docs: SearchDoc[]; analyzed: Analyzed[] } | undefined;

  constructor(delta: Delta = { docs: [], masked: new Set() }) {
    this.apply(delta.docs, [...delta.masked].filter((id) => !delta.docs.some((d) => d.id === id)));
  }

  /** Applies changed documents (newer versions replace older ones) and deletions. */
  apply(docs: SearchDoc[], deleted: number[]): void {
    let changed = deleted.length > 0;
    for (const d of docs) {
      // Re-reads of an unchanged document (the clock-skew margin) cost nothing.
      if (same(this.byId.get(d.id)?.doc, d)) continue;
      changed = true;
      this.remove(d.id);
      const analyzed = analyze(d);
      for (const t of analyzed.tf.keys()) {
        this.df.set(t, (this.df.get(t) ?? 0) + 1);
        this.terms.add(t);
      }
      for (const [w, t] of analyzed.surface) {
        const e = this.surfaces.get(w);
        if (e) e.n += 1;
        else this.surfaces.set(w, { stem: t, n: 1 });
      }
      this.byId.set(d.id, { doc: d, analyzed });
      this.masked.add(d.id);
    }
    for (const id of deleted) {
      this.remove(id);
      this.masked.add(id);
    }
    if (changed) this.arrays = undefined;
  }

  private remove(id: number): void {
    const old = this.byId.get(id);
    if (!old) return;
    for (const t of old.analyzed.tf.keys()) {
      const n = (this.df.get(t) ?? 1) - 1;
      if (n > 0) this.df.set(t, n);
      else {
        this.df.delete(t);
        this.terms.delete(t);
      }
    }
    for (const w of old.analyzed.surface.keys()) {
      const e = this.surfaces.get(w);
      if (e && --e.n === 0) this.surfaces.delete(w);
    }
    this.byId.delete(id);
  }

  private view() {
    this.arrays ??= { docs: [...this.byId.values()].map((e) => e.doc), analyzed: [...this.byId.values()].map((e) => e.analyzed) };
    return this.arrays;
  }

  get docs(): SearchDoc[] {
    return this.view().docs;
  }

  get analyzed(): Analyzed[] {
    return this.view().analyzed;
  }

  get(id: number): SearchDoc | undefined {
    return this.byId.get(id)?.doc;
  }
}

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
}

export interface Ranked {
  /** The page, plus one more hit when there is a next page. */
  hits: Hit[];
  /** Every match of the query and filters. */
  total: number;
}

/** The one order of results: score descending, then id ascending. Cursors follow it. */
export const byRank = (a: Hit, b: Hit): number => b.score - a.score || a.doc.id - b.doc.id;

function same(a: SearchDoc | undefined, b: SearchDoc): boolean {
  return (
    a !== undefined && a.updated_at === b.updated_at && a.embedding_updated_at === b.embedding_updated_at && a.active === b.active &&
    (a.vector === null) === (b.vector === null) && a.name === b.name && a.description === b.description && JSON.stringify(a.metadata) === JSON.stringify(b.metadata)
  );
}

/** Keyword matches beyond this many (by keyword score) are not given a vector score in hybrid mode. */
const HYBRID_VECTOR_LIMIT = 500;

// Keyword accumulator and scratch lists reused across requests (ranking is synchronous, so
// never shared at once).
let acc = new Float64Array(0);
const touchedList = new IntList();
const kwList = new IntList();

/** Collects the best `limit + 1` hits after the cursor, in rank order. */
class PageCollector {
  readonly hits: Hit[] = [];
  total = 0;
  constructor(private readonly page: PageRequest) {}
  add(doc: SearchDoc, score: number): void {
    this.total += 1;
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
 * Ranks the index plus the delta for one request: BM25F keyword scores, vector similarity,
 * their fusion (hybrid: a convex combination of max-normalised scores), pseudo-relevance
 * feedback in vector space (the query vector moves toward its best few documents and the vector
 * part is scored again), an optional taste boost from the user's profile, with filters and
 * activity applied to every candidate. Documents are keys: index position i, or N + k for the
 * k-th delta document. Returns one page in `byRank` order and the number of matches.
 */
export function rank(index: SearchIndex, delta: PreparedDelta, r: RankRequest, page: PageRequest): Ranked {
  const N = index.docs.length;
  const D = delta.docs.length;
  const docOf = (key: number): SearchDoc => (key < N ? index.docs[key] : delta.docs[key - N]) as SearchDoc;
  const eligible = (d: SearchDoc) => (d.active || r.includeInactive === true) && r.filter(d);
  // Broad queries match tens of thousands of indexed documents: without filters, accepting one
  // reads two typed arrays instead of the document object.
  const unfiltered = r.filter === NO_FILTER;
  const anyMasked = delta.masked.size > 0;
  const acceptIndexed = (i: number) => {
    if (anyMasked && delta.masked.has(index.ids[i] as number)) return false;
    return unfiltered ? r.includeInactive === true || index.active[i] === 1 : eligible(index.docs[i] as SearchDoc);
  };
  const accept = (key: number) => (key < N ? acceptIndexed(key) : eligible(delta.docs[key - N] as SearchDoc));
  const vectorOfKey = (key: number): Float32Array | null => (key < N ? index.vectorOf(key) : (delta.docs[key - N] as SearchDoc).vector);
  const out = new PageCollector(page);

  if (r.query.trim() === '') {
    // Browsing: by the user's taste when known, else newest first (ids grow with creation).
    for (let key = 0; key < N + D; key++) {
      if (!accept(key)) continue;
      const d = docOf(key);
      out.add(d, r.profile ? Math.max(0, cosine(r.profile, vectorOfKey(key))) + 1e-12 * d.id : d.id);
    }
    return { hits: out.hits, total: out.total };
  }

  // Keyword scores into the pooled accumulator.
  if (acc.length < N + D) acc = new Float64Array(Math.max(N + D, Math.ceil(acc.length * 1.5)));
  touchedList.clear();
  const touched = touchedList;
  if (r.mode !== 'semantic') {
    const extraDf = (t: string) => delta.df.get(t) ?? 0;
    const expanded = index.expand(r.query, delta);
    index.keywordScoresInto(expanded, D, extraDf, acc, touched);
    for (let k = 0; k < D; k++) {
      const s = index.scoreExternal(delta.analyzed[k] as Analyzed, expanded, D, extraDf);
      if (s > 0) {
        acc[N + k] = s;
        touched.push(N + k);
      }
    }
  }
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
        const similarity = (key: number): number => (key < N ? indexed(key) : cosine((delta.docs[key - N] as SearchDoc).vector, q));
        const m = new Map<number, number>();
        if (base) {
          for (const key of base) m.set(key, similarity(key));
        } else if (probe) {
          index.nearest(q, RANKING.vectorCandidates, acceptIndexed).forEach((i, s) => m.set(i, s));
          for (let k = 0; k < D; k++) if ((delta.docs[k] as SearchDoc).vector && accept(N + k)) m.set(N + k, similarity(N + k));
        }
        for (const key of head) if (!m.has(key)) m.set(key, similarity(key));
        return m;
      };
      vec = vectorScores(r.queryVector, null);
      if (RANKING.feedbackWeight > 0) {
        // The best few documents of a first fusion move the query vector (Rocchio); the same
        // candidates are then scored again.
        const best = new TopKeys(RANKING.feedbackDocs);
        const maxVec = maxOf(vec);
        const consider = (key: number) => {
          const f = fused(r.mode, kwOf(key), maxKw, vec.get(key), maxVec);
          if (f !== null) best.push(key, f, docOf(key).id);
        };
        // Below the head, a keyword match has no vector score and a lower keyword score than any
        // head document, so it cannot be among the best: only the head is considered.
        for (const key of headFrom === undefined ? kwKeys : head) consider(key);
        // In semantic mode the neighbours are the evidence; in hybrid only keyword matches are.
        if (r.mode === 'semantic' || kwKeys.length === 0) for (const key of vec.keys()) if (kwOf(key) === 0) consider(key);
        const tops = best.keys().map(vectorOfKey).filter((v): v is Float32Array => v !== null);
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
