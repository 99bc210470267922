/** The inverted file over unit vectors (k-means centroids, one list of documents per centroid). */
import { runInTurns, runNow } from '../concurrency.ts';
import type { TopK } from '../top-k.ts';
import { normalize } from './embedding.ts';
import { Int8Rows } from './int8-vectors.ts';

/** Inverted file over unit vectors: k-means centroids and one list of doc indexes per centroid. */
export interface Ivf {
  centroids: Float32Array;
  lists: Uint32Array[];
}

/** Below this many vectors a build (or a delta: delta.ts) has no IVF: nearest neighbours are exact. */
export const IVF_MIN = 20_000;

/**
 * The dot products of items with one centroid: out[j] is that of item items[j] (j < items.length)
 * with `centroid`, a float vector (quantised for the kernel as a query is: 0 for a zero one).
 */
export type CentroidDots = (centroid: Float32Array, items: readonly number[], out: Float64Array) => void;

/** The IVF of a build's int8 vectors (null below IVF_MIN vectors): six rounds of k-means on a deterministic sample. */
export function buildIvf(q8: Int8Array, scales: Float32Array, hasVector: Uint8Array, dims: number): Ivf | null {
  const withVec: number[] = [];
  for (let i = 0; i < hasVector.length; i++) if (hasVector[i]) withVec.push(i);
  // Up to IVF_MIN vectors every search compares the query with each (exact, and ≈ 1 ms).
  if (withVec.length < IVF_MIN) return null;
  // Assignments score every centroid against every item with the SIMD kernel (a copy of the rows).
  const rows = new Int8Rows(q8, dims);
  const dots: CentroidDots = (centroid, items, out) => {
    const dot = rows.query(centroid);
    for (let j = 0; j < items.length; j++) out[j] = dot(items[j] as number);
  };
  return trainIvf(withVec, dims, (i, d) => (q8[i * dims + d] as number) * (scales[i] as number), dots);
}

/**
 * An IVF over the vectors `withVec` (keys; `at(i, d)` is component d of vector i, `dots` their
 * dot products with a centroid): six rounds of k-means on a deterministic sample of them, then
 * each listed under its centroid. The same keys, values and dot products give the same IVF.
 */
export function trainIvf(withVec: readonly number[], dims: number, at: (i: number, d: number) => number, dots: CentroidDots): Ivf {
  return runNow(ivfTraining(withVec, dims, at, dots));
}

/**
 * `trainIvf` in turns of a few milliseconds, the thread's other work served between them (0.4-1.9
 * s in one go for a delta of 20,000 to 80,000 vectors, right after a bulk import): the same IVF.
 */
export function trainIvfInTurns(withVec: readonly number[], dims: number, at: (i: number, d: number) => number, dots: CentroidDots): Promise<Ivf> {
  return runInTurns(ivfTraining(withVec, dims, at, dots));
}

/** Multiply-adds (items x dimensions) of centroid dot products between two turns of `ivfTraining`: about 2-5 ms. */
const WORK_PER_TURN = 4_000_000;

/** `trainIvf`'s work, pausing (a `yield`) after about WORK_PER_TURN of it; returns the IVF. */
function* ivfTraining(withVec: readonly number[], dims: number, at: (i: number, d: number) => number, dots: CentroidDots): Generator<void, Ivf, void> {
  const nlist = Math.max(8, Math.round(Math.sqrt(withVec.length) / 2));
  // Deterministic sample for training the centroids.
  let seed = 12345;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const sample = withVec.length > nlist * 40 ? Array.from({ length: nlist * 40 }, () => withVec[Math.floor(rand() * withVec.length)] as number) : withVec;
  const centroids = new Float32Array(nlist * dims);
  for (let c = 0; c < nlist; c++) {
    const s = sample[Math.floor(rand() * sample.length)] as number;
    for (let d = 0; d < dims; d++) centroids[c * dims + d] = at(s, d);
  }
  const assign = (items: readonly number[]) => closestCentroids(dots, centroids, nlist, dims, items);
  for (let iter = 0; iter < 6; iter++) {
    const sums = new Float32Array(nlist * dims);
    const of = yield* assign(sample);
    sample.forEach((i, j) => {
      const c = of[j] as number;
      for (let d = 0; d < dims; d++) sums[c * dims + d] = (sums[c * dims + d] as number) + at(i, d);
    });
    for (let c = 0; c < nlist; c++) {
      const v = normalize(sums.subarray(c * dims, (c + 1) * dims));
      if (v.some((x) => x !== 0)) centroids.set(v, c * dims);
    }
    yield;
  }
  const lists: number[][] = Array.from({ length: nlist }, () => []);
  const of = yield* assign(withVec);
  withVec.forEach((i, j) => (lists[of[j] as number] as number[]).push(i));
  return { centroids, lists: lists.map((l) => Uint32Array.from(l)) };
}

