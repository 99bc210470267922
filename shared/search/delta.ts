import type { TopK } from '../top-k.ts';
import { analyze, averageLengths, foldedName, NO_NAMES, stopWordOpening, type Analyzed, type NamesBeginning } from './analyze.ts';
import { FieldNorms, type CollectionStats, type Postings } from './bm25f.ts';
import { ColumnCache } from './columns.ts';
import type { SearchIndex } from './engine.ts';
import type { ExtraVocab } from './expand.ts';
import { Int8Rows, quantisedQuery, type QuantisedQuery, type QueryDot, type Similarities, type VectorRow } from './int8-vectors.ts';
import { type CentroidDots, IVF_MIN, probeLists, scanLists, trainIvf, trainIvfInTurns } from './ivf.ts';
import { coarseDimsOf, nearestOf } from './nearest.ts';
import { dequantise, quantisedRows, quantiseInto } from './quantise.ts';
import { byTerm, firstAtLeast } from './text.ts';
import { type SearchDoc, vectorSavedMs } from './types.ts';

/** Items changed since the index was built (scored beside it) and ids it must no longer show. */
export interface Delta {
  docs: SearchDoc[];
  /** Ids whose indexed copy is superseded (changed or deleted). */
  masked: Set<number>;
}

/** Rows per block of the delta's int8 vectors (each block one kernel instance). */
const BLOCK = 1024;

/**
 * What a document the delta holds has for its vector once the delta's int8 rows hold it, its
 * float values let go (2 KB an item: 200 MB right after an import of 100,000 items): a vector,
 * as far as anything asks of the document (not null), whose values are read from the rows
 * (`vectorOf`, `vectorRowOf`), as a build's are from its own. A build's documents keep none
 * either. A vector of another width than the rows' is kept as it came (it is none in them), and
 * rows of a width the delta was bound to before stay (`otherWidths`). Such
 * a document is not given to another delta (its values are in this one's rows): each reads its own
 * from the database.
 */
const IN_ROWS = new Float32Array(0);

/**
 * The delta's vectors, quantised as a build quantises them and scored by the same int8 kernel, in
 * blocks of BLOCK rows that are added as the delta grows: an item's similarity is the same to the
 * last bit in the delta and in a build.
 */
class DeltaVectors {
  private readonly blocks: Int8Rows[] = [];
  /**
   * The same rows' first `coarseDims` values side by side, for the coarse pass of a nearest
   * neighbour search (`nearestOf`) over many candidates (a delta below IVF_MIN vectors is scanned
   * whole): reading 128 bytes a row in a row is several times faster than the first 128 of every 512.
   */
  private readonly coarseBlocks: Int8Rows[] = [];
  private readonly coarseDims: number;
  private readonly scales: number[] = [];
  /** `byBlock`'s working memory: the slots' rows grouped by block, and where each came from. */
  private grouped = { rows: new Uint32Array(0), at: new Uint32Array(0) };
  /** The inverted file of a large delta (`train`), which lists each slot given a vector after it too. */
  ivf: DeltaIvf | null = null;
  constructor(readonly dims: number) {
    this.coarseDims = coarseDimsOf(dims);
  }

  /** Stores slot's vector (or its absence); true when it has one. */
  set(slot: number, v: Float32Array | null): boolean {
    const { block, at } = this.rowOf(slot);
    // Kept as a build keeps it (float32); a vector holding NaN is none, as in a build (`hasVector`).
    return this.placed(slot, block, at, Math.fround(v && v.length === this.dims ? quantiseInto(v, 0, this.dims, block.rows, at) : 0) || 0);
  }

  /** Stores the vector `from` holds for its slot `fromSlot` (of the same width) as slot's, to the bit; true when there is one. */
  copy(slot: number, from: DeltaVectors, fromSlot: number): boolean {
    const { block, at } = this.rowOf(slot);
    const source = from.vectorRow(fromSlot);
    if (source) block.rows.set(source.rows.rows.subarray(source.row * this.dims, (source.row + 1) * this.dims), at);
    return this.placed(slot, block, at, source?.scale ?? 0);
  }

  /** Where slot's row is, its block made when new. */
  private rowOf(slot: number): { block: Int8Rows; at: number } {
    const { dims, coarseDims } = this;
    while (this.blocks.length * BLOCK <= slot) {
      this.blocks.push(new Int8Rows(new Int8Array(BLOCK * dims), dims, BLOCK));
      this.coarseBlocks.push(new Int8Rows(new Int8Array(BLOCK * coarseDims), coarseDims, BLOCK));
    }
    return { block: this.blocks[Math.floor(slot / BLOCK)] as Int8Rows, at: (slot % BLOCK) * dims };
  }

  /** Records slot's row (`rowOf`) as written, with its scale (0: no vector): its coarse copy, and its list. */
  private placed(slot: number, block: Int8Rows, at: number, scale: number): boolean {
    const { dims, coarseDims } = this;
    (this.coarseBlocks[Math.floor(slot / BLOCK)] as Int8Rows).rows.set(block.rows.subarray(at, at + coarseDims), (slot % BLOCK) * coarseDims);
    this.scales[slot] = scale;
    if (scale !== 0) this.ivf?.add(slot, block.rows.subarray(at, at + dims));
    return scale !== 0;
  }

