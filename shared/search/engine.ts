/**
 * The search engine: an immutable, in-memory index over a snapshot of a tenant's catalog. Its
 * parts each have their own module: text analysis (analyze.ts), the build (build.ts), the IVF
 * (ivf.ts), query expansion (expand.ts), BM25F (bm25f.ts), nearest neighbours (nearest.ts) and
 * quantisation (quantise.ts); ranking a request over it and its delta is rank.ts.
 */
import { nowSeconds } from '../clock.ts';
import { nextTurn, runInTurns, runNow } from '../concurrency.ts';
import { averageLengths, foldedName, NO_NAMES, stopWordOpening, type NamesBeginning } from './analyze.ts';
import { FieldNorms, idfOf, type CollectionStats, type Postings } from './bm25f.ts';
import { buildIndexParts, type IndexParts } from './build.ts';
import { ColumnCache } from './columns.ts';
import { NO_EXTRA, QueryExpander, type Expansion, type ExtraVocab } from './expand.ts';
import { Int8Rows, quantisedQuery, type QuantisedQuery, type Similarities, type VectorRow } from './int8-vectors.ts';
import { probeLists, scanLists, type Ivf } from './ivf.ts';
import { nearestOf } from './nearest.ts';
import { dequantise, quantisedRows } from './quantise.ts';
import { type SearchDoc, vectorSavedMs } from './types.ts';
import type { TopK } from '../top-k.ts';

/** Rows the first pass of a nearest-neighbour search scores per call of the kernel (`nearest`). */
const SCAN_ROWS = 4096;
/** The first pass's scores for a query without a direction. */
const ZERO_SCAN = new Float64Array(SCAN_ROWS);

/** Documents `lookupsOf` indexes between two pauses (about 10 ms each). */
const LOOKUPS_PER_TURN = 25_000;

/** A build's lookups by term and by item id, and its documents' ids and states as arrays. */
interface Lookups {
  termIndex: Map<string, number>;
  byId: Map<number, number>;
  ids: Float64Array;
  active: Uint8Array;
}

/** `parts`' lookups, pausing (`yield`) every LOOKUPS_PER_TURN terms or documents. */
function* lookupsOf(parts: IndexParts): Generator<void, Lookups, void> {
  const termIndex = new Map<string, number>();
  parts.vocab.forEach((t, k) => termIndex.set(t, k));
  yield;
  const n = parts.docs.length;
  const byId = new Map<number, number>();
  const ids = new Float64Array(n);
  const active = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % LOOKUPS_PER_TURN === 0) yield;
    const d = parts.docs[i] as SearchDoc;
    byId.set(d.id, i);
    ids[i] = d.id;
    active[i] = d.active ? 1 : 0;
  }
  return { termIndex, byId, ids, active };
}

export type { SearchDoc, SearchMode, Hit, DocFilter } from './types.ts';
export { NO_FILTER } from './types.ts';
export { RANKING } from './constants.ts';
export { idfOf, type CollectionStats } from './bm25f.ts';
export { buildIndexParts, type IndexParts } from './build.ts';

/**
 * BM25F over name/description/metadata with a sorted vocabulary for prefix and typo expansion,
 * and an IVF over item vectors for semantic and hybrid ranking. Built by the index builder,
 * serialised to the blob store, loaded once per container; fresh changes are scored beside it
 * (`delta`).
 */
export class SearchIndex {
  readonly docs: SearchDoc[];
  readonly dims: number;
  readonly builtAt: number;
  readonly parts: IndexParts;
  private readonly termIndex: Map<string, number>;
  private readonly expander: QueryExpander;
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
  readonly byId: Map<number, number>;
  /** The documents by the first word of their names, when a stop word (`namesBeginning`), made when first asked. */
  private byFirstNameWord: Map<string, NamesBeginning> | undefined;
  /** The field norms of the latest statistics ranked with (`norms`). */
  private fieldNorms: FieldNorms | undefined;
  /** Per indexed document, its id and whether it is active: ranking checks them for every keyword match without touching the document. */
  readonly ids: Float64Array;
  readonly active: Uint8Array;
  /** Metadata as columns for facets and sort by a field (columns.ts), made on first use. */
  private columnCache: ColumnCache | undefined;