/** For each item, the centroid of the highest dot product (ties: the lower centroid); pauses as `ivfTraining` does. */
function* closestCentroids(dots: CentroidDots, centroids: Float32Array, nlist: number, dims: number, items: readonly number[]): Generator<void, Int32Array, void> {
  const best = new Int32Array(items.length);
  const bestScore = new Float64Array(items.length).fill(-Infinity);
  const scores = new Float64Array(items.length);
  let work = 0;
  for (let c = 0; c < nlist; c++) {
    dots(centroids.subarray(c * dims, (c + 1) * dims), items, scores);
    for (let j = 0; j < items.length; j++) {
      const score = scores[j] as number;
      if (score > (bestScore[j] as number)) {
        bestScore[j] = score;
        best[j] = c;
      }
    }
    work += items.length * dims;
    if (work >= WORK_PER_TURN) {
      work = 0;
      yield;
    }
  }
  return best;
}

/**
 * The lists a query probes: those of the centroids closest to it (`toCentroid`: its similarity
 * to centroid c), the closest ~5 % but no more than about max(4k, n / 12) candidates (lists are
 * uneven, and one dense region can hold a tenth of a catalog). Also how many documents they hold,
 * and the other lists, closest first: where a filtered search goes on while too few of the probed
 * lists' documents pass its filter.
 */
export function probeLists<L extends ArrayLike<number>>(lists: readonly L[], toCentroid: (c: number) => number, k: number, n: number): { probed: L[]; candidates: number; rest: L[] } {
  const nlist = lists.length;
  const sims = new Float64Array(nlist);
  for (let c = 0; c < nlist; c++) sims[c] = toCentroid(c);
  const order = Array.from({ length: nlist }, (_, c) => c).sort((a, b) => (sims[b] as number) - (sims[a] as number));
  const probes = Math.max(4, Math.ceil(nlist / 20));
  const budget = Math.max(k * 4, n / 12);
  const probed: L[] = [];
  let candidates = 0;
  let at = 0;
  for (; at < nlist; at++) {
    if (probed.length === probes || candidates >= budget) break;
    const list = lists[order[at] as number] as L;
    probed.push(list);
    candidates += list.length;
  }
  return { probed, candidates, rest: order.slice(at).map((c) => lists[c] as L) };
}

/**
 * Scores a query's probed lists (`probeLists`) into `top` with `scan`; then, while `top` is not
 * full (a filter that too few of the probed lists' documents pass), the next lists, closest
 * first, until it is full or every list is read (a filtered search finds the nearest documents
 * that pass it, not only those of the unfiltered search's lists). When the filter's columns can
 * tell which of the n documents may pass (`passing`), each of them is scored instead, if that
 * costs less: the probed lists passed `found` of `candidates`, so about m = found × n /
 * candidates pass, and the lists would read about (k - found) × n / m more to find the rest of
 * the k, where the passing ones cost m scored plus a verdict of every document and their list, at
 * most about a quarter of a document's scoring each (measured on the 100K catalog, in one
 * process: 0.3 ms for 100,000 rows' verdicts and list of one brand, 0.7-1.2 ms with a range
 * clause, whose pass reads every row; 4.3-6.6 ms for 100,000 rows scored). A rare brand's few
 * hundred rows, not most lists. A build and a delta search their lists alike through this.
 */
export function scanLists<L extends ArrayLike<number>>(
  { probed, candidates, rest }: { probed: L[]; candidates: number; rest: L[] },
  n: number,
  top: TopK,
  passing: (() => Uint32Array | undefined) | undefined,
  scan: (list: L | Uint32Array) => void,
): void {
  for (const list of probed) scan(list);
  if (top.full || rest.length === 0) return;
  const m = (top.size * n) / candidates;
  const passed = passing && m * m + (m * n) / 4 <= (top.k - top.size) * n ? passing() : undefined;
  if (passed) {
    top.clear();
    scan(passed);
    return;
  }
  for (const list of rest) {
    if (top.full) break;
    scan(list);
  }
}