  /**
   * An inverted file over the slots `withVec` (those live with a vector), trained as a build
   * trains its own on the same int8 vectors (ivf.ts: the same slots in the same order give the
   * build's IVF); a slot given a vector later is listed under its closest centroid as it is set.
   */
  train(withVec: readonly number[]): void {
    const trained = trainIvf(withVec, this.dims, ...this.trainingReads());
    this.ivf = new DeltaIvf(trained.centroids, this.dims, trained.lists, withVec.length);
  }

  /** `train` in turns of a few milliseconds (`trainIvfInTurns`): the same inverted file. */
  async trainInTurns(withVec: readonly number[]): Promise<void> {
    const trained = await trainIvfInTurns(withVec, this.dims, ...this.trainingReads());
    this.ivf = new DeltaIvf(trained.centroids, this.dims, trained.lists, withVec.length);
  }

  /** What training reads of the slots: a component of one's vector, and their dot products with a centroid. */
  private trainingReads(): [at: (slot: number, d: number) => number, dots: CentroidDots] {
    const { dims, blocks, scales } = this;
    const at = (slot: number, d: number) => ((blocks[Math.floor(slot / BLOCK)] as Int8Rows).rows[(slot % BLOCK) * dims + d] as number) * (scales[slot] as number);
    const dots: CentroidDots = (centroid, slots, out) => {
      const quantised = quantisedQuery(centroid);
      if (!quantised) {
        out.fill(0, 0, slots.length);
        return;
      }
      this.byBlock(slots, slots.length, (b, rows, where, from, n) => {
        const sums = (blocks[b] as Int8Rows).scanOf(quantised, rows, n, dims, from);
        for (let r = 0; r < n; r++) out[where[from + r] as number] = sums[r] as number;
      });
    };
    return [at, dots];
  }

  has(slot: number): boolean {
    return (this.scales[slot] ?? 0) !== 0;
  }

  /** A slot's document left (replaced or deleted): out of the inverted file's lists. */
  unlist(slot: number): void {
    this.ivf?.remove(slot);
  }

  /**
   * q · the vector of a slot (0 without one), for any number of slots; on the first n dimensions
   * when n is given (the same sums as a coarse `scan`'s from its own rows).
   */
  similarityTo(q: Float32Array): (slot: number, n?: number) => number {
    const quantised = q.length === this.dims ? quantisedQuery(q) : undefined;
    if (!quantised) return () => 0;
    const dots = this.blocks.map((b) => b.quantisedQuery(quantised));
    return (slot, n) => {
      const scale = this.scales[slot] ?? 0;
      return scale ? (dots[Math.floor(slot / BLOCK)] as QueryDot)(slot % BLOCK, n) * scale : 0;
    };
  }

  /** `similarityTo(q)` of many slots at once (`Similarities`), each block's in one call of the kernel. */
  similaritiesTo(q: Float32Array): Similarities {
    const quantised = q.length === this.dims ? quantisedQuery(q) : undefined;
    const { scales, blocks } = this;
    return (slots, count, out) => {
      // A query without a direction (zero) is 0 to every slot, as slot by slot.
      if (!quantised) {
        out.fill(0, 0, count);
        return;
      }
      this.byBlock(slots, count, (b, rows, at, from, n) => {
        const sums = (blocks[b] as Int8Rows).scanOf(quantised, rows, n, this.dims, from);
        for (let r = 0; r < n; r++) {
          const scale = scales[b * BLOCK + (rows[from + r] as number)] ?? 0;
          out[at[from + r] as number] = scale ? (sums[r] as number) * scale : 0;
        }
      });
    };
  }

  /**
   * The slots slots[0..count) grouped by block (a counting sort): `each(b, rows, at, from, n)` for
   * each block b holding any, rows[from..from + n) their rows in it and at[...] where in `slots`
   * each came from.
   */
  private byBlock(slots: ArrayLike<number>, count: number, each: (b: number, rows: Uint32Array, at: Uint32Array, from: number, n: number) => void): void {
    const { blocks } = this;
    const starts = new Uint32Array(blocks.length + 1);
    for (let j = 0; j < count; j++) (starts[Math.floor((slots[j] as number) / BLOCK) + 1] as number)++;
    for (let b = 0; b < blocks.length; b++) starts[b + 1] = (starts[b + 1] as number) + (starts[b] as number);
    if (this.grouped.rows.length < count) this.grouped = { rows: new Uint32Array(count * 2), at: new Uint32Array(count * 2) };
    const { rows, at } = this.grouped;
    const next = starts.slice(0, blocks.length);
    for (let j = 0; j < count; j++) {
      const slot = slots[j] as number;
      const b = Math.floor(slot / BLOCK);
      const p = next[b] as number;
      next[b] = p + 1;
      rows[p] = slot % BLOCK;
      at[p] = j;
    }
    for (let b = 0; b < blocks.length; b++) {
      const from = starts[b] as number;
      const n = (starts[b + 1] as number) - from;
      if (n > 0) each(b, rows, at, from, n);
    }
  }