  /**
   * The documents whose names' first word (as `words` reads it) is `word`, a stop word, each with
   * its name as `nameWords` reads it: a query of stop words only, which no indexed word matches,
   * looks its names up here (rank.ts `stopWordNames`). Made the first time one is asked for (a
   * pass over every name's first word); the names kept read once, not at every such query (tens
   * of thousands of names begin with "the" in a large catalog).
   */
  namesBeginning(word: string): NamesBeginning {
    if (!this.byFirstNameWord) {
      const map = new Map<string, { keys: number[]; names: string[] }>();
      this.docs.forEach((d, i) => {
        const first = stopWordOpening(d.name);
        if (first === undefined) return;
        let list = map.get(first);
        if (!list) map.set(first, (list = { keys: [], names: [] }));
        list.keys.push(i);
        list.names.push(foldedName(d.name));
      });
      this.byFirstNameWord = map;
    }
    return this.byFirstNameWord.get(word) ?? NO_NAMES;
  }

  /**
   * A loaded build's index, its vectors copied into the kernel's memory (`Int8Rows.inTurns`) and
   * its lookups made (`lookupsOf`) in turns: at 100,000 items they took 0.24-0.33 s and 70-90 ms
   * in one go, during which the container served nothing.
   */
  static async inTurns(built: IndexParts, artifactBytes: number): Promise<SearchIndex> {
    const rows = await Int8Rows.inTurns(built.vectors, built.dims, SCAN_ROWS);
    await nextTurn();
    const lookups = await runInTurns(lookupsOf(built));
    return new SearchIndex(built, artifactBytes, rows, lookups);
  }

  /**
   * `artifactBytes`: the size of the artifact it was read from (0 when built in this process):
   * what a container's memory budget for search views estimates a build by (views.ts).
   */
  constructor(
    built: IndexParts,
    readonly artifactBytes = 0,
    /** The vectors already in the kernel's memory (`inTurns`). */
    rows?: Int8Rows,
    /** Its lookups, made already (`inTurns`). */
    lookups: Lookups = runNow(lookupsOf(built)),
  ) {
    this.vectors = rows ?? new Int8Rows(built.vectors, built.dims, SCAN_ROWS);
    // The parts (serialised by the index builder) hold the kernel's copy, not a second one.
    const parts = { ...built, vectors: this.vectors.rows };
    this.parts = parts;
    this.docs = parts.docs;
    this.dims = parts.dims;
    this.builtAt = parts.builtAt;
    ({ termIndex: this.termIndex, byId: this.byId, ids: this.ids, active: this.active } = lookups);
    this.expander = new QueryExpander({
      vocab: parts.vocab,
      surface: parts.surface,
      surfaceStem: parts.surfaceStem,
      surfaceDf: parts.surfaceDf,
      has: (t) => this.termIndex.has(t),
      df: (t) => this.df(t),
    });
    this.lens = parts.lens;
    const n = parts.docs.length;
    this.sumLen = this.lens.map((l) => l.reduce((a, b) => a + b, 0));
    this.stats = { n, avgLen: averageLengths(this.sumLen, n), df: (t) => this.df(t) };
    this.scales = parts.scales;
    this.hasVector = parts.hasVector;
    this.ivf = parts.ivf;
    this.centroids = parts.ivf ? quantisedRows(parts.ivf.centroids, parts.dims) : null;
  }

  private newestVector: number | undefined;
  /** When (ms) the newest vector the build holds was saved (0: none; `vectorSavedMs`), read once. */
  get newestVectorMs(): number {
    if (this.newestVector === undefined) {
      let max = 0;
      for (let i = 0; i < this.docs.length; i++) if (this.hasVector[i] === 1) max = Math.max(max, vectorSavedMs(this.docs[i] as SearchDoc));
      this.newestVector = max;
    }
    return this.newestVector;
  }

