/**
 * The one top-k selection of the codebase (search ranking, nearest neighbours, recommendations,
 * evaluation): the k best (key, score) pairs seen, score descending, ties to the lower tie-break
 * (the key itself unless the caller names one, such as an item id), so that the same pairs give
 * the same result in whatever order they arrive.
 */
export class TopK {
  // A min-heap of the k best so far (its root the worst of them) in typed arrays: pushing
  // allocates nothing, and a sift moves one hole instead of swapping pairs.
  private readonly keys: Float64Array;
  private readonly scores: Float64Array;
  private readonly ties: Float64Array;
  /** How many pairs are kept (at most k). */
  size = 0;

  constructor(readonly k: number) {
    const capacity = Math.max(0, k);
    this.keys = new Float64Array(capacity);
    this.scores = new Float64Array(capacity);
    this.ties = new Float64Array(capacity);
  }

  /** Forgets every pair kept. */
  clear(): void {
    this.size = 0;
  }

  /** Whether k pairs are kept: a new one enters only by beating the worst. */
  get full(): boolean {
    return this.size >= this.k;
  }

  /** The lowest score kept (meaningful once `full`). */
  get worstScore(): number {
    return this.scores[0] as number;
  }

  /** Whether a pair of this score and tie-break would be kept if pushed now. */
  admits(score: number, tie: number): boolean {
    if (this.size < this.k) return true;
    if (this.k <= 0) return false;
    const worst = this.scores[0] as number;
    return score > worst || (score === worst && tie < (this.ties[0] as number));
  }

  push(key: number, score: number, tie: number = key): void {
    if (this.size < this.k) this.siftUp(this.size++, key, score, tie);
    else if (this.admits(score, tie)) this.siftDown(key, score, tie);
  }

  /** Places a new pair from leaf `at` up: a parent moves down while the pair ranks above it. */
  private siftUp(at: number, key: number, score: number, tie: number): void {
    const { scores, ties } = this;
    let i = at;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const ps = scores[p] as number;
      if (ps < score || (ps === score && (ties[p] as number) >= tie)) break;
      this.move(p, i);
      i = p;
    }
    this.place(i, key, score, tie);
  }

  /** Replaces the root (the worst kept) with a better pair and sifts it down to its place. */
  private siftDown(key: number, score: number, tie: number): void {
    const { scores, ties } = this;
    const n = this.size;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && worse(scores, ties, r, l) ? r : l;
      const ms = scores[m] as number;
      if (ms > score || (ms === score && (ties[m] as number) <= tie)) break;
      this.move(m, i);
      i = m;
    }
    this.place(i, key, score, tie);
  }

  /** Copies heap entry `from` to position `to` (a sift moves one hole, never swapping pairs). */
  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from] as number;
    this.scores[to] = this.scores[from] as number;
    this.ties[to] = this.ties[from] as number;
  }

  private place(i: number, key: number, score: number, tie: number): void {
    this.keys[i] = key;
    this.scores[i] = score;
    this.ties[i] = tie;
  }

  /** Each kept (key, score), in no particular order. */
  forEach(fn: (key: number, score: number) => void): void {
    for (let i = 0; i < this.size; i++) fn(this.keys[i] as number, this.scores[i] as number);
  }

  /** The kept keys, in no particular order (a view, valid until the next push). */
  keyView(): Float64Array {
    return this.keys.subarray(0, this.size);
  }

  /** Each kept (key, score), best first. */
  forEachBest(fn: (key: number, score: number) => void): void {
    const { keys, scores, ties } = this;
    const order = new Int32Array(this.size);
    for (let i = 0; i < order.length; i++) order[i] = i;
    order.sort((a, b) => (scores[b] as number) - (scores[a] as number) || (ties[a] as number) - (ties[b] as number));
    for (const i of order) fn(keys[i] as number, scores[i] as number);
  }

  /** The kept keys, best first. */
  bestKeys(): number[] {
    const out: number[] = [];
    this.forEachBest((key) => out.push(key));
    return out;
  }
}

/** Whether heap entry a ranks below entry b (a lower score, or the same and a later tie-break). */
function worse(scores: Float64Array, ties: Float64Array, a: number, b: number): boolean {
  const sa = scores[a] as number;
  const sb = scores[b] as number;
  return sa < sb || (sa === sb && (ties[a] as number) > (ties[b] as number));
}

/**
 * The indexes of the `k` highest values of `scores` that `take` accepts, best first (ties by
 * index ascending). Values that are NaN or -Infinity are never taken.
 */
export function topIndexes(scores: ArrayLike<number>, k: number, take?: (i: number) => boolean): number[] {
  if (k <= 0) return [];
  const top = new TopK(k);
  for (let i = 0; i < scores.length; i++) {
    const v = scores[i] as number;
    if (!(v > -Infinity) || (take && !take(i))) continue;
    top.push(i, v);
  }
  return top.bestKeys();
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