  /**
   * As `scan`, over the slots listed (an IVF's lists; each at most once), with q as `queryFor`
   * gives it: their rows scored a block's at a time, in one call of the kernel each.
   */
  scanSlots(query: QuantisedQuery | undefined, coarse: boolean, slots: ArrayLike<number>, take: (slot: number) => boolean, top: TopK): void {
    const blocks = coarse ? this.coarseBlocks : this.blocks;
    this.byBlock(slots, slots.length, (b, rows, _at, from, n) => {
      // A query without a direction (zero) is 0 to every slot, as slot by slot.
      const sums = query ? (blocks[b] as Int8Rows).scanOf(query, rows, n, query.q16.length, from) : new Float64Array(n);
      this.offer(sums, n, (r) => b * BLOCK + (rows[from + r] as number), take, top);
    });
  }

  /**
   * Offers `top` the slots slotAt(0..n) that have a vector, each with its kernel sum in `sums`
   * scaled to a similarity; a slot `top` would not admit is not offered to `take`.
   */
  private offer(sums: Float64Array, n: number, slotAt: (r: number) => number, take: (slot: number) => boolean, top: TopK): void {
    const { scales } = this;
    for (let r = 0; r < n; r++) {
      const slot = slotAt(r);
      const scale = scales[slot] ?? 0;
      if (scale === 0) continue;
      const similarity = (sums[r] as number) * scale;
      if (top.admits(similarity, slot) && take(slot)) top.push(slot, similarity);
    }
  }

  /** q in the kernel's form, cut to the coarse pass's dimensions when `coarse` (undefined for a zero query or one of another size). */
  queryFor(q: Float32Array, coarse: boolean): QuantisedQuery | undefined {
    const quantised = q.length === this.dims ? quantisedQuery(q) : undefined;
    return quantised && coarse ? { q16: quantised.q16.slice(0, this.coarseDims), down: quantised.down } : quantised;
  }

  /**
   * Pushes into `top` the slots below `count` that have a vector and that `take` accepts, with
   * their similarity to q on the first `coarseDims` dimensions when `coarse` (what
   * `similarityTo(q)(slot, coarseDims)` gives, to the bit), else on all of them, a block's rows
   * scored in one call of the kernel; a slot `top` would not admit is not offered to `take`.
   */
  scan(q: Float32Array, coarse: boolean, count: number, take: (slot: number) => boolean, top: TopK): void {
    const query = this.queryFor(q, coarse);
    const blocks = coarse ? this.coarseBlocks : this.blocks;
    for (let b = 0; b * BLOCK < count; b++) {
      const first = b * BLOCK;
      const rows = Math.min(BLOCK, count - first);
      // A query without a direction (zero) is 0 to every slot, as slot by slot.
      const sums = query ? (blocks[b] as Int8Rows).scan(query, 0, rows) : new Float64Array(rows);
      this.offer(sums, rows, (r) => first + r, take, top);
    }
  }

  /** Where a slot's int8 vector is, and its scale (undefined without one). */
  vectorRow(slot: number): VectorRow | undefined {
    const scale = this.scales[slot] ?? 0;
    return scale ? { rows: this.blocks[Math.floor(slot / BLOCK)] as Int8Rows, row: slot % BLOCK, scale } : undefined;
  }

  /** The dequantised vector of a slot, as a build's `vectorOf`. */
  vectorOf(slot: number): Float32Array | null {
    const scale = this.scales[slot] ?? 0;
    if (!scale) return null;
    return dequantise((this.blocks[Math.floor(slot / BLOCK)] as Int8Rows).rows, slot % BLOCK, this.dims, scale);
  }
}

/**
 * A large delta's inverted file (ivf.ts), so that its nearest neighbours are found as a build's
 * are (the lists closest to the query) instead of by reading every vector: centroids, quantised
 * as a build's are, and per centroid the live slots listed under it (a slot whose document is
 * replaced or deleted leaves its list: a query's probes count live slots only).
 */
class DeltaIvf {
  readonly lists: number[][];
  /** Per slot listed, its list. */
  private readonly listOf: number[] = [];
  /** Slots listed since training (`add`): by centroids trained on other vectors. */
  addedSince = 0;
  private readonly nlist: number;
  private readonly rows: Int8Rows;
  private readonly scales: Float32Array;

  /** Trained (`trainIvf`) on `trainedOn` vectors; `lists` as trained. */
  constructor(
    centroids: Float32Array,
    dims: number,
    lists: readonly Uint32Array[],
    readonly trainedOn: number,
  ) {
    this.nlist = lists.length;
    // Quantised as a build quantises its centroids, to rank lists alike; a scan scores them all.
    ({ rows: this.rows, scales: this.scales } = quantisedRows(centroids, dims, this.nlist));
    this.lists = lists.map((l) => Array.from(l));
    this.lists.forEach((list, c) => {
      for (const slot of list) this.listOf[slot] = c;
    });
  }