  private largest: number | undefined;
  /** The largest item id the build holds (0: none), read once. */
  get largestId(): number {
    if (this.largest === undefined) {
      let max = 0;
      for (let i = 0; i < this.ids.length; i++) if ((this.ids[i] as number) > max) max = this.ids[i] as number;
      this.largest = max;
    }
    return this.largest;
  }

  static build(docs: SearchDoc[], dims: number, builtAt = nowSeconds()): SearchIndex {
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
    // Read straight from the offsets (no range object): a short prefix's expansion asks for
    // thousands of terms' counts.
    const k = this.termIndex.get(term);
    return k === undefined ? 0 : (this.parts.offsets[k + 1] as number) - (this.parts.offsets[k] as number);
  }

  /** The documents' metadata as columns, per key or field asked for (kept with the build). */
  columns(): ColumnCache {
    return (this.columnCache ??= new ColumnCache(this.docs.length, (i) => this.docs[i], undefined, true));
  }

  /** The documents' field norms under these statistics' average lengths (kept until they change). */
  norms(stats: CollectionStats): FieldNorms {
    return (this.fieldNorms = FieldNorms.of(this.lens, this.docs.length, stats.avgLen, this.fieldNorms));
  }

  /** BM25's IDF of a term, with the build's statistics or the given ones. */
  idf(term: string, stats: CollectionStats = this.stats): number {
    return idfOf(stats.n, stats.df(term));
  }

  /** A term's posting list in the build, or undefined. */
  postingsOf(term: string): Postings | undefined {
    const p = this.posting(term);
    return p ? { docs: this.parts.postingDocs, tfs: this.parts.postingTfs, start: p.start, end: p.end, keepAs: p.start } : undefined;
  }

