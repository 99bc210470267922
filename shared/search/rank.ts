import { normalize } from './embedding.ts';
import { analyze, RANKING, type Analyzed, type DocFilter, type Hit, type SearchDoc, type SearchIndex, type SearchMode } from './engine.ts';

/** Items changed since the index was built (scored beside it) and ids it must no longer show. */
export interface Delta {
  docs: SearchDoc[];
  /** Ids whose indexed copy is superseded (changed or deleted). */
  masked: Set<number>;
}

/** A delta with its documents analysed once and reused across queries. */
export class PreparedDelta {
  readonly docs: SearchDoc[];
  readonly masked: Set<number>;
  readonly analyzed: Analyzed[];
  readonly df = new Map<string, number>();
  readonly terms = new Set<string>();

  constructor(delta: Delta) {
    this.docs = delta.docs;
    this.masked = delta.masked;
    this.analyzed = delta.docs.map(analyze);
    for (const a of this.analyzed) {
      for (const t of a.tf.keys()) {
        this.df.set(t, (this.df.get(t) ?? 0) + 1);
        this.terms.add(t);
      }
    }
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

export interface Ranked {
  hits: Hit[];
  total: number;
}

/** The one order of results: score descending, then id ascending. Cursors follow it. */
export const byRank = (a: Hit, b: Hit): number => b.score - a.score || a.doc.id - b.doc.id;

const cos = (a: Float32Array | null, b: Float32Array | null): number => {
  if (!a || !b || a.length !== b.length) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
};

/** Keyword matches beyond this many (by keyword score) are not given a vector score in hybrid mode. */
const HYBRID_VECTOR_LIMIT = 1000;

/**
 * Ranks the index plus the delta for one request: BM25F keyword scores, vector similarity,
 * their fusion (hybrid: a convex combination of max-normalised scores), pseudo-relevance
 * feedback in vector space (the query vector moves toward its best few documents, then the
 * vector part is scored again), an optional taste boost from the user's profile, with filters
 * and activity applied to every candidate.
 * Returns every match ordered by `byRank`; the caller paginates.
 */
export function rank(index: SearchIndex, delta: PreparedDelta, r: RankRequest): Ranked {
  const eligible = (d: SearchDoc) => (d.active || r.includeInactive === true) && r.filter(d);
  const acceptIndexed = (i: number) => {
    const d = index.docs[i] as SearchDoc;
    return !delta.masked.has(d.id) && eligible(d);
  };
  const extraDocs = delta.docs.length;
  const extraDf = (t: string) => delta.df.get(t) ?? 0;
  const isIndexed = (d: SearchDoc): number | undefined => {
    const i = index.byId.get(d.id);
    return i !== undefined && index.docs[i] === d ? i : undefined;
  };
  const vectorOfDoc = (d: SearchDoc): Float32Array | null => {
    if (d.vector) return d.vector;
    const i = isIndexed(d);
    return i === undefined ? null : index.vectorOf(i);
  };
  const similarity = (d: SearchDoc, q: Float32Array): number => {
    if (d.vector) return cos(d.vector, q);
    const i = isIndexed(d);
    return i === undefined ? 0 : index.dot(i, q);
  };

  if (r.query.trim() === '') return browse(index, delta, eligible, acceptIndexed, r.profile, vectorOfDoc);

  const kw = new Map<SearchDoc, number>();
  if (r.mode !== 'semantic') {
    const expanded = index.expand(r.query, delta.terms);
    for (const [i, s] of index.keywordScores(expanded, extraDocs, extraDf)) if (acceptIndexed(i)) kw.set(index.docs[i] as SearchDoc, s);
    delta.docs.forEach((d, k) => {
      if (!eligible(d)) return;
      const s = index.scoreExternal(delta.analyzed[k] as Analyzed, expanded, extraDocs, extraDf);
      if (s > 0) kw.set(d, s);
    });
  }
  let maxKw = 1e-9;
  for (const v of kw.values()) if (v > maxKw) maxKw = v;
  // Hybrid gives vector scores to the strongest keyword matches; the tail keeps its keyword score.
  const kwHead = r.mode === 'hybrid' ? [...kw.entries()].sort((a, b) => b[1] - a[1]).slice(0, HYBRID_VECTOR_LIMIT).map(([d]) => d) : [];

  const vectorScores = (q: Float32Array): Map<SearchDoc, number> => {
    const vec = new Map<SearchDoc, number>();
    for (const [i, s] of index.nearest(q, RANKING.vectorCandidates, acceptIndexed)) vec.set(index.docs[i] as SearchDoc, s);
    for (const d of delta.docs) if (eligible(d) && d.vector) vec.set(d, cos(d.vector, q));
    for (const d of kwHead) if (!vec.has(d)) vec.set(d, similarity(d, q));
    return vec;
  };
  const fuse = (vec: Map<SearchDoc, number>): Hit[] => {
    let maxVec = 1e-9;
    for (const v of vec.values()) if (v > maxVec) maxVec = v;
    const out: Hit[] = [];
    for (const d of new Set([...kw.keys(), ...vec.keys()])) {
      const k = (kw.get(d) ?? 0) / maxKw;
      const v = Math.max(0, vec.get(d) ?? 0) / maxVec;
      // Without a keyword match, only close neighbours count: weak similarity is noise, not a result.
      if (k === 0 && v < RANKING.vectorOnlyMin) continue;
      let score = r.mode === 'keyword' ? (kw.get(d) ?? 0) : r.mode === 'semantic' ? Math.max(0, vec.get(d) ?? 0) : RANKING.hybridAlpha * k + (1 - RANKING.hybridAlpha) * v;
      if (score <= 0) continue;
      if (r.profile) score *= 1 + RANKING.personalWeight * Math.max(0, cos(r.profile, vectorOfDoc(d)));
      out.push({ doc: d, score });
    }
    return out.sort(byRank);
  };

  if (r.mode === 'keyword' || !r.queryVector) {
    const hits = fuse(new Map());
    return { hits, total: hits.length };
  }
  let hits = fuse(vectorScores(r.queryVector));
  const top = hits.slice(0, RANKING.feedbackDocs).map((h) => vectorOfDoc(h.doc)).filter((v): v is Float32Array => v !== null);
  if (top.length > 0 && RANKING.feedbackWeight > 0) {
    const q2 = Float32Array.from(r.queryVector);
    for (const v of top) for (let k = 0; k < q2.length; k++) q2[k] = (q2[k] as number) + (RANKING.feedbackWeight * (v[k] as number)) / top.length;
    hits = fuse(vectorScores(normalize(q2)));
  }
  return { hits, total: hits.length };
}

/** An empty query lists eligible items: by the user's taste when known, else newest first. */
function browse(
  index: SearchIndex,
  delta: PreparedDelta,
  eligible: (d: SearchDoc) => boolean,
  acceptIndexed: (i: number) => boolean,
  profile: Float32Array | null,
  vectorOfDoc: (d: SearchDoc) => Float32Array | null,
): Ranked {
  const hits: Hit[] = [];
  const add = (d: SearchDoc) => {
    // Ids grow with creation, so the id itself orders newest first.
    hits.push({ doc: d, score: profile ? Math.max(0, cos(profile, vectorOfDoc(d))) + 1e-12 * d.id : d.id });
  };
  index.docs.forEach((d, i) => acceptIndexed(i) && add(d));
  delta.docs.forEach((d) => eligible(d) && add(d));
  hits.sort(byRank);
  return { hits, total: hits.length };
}