  /** The centroid closest to an int8 vector (of the highest dot product; ties: the lower centroid), every centroid scored in one call of the kernel. */
  closest(row: Int8Array): number {
    const sums = this.rows.scan({ q16: Int16Array.from(row), down: 1 }, 0, this.nlist);
    let best = 0;
    let bestScore = -Infinity;
    for (let c = 0; c < this.nlist; c++) {
      const score = (sums[c] as number) * (this.scales[c] as number);
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    return best;
  }

  /** Lists a slot under its closest centroid. */
  add(slot: number, row: Int8Array): void {
    const c = this.closest(row);
    (this.lists[c] as number[]).push(slot);
    this.listOf[slot] = c;
    this.addedSince += 1;
  }

  /** Takes a slot out of its list (the last of the list takes its place), if listed. */
  remove(slot: number): void {
    const c = this.listOf[slot];
    if (c === undefined || c < 0) return;
    this.listOf[slot] = -1;
    const list = this.lists[c] as number[];
    const at = list.lastIndexOf(slot);
    if (at < 0) return;
    const last = list.pop() as number;
    if (at < list.length) list[at] = last;
  }

  /** A query's similarity to each centroid (as a build ranks its lists). */
  toCentroid(q: Float32Array): (c: number) => number {
    const dot = this.rows.query(q);
    return (c) => dot(c) * (this.scales[c] as number);
  }
}

/**
 * A slot's document and what it added to the delta's statistics, in flat arrays: a large delta
 * (right after an import) holds one per item, and a map and an array per term of each would be
 * millions of objects for the garbage collector to mark.
 */
interface Slot extends Contents {
  doc: SearchDoc;
}

/**
 * A term's postings in the delta: its first `n` slots and their frequencies (three each), in
 * typed arrays that double as slots come, as a build holds its postings. Right after an import
 * the delta holds every item's postings: as arrays of numbers they were 85 MB of the 197 MB of
 * JavaScript heap a delta of the 100K catalog held; as typed arrays, 32 MB outside it
 * (docs/benchmarks.md).
 */
interface DeltaPostings {
  docs: Uint32Array;
  tfs: Uint16Array;
  n: number;
  term: string;
  df: number;
}

interface Contents {
  /** The document's terms (the delta's one copy of each string), and their frequencies per field, three each (16 bits, as a build stores them). */
  terms: string[];
  tfs: Uint16Array;
  len: readonly number[];
  /** Its words whose stem differs from them, each followed by that stem. */
  surface: string[];
}

/** An analysed document in a slot's flat form. */
function contentsOf(a: Analyzed): Contents {
  const terms = [...a.tf.keys()];
  const tfs = new Uint16Array(terms.length * 3);
  terms.forEach((t, j) => {
    const tf = a.tf.get(t) as [number, number, number];
    for (let f = 0; f < 3; f++) tfs[j * 3 + f] = Math.min(tf[f] as number, 65535);
  });
  return { terms, tfs, len: a.len, surface: [...a.surface].flat() };
}

/**
 * The changes since the index build, analysed once and kept up to date incrementally: each
 * request applies only the changes it has not seen yet (a document replaces its older version;
 * a deletion removes it), so the per-request cost follows the rate of change, not its backlog.
 *
 * It is a small index of its own: posting lists, field lengths and int8 vectors per slot (a
 * replaced document's slot is left dead and skipped; slots are renumbered once the dead
 * outnumber the live), so a query costs over a large delta what it costs over a build. Bound to
 * the build it is a delta of (`bind`), it keeps the collection statistics of both together (the
 * build's copies of changed and deleted documents taken out), which are what a build over the
 * same items would have: an item in the delta scores exactly as it would after the next build.
 */
export class PreparedDelta implements ExtraVocab {
  private readonly slotOf = new Map<number, number>();
  private slots: (Slot | undefined)[] = [];
  /** Per slot: 1 while it holds its document's current version. */
  live: Uint8Array = new Uint8Array(64);
  /**
   * Per slot, whether its document is active, and its id: ranking checks them for every keyword
   * match without touching the document, as it does a build's (`SearchIndex.active`, `ids`).
   */
  active: Uint8Array = new Uint8Array(64);
  ids: Float64Array = new Float64Array(64);
  /** The largest item id any slot has held (0: none): what a search's cursor names (`Cursor.upTo`). */
  largestId = 0;
  /** When (ms) the latest vector any slot has held was saved (0: none): a later page looks for vectors newer than its first page's only past it (`Cursor.vectorsAsOf`). */
  latestVectorMs = 0;
  /** Per slot, each field's length. */
  lens: [Float64Array, Float64Array, Float64Array] = [new Float64Array(64), new Float64Array(64), new Float64Array(64)];
  /**
   * Per term of the delta's documents: its slots and their frequencies, the term's string that
   * slots refer to, and how many live documents hold it (the term is dropped at 0). One entry
   * per term, so adding a document looks each of its terms up once.
   */
  private postings = new Map<string, DeltaPostings>();
  private vectors: DeltaVectors | null = null;
  /**
   * The rows of the widths the delta was bound to before a build of another width: a document
   * whose float values were let go keeps its row of that width here, should the delta be bound to
   * a build of that width again (as its floats would have given it).
   */
  private otherWidths = new Map<number, DeltaVectors>();
  private liveCount = 0;
  /** Live slots with a vector. */
  private liveVectors = 0;
  private readonly sumLen = [0, 0, 0];

  readonly masked = new Set<number>();
  /**
   * The live documents' ids by the first word of their names, when a stop word, each with its
   * name as `nameWords` reads it (`namesBeginning`).
   */
  private readonly byFirstNameWord = new Map<string, Map<number, string>>();
  /**
   * Per position of the bound build, 1 when its document is masked (replaced or deleted here):
   * ranking checks it for every keyword match of the build instead of looking the id up.
   */
  hiddenAt: Uint8Array = new Uint8Array(0);
  /** The delta documents' words whose stem differs from them, with that stem and how many documents hold them. */
  readonly surfaces = new Map<string, { stem: string; n: number }>();