  /**
   * Whether the build indexed document `i` under `term` (its posting list, in document order, holds
   * it): what a document counted in a term's document frequency, whatever analysis reads its text now.
   */
  indexedUnder(term: string, i: number): boolean {
    const p = this.posting(term);
    if (!p) return false;
    const docs = this.parts.postingDocs;
    let lo = p.start;
    let hi = p.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((docs[mid] as number) < i) lo = mid + 1;
      else hi = mid;
    }
    return lo < p.end && docs[lo] === i;
  }

  /** The query's terms and expansions against this build's vocabulary and the delta's (`QueryExpander.expand`). */
  expand(query: string, extra: ExtraVocab = NO_EXTRA): Expansion {
    return this.expander.expand(query, extra);
  }

  /** Edit-distance rows computed by typo lookups in this index so far (for tests and benchmarks). */
  get typoWork(): number {
    return this.expander.typoWork;
  }

  /**
   * Whether the index holds this very version of `d` (the same update and embedding times,
   * activity, content and vector presence): read again as a change, it changes nothing.
   */
  holds(d: SearchDoc): boolean {
    const i = this.byId.get(d.id);
    if (i === undefined) return false;
    const x = this.docs[i] as SearchDoc;
    return (
      x.updated_at === d.updated_at &&
      x.embedding_updated_at === d.embedding_updated_at &&
      x.active === d.active &&
      (this.hasVector[i] === 1) === (d.vector !== null && d.vector.length === this.dims) &&
      x.name === d.name &&
      x.description === d.description &&
      JSON.stringify(x.metadata) === JSON.stringify(d.metadata)
    );
  }

  /** The (dequantised) vector of indexed document i. */
  vectorOf(i: number): Float32Array | null {
    return this.hasVector[i] ? dequantise(this.vectors.rows, i, this.dims, this.scales[i] as number) : null;
  }

  /** Where indexed document i's int8 vector is, and its scale (undefined without one). */
  vectorRow(i: number): VectorRow | undefined {
    return this.hasVector[i] ? { rows: this.vectors, row: i, scale: this.scales[i] as number } : undefined;
  }

  /** q · the vector of indexed document i, for any number of documents (0 without a vector). */
  similarityTo(q: Float32Array): (i: number) => number {
    const dot = this.vectors.query(q);
    const { hasVector, scales } = this;
    return (i) => (hasVector[i] ? dot(i) * (scales[i] as number) : 0);
  }

  /** `similarityTo(q)` of many indexed documents at once (`Similarities`), SCAN_ROWS per call of the kernel. */
  similaritiesTo(q: Float32Array): Similarities {
    return this.similaritiesOf(q.length === this.dims ? quantisedQuery(q) : undefined);
  }

  private similaritiesOf(quantised: QuantisedQuery | undefined): Similarities {
    const { hasVector, scales, vectors } = this;
    return (rows, count, out) => {
      // A query without a direction (zero) is 0 to every row, as row by row.
      if (!quantised) {
        out.fill(0, 0, count);
        return;
      }
      for (let from = 0; from < count; from += SCAN_ROWS) {
        const n = Math.min(SCAN_ROWS, count - from);
        const sums = vectors.scanOf(quantised, rows, n, this.dims, from);
        for (let r = 0; r < n; r++) {
          const i = rows[from + r] as number;
          out[from + r] = hasVector[i] ? (sums[r] as number) * (scales[i] as number) : 0;
        }
      }
    };
  }

  /**
   * Approximate nearest neighbours by cosine among the documents `accept`ed: those of the IVF
   * lists closest to the query (`probeLists`, and further lists while fewer than k were accepted,
   * or every row a selective filter may pass; every document when there is no IVF), coarse then
   * exact when they are many (`nearestOf`).
   */
  nearest(q: Float32Array, k: number, accept: (i: number) => boolean, passing?: () => Uint32Array | undefined): TopK {
    const n = this.docs.length;
    const { scales, hasVector } = this;
    let probed: Uint32Array[] | undefined;
    let rest: Uint32Array[] = [];
    let candidates = n;
    if (this.ivf && this.centroids) {
      const toCentroid = this.centroids.rows.query(q);
      const centroidScales = this.centroids.scales;
      ({ probed, candidates, rest } = probeLists(this.ivf.lists, (c) => toCentroid(c) * (centroidScales[c] as number), k, n));
    }
    const quantised = q.length === this.dims ? quantisedQuery(q) : undefined;
    // The first pass scores the candidates SCAN_ROWS at a time in one call of the kernel each (the
    // probed lists' rows picked out, or all rows in order), and offers `accept` only those that
    // would enter the top: the same neighbours and scores as one call per candidate.
    const rows = this.vectors;
    // A query without a direction (zero) is 0 to every row, as row by row.
    const scanOf = (chunk: Uint32Array, dims: number) => (quantised ? rows.scanOf(quantised, chunk, chunk.length, dims) : ZERO_SCAN);
    const scanFrom = (from: number, count: number, dims: number) => (quantised ? rows.scan(quantised, from, count, dims) : ZERO_SCAN);
    const firstPass = (dims: number, top: TopK) => {
      const offer = (sums: Float64Array, count: number, keyAt: (r: number) => number) => {
        for (let r = 0; r < count; r++) {
          const i = keyAt(r);
          if (!hasVector[i]) continue;
          const s = (sums[r] as number) * (scales[i] as number);
          if (top.admits(s, i) && accept(i)) top.push(i, s);
        }
      };
      if (probed) {
        const scanList = (list: Uint32Array) => {
          for (let from = 0; from < list.length; from += SCAN_ROWS) {
            const chunk = list.subarray(from, from + SCAN_ROWS);
            offer(scanOf(chunk, dims), chunk.length, (r) => chunk[r] as number);
          }
        };
        scanLists({ probed, candidates, rest }, n, top, passing, scanList);
      } else {
        for (let from = 0; from < n; from += SCAN_ROWS) {
          const count = Math.min(SCAN_ROWS, n - from);
          offer(scanFrom(from, count, dims), count, (r) => from + r);
        }
      }
    };
    return nearestOf(candidates, this.dims, k, firstPass, this.similaritiesOf(quantised));
  }
}