  /** The build bound to, and what its copies of masked documents held (taken out of the statistics). */
  private index: SearchIndex | undefined;
  private hidden = { count: 0, len: [0, 0, 0], df: new Map<string, number>(), surfaces: new Map<string, number>() };

  private termsAdded: string[] = [];
  private termsRemoved: string[] = [];
  private surfacesAdded: string[] = [];
  private surfacesRemoved: string[] = [];
  private cache: { docs?: SearchDoc[]; stats?: CollectionStats; norms?: FieldNorms; sortedTerms?: string[]; sortedSurfaces?: string[]; columns?: ColumnCache } = {};
  /**
   * The columns of the slots before the last changes, which the next ones start from (until the
   * slots are renumbered: `compact`).
   */
  private columnsBefore: ColumnCache | undefined;

  constructor(delta: Delta = { docs: [], masked: new Set() }, index?: SearchIndex) {
    if (index) this.bind(index);
    this.apply(
      delta.docs,
      [...delta.masked].filter((id) => !delta.docs.some((d) => d.id === id)),
    );
  }

  /** Makes this the delta of `index` (statistics and vectors follow it); cheap when it already is. */
  bind(index: SearchIndex): void {
    if (this.index === index) return;
    this.index = index;
    this.hidden = { count: 0, len: [0, 0, 0], df: new Map(), surfaces: new Map() };
    this.hiddenAt = new Uint8Array(index.docs.length);
    for (const id of this.masked) this.hide(id);
    const before = this.vectors;
    if (before && before.dims !== index.dims) this.otherWidths.set(before.dims, before);
    const from = before?.dims === index.dims ? before : this.otherWidths.get(index.dims);
    this.otherWidths.delete(index.dims);
    this.vectors = new DeltaVectors(index.dims);
    this.liveVectors = 0;
    for (let s = 0; s < this.slots.length; s++) {
      const e = this.slots[s];
      if (e && this.live[s]) this.placeVector(e, s, from, s);
    }
    this.columnsBefore = this.cache.columns ?? this.columnsBefore;
    this.cache = {};
    this.keepIvf();
  }

  /** Takes the build's copy of `id` out of the statistics (once). */
  private hide(id: number): void {
    const index = this.index;
    if (!index) return;
    const i = index.byId.get(id);
    if (i === undefined || this.hiddenAt[i] === 1) return;
    this.hiddenAt[i] = 1;
    this.hidden.count += 1;
    const a = analyze(index.docs[i] as SearchDoc);
    for (let f = 0; f < 3; f++) this.hidden.len[f] = (this.hidden.len[f] as number) + (index.lens[f]?.[i] as number);
    // The terms the build counted it under: a build made before a change of analysis counted
    // others (its items' words are read anew at the next build), and a term it never counted
    // would be taken below none, to a negative document frequency (an IDF of NaN).
    for (const t of a.tf.keys()) if (index.indexedUnder(t, i)) this.hidden.df.set(t, (this.hidden.df.get(t) ?? 0) + 1);
    // And the words it writes otherwise than their stems, which the build counted the same way
    // (those whose stem it counted it under, as above: read with today's analysis, a build's copy
    // may write words the build never counted for it).
    const surface = index.parts.surface;
    for (const [w, t] of a.surface) {
      if (!index.indexedUnder(t, i)) continue;
      const at = firstAtLeast(surface, w);
      if (surface[at] === w) this.hidden.surfaces.set(w, (this.hidden.surfaces.get(w) ?? 0) + 1);
    }
  }

  /** How many of the build's documents the delta hides write each surface word (`ExtraVocab.hiddenSurfaces`). */
  get hiddenSurfaces(): ReadonlyMap<string, number> {
    return this.hidden.surfaces;
  }

  /**
   * Applies changed documents (newer versions replace older ones) and deletions. `trainLater`:
   * an inverted file the changes make due is trained by the caller (`keepIvfInTurns`), not here.
   */
  apply(docs: SearchDoc[], deleted: number[], trainLater = false): void {
    let changed = deleted.length > 0;
    for (const d of docs) {
      // Re-reads of an unchanged document (the clock-skew margin) cost nothing.
      const s = this.slotOf.get(d.id);
      if (s !== undefined && same(this.slots[s]?.doc, d)) continue;
      changed = true;
      this.remove(d.id);
      this.add(d, contentsOf(analyze(d)));
      this.masked.add(d.id);
      this.hide(d.id);
    }
    for (const id of deleted) {
      this.remove(id);
      this.masked.add(id);
      this.hide(id);
    }
    if (!changed) return;
    this.cache.docs = undefined;
    this.cache.stats = undefined;
    this.cache.norms = undefined;
    this.columnsBefore = this.cache.columns ?? this.columnsBefore;
    this.cache.columns = undefined;
    // The sorted vocabularies follow a few new or gone words in place (a request's worth of
    // changes), and are sorted again, when next asked for, after more.
    this.cache.sortedTerms = updateSorted(this.cache.sortedTerms, this.termsAdded, this.termsRemoved, this.postings);
    this.cache.sortedSurfaces = updateSorted(this.cache.sortedSurfaces, this.surfacesAdded, this.surfacesRemoved, this.surfaces);
    this.termsAdded = [];
    this.termsRemoved = [];
    this.surfacesAdded = [];
    this.surfacesRemoved = [];
    if (this.slots.length - this.liveCount > Math.max(BLOCK, this.liveCount)) this.compact();
    if (!trainLater) this.keepIvf();
  }

  /**
   * Trains the inverted file of a delta of IVF_MIN vectors or more (`nearest`), and again once
   * they have doubled since, or as many vectors as it was trained on came since (new items or
   * new versions, listed by centroids trained on others): as the changes are applied, so that it
   * costs the read that brought them (right after a bulk import, a container's first read of
   * every item), not a search of its own.
   */
  private keepIvf(): void {
    if (this.ivfDue()) this.vectors?.train(this.slotsWithVectors());
  }

  /**
   * `keepIvf` in turns of a few milliseconds (`trainIvfInTurns`), for changes applied with
   * `trainLater`: searches served meanwhile use the inverted file as it was (or scan, before the
   * first). The caller applies nothing meanwhile: the slots trained on are those of the call.
   */
  async keepIvfInTurns(): Promise<void> {
    if (this.ivfDue()) await this.vectors?.trainInTurns(this.slotsWithVectors());
  }

  /** Whether the inverted file is due: IVF_MIN vectors or more, and none yet, or doubled or as many changed since it was trained. */
  private ivfDue(): boolean {
    const vectors = this.vectors;
    if (!vectors || this.liveVectors < IVF_MIN) return false;
    const ivf = vectors.ivf;
    return !ivf || this.liveVectors >= 2 * ivf.trainedOn || ivf.addedSince >= ivf.trainedOn;
  }

  /**
   * Adds a document in the next slot, with its analysed contents; its vector is that of `from`'s
   * slot `fromSlot` when the document's is already in rows (renumbered slots).
   */
  private add(doc: SearchDoc, contents: Contents, from?: DeltaVectors, fromSlot = 0): void {
    const s = this.slots.length;
    const { terms, tfs, len, surface } = contents;
    const slot: Slot = { doc, terms, tfs, len, surface };
    this.slots.push(slot);
    this.slotOf.set(doc.id, s);
    const first = stopWordOpening(doc.name);
    if (first !== undefined) {
      let ids = this.byFirstNameWord.get(first);
      if (!ids) this.byFirstNameWord.set(first, (ids = new Map()));
      ids.set(doc.id, foldedName(doc.name));
    }
    if (s >= this.live.length) this.grow(s + 1);
    this.live[s] = 1;
    this.active[s] = doc.active ? 1 : 0;
    this.ids[s] = doc.id;
    if (doc.id > this.largestId) this.largestId = doc.id;
    if (doc.vector) this.latestVectorMs = Math.max(this.latestVectorMs, vectorSavedMs(doc));
    this.liveCount += 1;
    for (let f = 0; f < 3; f++) {
      const l = len[f] as number;
      (this.lens[f] as Float64Array)[s] = l;
      this.sumLen[f] = (this.sumLen[f] as number) + l;
    }
    for (let j = 0; j < terms.length; j++) {
      const t = terms[j] as string;
      let p = this.postings.get(t);
      if (!p) {
        this.postings.set(t, (p = { docs: new Uint32Array(2), tfs: new Uint16Array(6), n: 0, term: t, df: 0 }));
        this.termsAdded.push(t);
      }
      p.df += 1;
      terms[j] = p.term;
      if (p.n === p.docs.length) {
        p.docs = copyInto(new Uint32Array(2 * p.n), p.docs);
        p.tfs = copyInto(new Uint16Array(6 * p.n), p.tfs);
      }
      p.docs[p.n] = s;
      for (let f = 0; f < 3; f++) p.tfs[p.n * 3 + f] = tfs[j * 3 + f] as number;
      p.n += 1;
    }
    for (let k = 0; k < surface.length; k += 2) {
      const w = surface[k] as string;
      const t = surface[k + 1] as string;
      const e = this.surfaces.get(w);
      if (e) e.n += 1;
      else {
        this.surfaces.set(w, { stem: t, n: 1 });
        this.surfacesAdded.push(w);
      }
    }
    this.placeVector(slot, s, from, fromSlot);
  }

  /**
   * Puts the vector of the document in `slot` (slot number `s`) in the delta's rows, when the delta
   * has them (once bound): from its float values, which it then lets go (`IN_ROWS`), or, when they
   * are gone already, from `from`'s rows of the same width (its slot `fromSlot`).
   */
  private placeVector(slot: Slot, s: number, from: DeltaVectors | null | undefined, fromSlot: number): void {
    const vectors = this.vectors;
    if (!vectors) return;
    const v = slot.doc.vector;
    const has = v === IN_ROWS ? from?.dims === vectors.dims && vectors.copy(s, from, fromSlot) : vectors.set(s, v);
    if (has) this.liveVectors += 1;
    if (v !== null && v !== IN_ROWS && v.length === vectors.dims) slot.doc = { ...slot.doc, vector: IN_ROWS };
  }

  private remove(id: number): void {
    const s = this.slotOf.get(id);
    if (s === undefined) return;
    const old = this.slots[s] as Slot;
    this.slotOf.delete(id);
    const first = stopWordOpening(old.doc.name);
    const named = first === undefined ? undefined : this.byFirstNameWord.get(first);
    if (named?.delete(id) && named.size === 0) this.byFirstNameWord.delete(first as string);
    this.live[s] = 0;
    this.liveCount -= 1;
    if (this.vectors?.has(s)) {
      this.liveVectors -= 1;
      this.vectors.unlist(s);
    }
    this.slots[s] = undefined;
    for (let f = 0; f < 3; f++) this.sumLen[f] = (this.sumLen[f] as number) - (old.len[f] as number);
    for (const t of old.terms) {
      const p = this.postings.get(t);
      if (p && --p.df === 0) {
        this.postings.delete(t);
        this.termsRemoved.push(t);
      }
    }
    for (let k = 0; k < old.surface.length; k += 2) {
      const w = old.surface[k] as string;
      const e = this.surfaces.get(w);
      if (e && --e.n === 0) {
        this.surfaces.delete(w);
        this.surfacesRemoved.push(w);
      }
    }
  }

  private grow(min: number): void {
    const size = Math.max(min, this.live.length * 2);
    this.live = copyInto(new Uint8Array(size), this.live);
    this.active = copyInto(new Uint8Array(size), this.active);
    this.ids = copyInto(new Float64Array(size), this.ids);
    this.lens = this.lens.map((l) => copyInto(new Float64Array(size), l)) as [Float64Array, Float64Array, Float64Array];
  }

  /** Renumbers the live documents' slots from 0 (the dead ones dropped). */
  private compact(): void {
    // Each live slot, and its number before (where its vector is).
    const keep: [Slot, number][] = [];
    this.slots.forEach((e, s) => {
      if (e) keep.push([e, s]);
    });
    this.slotOf.clear();
    this.slots = [];
    this.live = new Uint8Array(Math.max(64, keep.length));
    this.active = new Uint8Array(this.live.length);
    this.ids = new Float64Array(this.live.length);
    this.lens = [new Float64Array(this.live.length), new Float64Array(this.live.length), new Float64Array(this.live.length)];
    this.postings = new Map();
    this.liveCount = 0;
    this.liveVectors = 0;
    this.sumLen.fill(0);
    this.surfaces.clear();
    const before = this.vectors ?? undefined;
    if (this.index) this.vectors = new DeltaVectors(this.index.dims);
    for (const [e, s] of keep) this.add(e.doc, e, before, s);
    // The rows kept of other widths follow the slots' new numbers.
    for (const [dims, old] of this.otherWidths) {
      const renumbered = new DeltaVectors(dims);
      keep.forEach(([, s], to) => renumbered.copy(to, old, s));
      this.otherWidths.set(dims, renumbered);
    }
    this.cache = {};
    this.columnsBefore = undefined;
  }

  /** Whether any slot is dead (its document replaced or deleted since it was added): their postings stay until the slots are renumbered. */
  get hasDeadSlots(): boolean {
    return this.liveCount < this.slots.length;
  }

  /** Slots in use (live or dead): delta keys run from the build's size up to it. */
  get slotCount(): number {
    return this.slots.length;
  }

  /** The live slots whose documents' names begin with `word` (as `SearchIndex.namesBeginning`). */
  namesBeginning(word: string): NamesBeginning {
    const named = this.byFirstNameWord.get(word);
    if (!named) return NO_NAMES;
    const keys: number[] = [];
    const names: string[] = [];
    for (const [id, name] of named) {
      const s = this.slotOf.get(id);
      if (s === undefined) continue;
      keys.push(s);
      names.push(name);
    }
    return { keys, names };
  }

  /** The document of a live slot. */
  docAt(slot: number): SearchDoc {
    return (this.slots[slot] as Slot).doc;
  }

  /** A term's posting list over the delta's slots (dead ones included: check `live`). */
  postingsOf(term: string): Postings | undefined {
    const p = this.postings.get(term);
    return p ? { docs: p.docs, tfs: p.tfs, start: 0, end: p.n, keepAs: p } : undefined;
  }

  similarityTo(q: Float32Array): (slot: number, n?: number) => number {
    return this.vectors ? this.vectors.similarityTo(q) : () => 0;
  }

  /** `similarityTo(q)` of many slots at once (`Similarities`). */
  similaritiesTo(q: Float32Array): Similarities {
    return this.vectors ? this.vectors.similaritiesTo(q) : (_, count, out) => out.fill(0, 0, count);
  }

  vectorOf(slot: number): Float32Array | null {
    return this.vectors?.vectorOf(slot) ?? null;
  }

  /** Where the int8 vector of the delta's current version of `doc` is (undefined when `doc` is not that version, the object `get` gives, or has no vector). */
  vectorRowOf(doc: SearchDoc): VectorRow | undefined {
    const s = this.slotOf.get(doc.id);
    return s === undefined || this.slots[s]?.doc !== doc ? undefined : this.vectors?.vectorRow(s);
  }

  /**
   * The k live slots with a vector nearest to q among those `accept`ed, found as a build finds
   * them among as many: below IVF_MIN vectors every one is a candidate (exact, or coarse then
   * exact: `nearestOf`); from IVF_MIN, those of the lists closest to the query in the delta's own
   * inverted file (`keepIvf`), and while fewer than k were accepted, further lists, or the slots a
   * selective filter may pass (`passing`) when scoring those costs less (as `SearchIndex.nearest`).
   */
  nearest(q: Float32Array, k: number, accept: (slot: number) => boolean, passing?: () => Uint32Array | undefined): TopK {
    const vectors = this.vectors;
    const take = (s: number) => this.live[s] === 1 && accept(s);
    const ivf = vectors?.ivf;
    if (!vectors || !ivf || this.liveVectors < IVF_MIN) {
      const count = this.slots.length;
      // A pass scans the rows (the compact ones when coarse) a block at a time.
      const firstPass = (n: number, top: TopK) => vectors?.scan(q, n < vectors.dims, count, take, top);
      return nearestOf(this.liveCount, vectors?.dims ?? 0, k, firstPass, this.similaritiesTo(q));
    }
    const n = this.liveCount;
    const lists = probeLists(ivf.lists, ivf.toCentroid(q), k, n);
    const firstPass = (dims: number, top: TopK) => {
      const coarse = dims < vectors.dims;
      const query = vectors.queryFor(q, coarse);
      // The probed lists, then the slots a selective filter may pass or further lists, as a build's (`scanLists`).
      scanLists(lists, n, top, passing, (list) => vectors.scanSlots(query, coarse, list, take, top));
    };
    return nearestOf(lists.candidates, vectors.dims, k, firstPass, this.similaritiesTo(q));
  }

  /** The live slots with a vector. */
  private slotsWithVectors(): number[] {
    const out: number[] = [];
    for (let s = 0; s < this.slots.length; s++) if (this.live[s] === 1 && this.vectors?.has(s)) out.push(s);
    return out;
  }

  /**
   * The statistics of the build and the delta together: what one build over the same items would
   * count (documents, each field's total length, document frequencies).
   */
  stats(): CollectionStats {
    if (this.cache.stats) return this.cache.stats;
    const index = this.index;
    const hidden = this.hidden;
    const n = (index?.docs.length ?? 0) - hidden.count + this.liveCount;
    const sums = [0, 1, 2].map((f) => (index?.sumLen[f] ?? 0) - (hidden.len[f] as number) + (this.sumLen[f] as number));
    const stats: CollectionStats = {
      n,
      avgLen: averageLengths(sums, n),
      df: (t) => (index?.df(t) ?? 0) - (hidden.df.get(t) ?? 0) + (this.postings.get(t)?.df ?? 0),
    };
    this.cache.stats = stats;
    return stats;
  }

  /** The slots' field norms under the statistics of the build and the delta together (`stats()`). */
  norms(): FieldNorms {
    return (this.cache.norms = FieldNorms.of(this.lens, this.slots.length, this.stats().avgLen, this.cache.norms));
  }

  /** The terms live documents of the delta hold. */
  get terms(): ReadonlyMap<string, unknown> {
    return this.postings;
  }

  liveDf(term: string): number {
    return this.stats().df(term);
  }

  sortedTerms(): readonly string[] {
    return (this.cache.sortedTerms ??= [...this.postings.keys()].sort(byTerm));
  }

  sortedSurfaces(): readonly string[] {
    return (this.cache.sortedSurfaces ??= [...this.surfaces.keys()].sort(byTerm));
  }

  /**
   * The live slots' metadata as columns, per key or field asked for (until the delta changes;
   * dead slots hold none), each made from the same key's column before the last changes when
   * there is one.
   */
  columns(): ColumnCache {
    if (!this.cache.columns) {
      const before = this.columnsBefore;
      this.cache.columns = new ColumnCache(this.slots.length, (s) => (this.live[s] === 1 ? this.slots[s]?.doc : undefined), before && { cache: before, live: this.live });
      this.columnsBefore = undefined;
    }
    return this.cache.columns;
  }

  /** The live documents. */
  get docs(): SearchDoc[] {
    return (this.cache.docs ??= this.slots.filter((e): e is Slot => e !== undefined).map((e) => e.doc));
  }

  get(id: number): SearchDoc | undefined {
    const s = this.slotOf.get(id);
    return s === undefined ? undefined : this.slots[s]?.doc;
  }
}

/**
 * A sorted vocabulary after words came and went: updated in place for a few (each is a binary
 * search and a move), undefined (sorted anew when next needed) for many. Words that came and went
 * again in between are settled by `now`.
 */
function updateSorted(sorted: string[] | undefined, added: string[], removed: string[], now: { has(w: string): boolean }): string[] | undefined {
  if (!sorted || added.length + removed.length > 256) return added.length + removed.length ? undefined : sorted;
  for (const w of removed) {
    const i = firstAtLeast(sorted, w);
    if (sorted[i] === w && !now.has(w)) sorted.splice(i, 1);
  }
  for (const w of added) {
    const i = firstAtLeast(sorted, w);
    if (sorted[i] !== w && now.has(w)) sorted.splice(i, 0, w);
  }
  return sorted;
}

function same(a: SearchDoc | undefined, b: SearchDoc): boolean {
  return (
    a !== undefined &&
    a.updated_at === b.updated_at &&
    a.embedding_updated_at === b.embedding_updated_at &&
    a.active === b.active &&
    (a.vector === null) === (b.vector === null) &&
    a.name === b.name &&
    a.description === b.description &&
    JSON.stringify(a.metadata) === JSON.stringify(b.metadata)
  );
}

/** `to`, with `from` copied into its start (a slot array grown). */
function copyInto<A extends Uint8Array | Uint16Array | Uint32Array | Float64Array>(to: A, from: A): A {
  to.set(from);
  return to;
}
