import { seededRandom } from '../random.ts';
import type { Dataset } from './dataset.ts';

/** A user's history as the models read it: item indexes and weights. */
export interface History {
  items: ArrayLike<number>;
  weights: ArrayLike<number>;
  /**
   * The row of the model artifact's user histories this history is, exactly (the same items and
   * weights, nothing added or left out): a model that stored what it computes from that row
   * (iALS: the user's folded-in vector) may answer from it.
   */
  row?: number;
}

/** A trained model: scores every item for a history, without retraining. */
export interface Model {
  readonly algorithm: string;
  readonly itemCount: number;
  /** Every item's score, written to `into` (itemCount values, overwritten) when given. */
  score(h: History, into?: Float32Array): Float32Array;
}

export interface TrainHooks {
  /** Called between steps; returning true stops training (the run ends Stopped). */
  shouldStop?: () => boolean;
  progress?: (fraction: number, message: string) => void;
}

export class Stopped extends Error {
  override name = 'Stopped';
}

/** Popularity: weighted interaction counts, the same list for everyone. */
export function trainPopularity(ds: Dataset): Model {
  return popularityModel(Float32Array.from(ds.itemWeight));
}

/** The popularity model of these per-item scores. */
export function popularityModel(pop: Float32Array): Model {
  return { algorithm: 'popularity', itemCount: pop.length, score: (_h, into) => (into ? (into.set(pop), into) : Float32Array.from(pop)) };
}

/** A sparse item-item model: for each item, its top neighbours and weights. */
export class ItemItemModel implements Model {
  constructor(
    readonly algorithm: string,
    readonly itemCount: number,
    /** neighbours of item i: nbr[off[i]..off[i+1]) with weights w. */
    readonly off: Uint32Array,
    readonly nbr: Uint32Array,
    readonly w: Float32Array,
  ) {}

  score(h: History, into?: Float32Array): Float32Array {
    const s = into ? into.fill(0) : new Float32Array(this.itemCount);
    for (let k = 0; k < h.items.length; k++) {
      const j = h.items[k] as number;
      const hw = h.weights[k] as number;
      for (let p = this.off[j] as number; p < (this.off[j + 1] as number); p++) {
        const i = this.nbr[p] as number;
        s[i] = (s[i] as number) + hw * (this.w[p] as number);
      }
    }
    return s;
  }
}

/** Keeps the `k` largest entries of a dense row. */
function topOfRow(row: Float64Array | Float32Array, k: number, skip: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < row.length; i++) {
    const v = row[i] as number;
    if (i === skip || v <= 0) continue;
    if (out.length < k) {
      out.push([i, v]);
      if (out.length === k) out.sort((a, b) => b[1] - a[1]);
    } else if (v > (out[k - 1] as [number, number])[1]) {
      let lo = 0;
      let hi = k - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((out[mid] as [number, number])[1] >= v) lo = mid + 1;
        else hi = mid;
      }
      out.splice(lo, 0, [i, v]);
      out.pop();
    }
  }
  return out.sort((a, b) => b[1] - a[1]);
}

function packRows(rows: [number, number][][], n: number): { off: Uint32Array; nbr: Uint32Array; w: Float32Array } {
  const off = new Uint32Array(n + 1);
  let total = 0;
  rows.forEach((r, i) => {
    off[i] = total;
    total += r.length;
  });
  off[n] = total;
  const nbr = new Uint32Array(total);
  const w = new Float32Array(total);
  rows.forEach((r, i) => r.forEach(([j, v], k) => ((nbr[(off[i] as number) + k] = j), (w[(off[i] as number) + k] = v))));
  return { off, nbr, w };
}

/** Item co-occurrence counts (binary) over users, dense, for `m` selected items. */
function cooccurrence(ds: Dataset, sel: Int32Array, m: number): Float64Array {
  const g = new Float64Array(m * m);
  const local: number[] = [];
  for (let u = 0; u < ds.users.length; u++) {
    local.length = 0;
    const { items } = ds.row(u);
    for (let k = 0; k < items.length; k++) {
      const li = sel[items[k] as number] as number;
      if (li >= 0) local.push(li);
    }
    for (const a of local) {
      const o = a * m;
      for (const b of local) g[o + b] = (g[o + b] as number) + 1;
    }
  }
  return g;
}

/** Item-kNN: cosine over co-occurrence, every neighbour (the baseline of the literature). */
export function trainItemKnn(ds: Dataset, hooks: TrainHooks = {}, neighbours = Infinity): Model {
  const n = ds.items.length;
  const sel = Int32Array.from({ length: n }, (_, i) => i);
  const g = cooccurrence(ds, sel, n);
  const rows: [number, number][][] = [];
  for (let i = 0; i < n; i++) {
    if (hooks.shouldStop?.()) throw new Stopped('stopped');
    const ni = g[i * n + i] as number;
    const row = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const c = g[i * n + j] as number;
      if (c > 0 && j !== i) row[j] = c / Math.sqrt(ni * (g[j * n + j] as number));
    }
    rows.push(topOfRow(row, Math.min(neighbours, n), i));
  }
  const p = packRows(rows, n);
  return new ItemItemModel('item_knn', n, p.off, p.nbr, p.w);
}

/**
 * EASE (Steck 2019): B = I - P diag(1/diag P), P = (XᵀX + λI)⁻¹, zero diagonal. O(m³) in the
 * number of items m, so it is fitted on the `maxItems` most popular items (the rest keep no
 * weights and are reached through the serving layer's content and popularity fallbacks), and
 * stored sparse: each item's `neighbours` strongest weights.
 */
export function trainEase(ds: Dataset, opts: { lambda?: number; maxItems?: number; neighbours?: number } = {}, hooks: TrainHooks = {}): Model {
  const lambda = opts.lambda ?? 300;
  const n = ds.items.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (ds.itemCount[b] as number) - (ds.itemCount[a] as number));
  const chosen = order.slice(0, Math.min(opts.maxItems ?? 2500, n)).filter((i) => (ds.itemCount[i] as number) > 0);
  const m = chosen.length;
  const sel = new Int32Array(n).fill(-1);
  chosen.forEach((i, k) => (sel[i] = k));
  const g = cooccurrence(ds, sel, m);
  for (let k = 0; k < m; k++) g[k * m + k] = (g[k * m + k] as number) + lambda;
  hooks.progress?.(0.1, `Gram matrix of ${m} items`);
  const p = invertSpd(g, m, hooks);
  hooks.progress?.(0.8, 'inverted');
  const rows: [number, number][][] = Array.from({ length: n }, () => []);
  const col = new Float64Array(m);
  for (let a = 0; a < m; a++) {
    // Row a of B: B[a][b] = -P[a][b] / P[b][b]; "user has a" adds B[a][b] to item b.
    for (let b = 0; b < m; b++) col[b] = a === b ? 0 : -(p[a * m + b] as number) / (p[b * m + b] as number);
    rows[chosen[a] as number] = topOfRow(col, opts.neighbours ?? 200, a).map(([b, v]) => [chosen[b] as number, v]);
  }
  const packed = packRows(rows, n);
  return new ItemItemModel('ease', n, packed.off, packed.nbr, packed.w);
}

/**
 * Σ over k < len of x[xo + k]·y[yo + k] and of z[zo + k]·y[yo + k], at once: each y is read once
 * for both, and the four running sums keep the floating-point unit busy where one sum would
 * wait on the previous addition every step (the inversion runs ≈1.7x faster).
 */
function dot2(x: Float64Array, xo: number, z: Float64Array, zo: number, y: Float64Array, yo: number, len: number): [number, number] {
  let a0 = 0;
  let a1 = 0;
  let b0 = 0;
  let b1 = 0;
  let k = 0;
  for (; k + 1 < len; k += 2) {
    const y0 = y[yo + k] as number;
    const y1 = y[yo + k + 1] as number;
    a0 += (x[xo + k] as number) * y0;
    a1 += (x[xo + k + 1] as number) * y1;
    b0 += (z[zo + k] as number) * y0;
    b1 += (z[zo + k + 1] as number) * y1;
  }
  if (k < len) {
    const y0 = y[yo + k] as number;
    a0 += (x[xo + k] as number) * y0;
    b0 += (z[zo + k] as number) * y0;
  }
  return [a0 + a1, b0 + b1];
}

/**
 * Inverse of a symmetric positive definite matrix (row-major), by Cholesky. Each loop works on
 * two rows (or columns) at once through `dot2`; where the pair's ranges differ by one, the
 * triangular factors' zeros make them equal.
 */
export function invertSpd(a: Float64Array, n: number, hooks: TrainHooks = {}): Float64Array {
  const l = Float64Array.from(a);
  // Cholesky: lower triangle of l holds L (the strict upper triangle is zeroed first).
  for (let i = 0; i < n; i++) l.fill(0, i * n + i + 1, i * n + n);
  for (let j = 0; j < n; j++) {
    if (j % 64 === 0 && hooks.shouldStop?.()) throw new Stopped('stopped');
    const oj = j * n;
    const d = (l[oj + j] as number) - (dot2(l, oj, l, oj, l, oj, j)[0] as number);
    if (d <= 0) throw new Error('matrix is not positive definite');
    const ljj = Math.sqrt(d);
    l[oj + j] = ljj;
    for (let i = j + 1; i < n; i += 2) {
      const oi = i * n;
      const oi1 = i + 1 < n ? oi + n : oi;
      const [s0, s1] = dot2(l, oi, l, oi1, l, oj, j);
      l[oi + j] = ((l[oi + j] as number) - s0) / ljj;
      if (i + 1 < n) l[oi1 + j] = ((l[oi1 + j] as number) - s1) / ljj;
    }
  }
  // Columns of inv(L), each stored as a row of t (t[j][k] = inv(L)[k][j], zero for k < j):
  // forward substitution reads rows of L and the columns being built, all contiguous. Columns j
  // and j + 1 together (t[j + 1][j] is zero, so both sums can start at k = j).
  const t = new Float64Array(n * n);
  for (let j = 0; j < n; j += 2) {
    if (j % 64 === 0 && hooks.shouldStop?.()) throw new Stopped('stopped');
    const oj = j * n;
    const two = j + 1 < n;
    const oj1 = two ? oj + n : oj;
    t[oj + j] = 1 / (l[oj + j] as number);
    if (two) {
      t[oj + j + 1] = -((l[oj + n + j] as number) * (t[oj + j] as number)) / (l[oj + n + j + 1] as number);
      t[oj1 + j + 1] = 1 / (l[oj + n + j + 1] as number);
    }
    for (let i = j + 2; i < n; i++) {
      const oi = i * n;
      const lii = l[oi + i] as number;
      const [s0, s1] = dot2(t, oj + j, t, oj1 + j, l, oi + j, i - j);
      t[oj + i] = -s0 / lii;
      if (two) t[oj1 + i] = -s1 / lii;
    }
  }
  // A⁻¹ = inv(L)ᵀ inv(L): entry (i, j) is the dot product of rows i and j of t from max(i, j).
  // Rows i and i + 1 together (row i + 1 of t is zero at k = i).
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i += 2) {
    if (i % 64 === 0 && hooks.shouldStop?.()) throw new Stopped('stopped');
    const oi = i * n;
    const two = i + 1 < n;
    const oi1 = two ? oi + n : oi;
    for (let j = 0; j <= (two ? i + 1 : i); j++) {
      const oj = j * n;
      const [s0, s1] = dot2(t, oi + i, t, oi1 + i, t, oj + i, n - i);
      if (j <= i) {
        out[oi + j] = s0;
        out[oj + i] = s0;
      }
      if (two) {
        out[oi1 + j] = s1;
        out[oj + i + 1] = s1;
      }
    }
  }
  return out;
}

/** A factor model: item factors, and a user vector folded in from the history at serving time. */
export class FactorModel implements Model {
  constructor(
    readonly algorithm: string,
    readonly itemCount: number,
    readonly factors: number,
    readonly q: Float32Array,
    readonly bias: Float32Array,
  ) {}

  /** Fold-in: the user vector is the weighted mean of the history's item factors. */
  userVector(h: History): Float32Array {
    const u = new Float32Array(this.factors);
    let total = 0;
    for (let k = 0; k < h.items.length; k++) {
      const i = h.items[k] as number;
      const w = Math.log1p(h.weights[k] as number);
      total += w;
      for (let f = 0; f < this.factors; f++) u[f] = (u[f] as number) + w * (this.q[i * this.factors + f] as number);
    }
    if (total > 0) for (let f = 0; f < this.factors; f++) u[f] = (u[f] as number) / total;
    return u;
  }

  score(h: History, into?: Float32Array): Float32Array {
    const u = this.userVector(h);
    const s = into ?? new Float32Array(this.itemCount);
    for (let i = 0; i < this.itemCount; i++) {
      let v = this.bias[i] as number;
      for (let f = 0; f < this.factors; f++) v += (u[f] as number) * (this.q[i * this.factors + f] as number);
      s[i] = v;
    }
    return s;
  }
}

/** Lets the event loop run (log writes, a stop's poll) between steps of a long training. */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How long a training loop runs before it lets the event loop run (`tick`): a stop's poll is heard within about a second. */
const YIELD_EVERY_MS = 50;

export interface GradientOptions {
  epochs: number;
  batchSize: number;
  learningRate: number;
  factors?: number;
  seed?: number;
}

/**
 * A mini-batch gradient model that honours the run options: item factors and biases trained
 * with Adam on a BPR objective, where the user is represented by the fold-in of their own
 * history (so serving needs no per-user state, and a new event changes the next answer).
 * Each mini-batch holds `batchSize` (user, positive, sampled negative) triples.
 */
export async function trainBprFoldIn(ds: Dataset, o: GradientOptions, hooks: TrainHooks = {}): Promise<Model> {
  const F = o.factors ?? 64;
  const n = ds.items.length;
  const rand = seededRandom(o.seed ?? 7);
  const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  const q = Float32Array.from({ length: n * F }, () => gauss() * 0.05);
  const bias = new Float32Array(n);
  // Adam state.
  const mq = new Float32Array(n * F);
  const vq = new Float32Array(n * F);
  const mb = new Float32Array(n);
  const vb = new Float32Array(n);
  const b1 = 0.9;
  const b2 = 0.999;
  let t = 0;
  const model = new FactorModel('bpr', n, F, q, bias);
  const users = ds.users.length;
  const stepsPerEpoch = Math.max(1, Math.ceil(ds.nnz / o.batchSize));
  const gq = new Map<number, Float32Array>();
  const gb = new Map<number, number>();
  const addG = (i: number, scale: number, vec: Float32Array) => {
    let g = gq.get(i);
    if (!g) gq.set(i, (g = new Float32Array(F)));
    for (let f = 0; f < F; f++) g[f] = (g[f] as number) + scale * (vec[f] as number);
  };
  // The event loop runs every YIELD_EVERY_MS: the stop's poll (a read of the run, shared/recs/trainer.ts)
  // sets the flag `shouldStop` reads only then. (It ran every epoch to the end: a stop of 50 epochs waited for all of them.)
  let ranSince = performance.now();
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    let loss = 0;
    for (let step = 0; step < stepsPerEpoch; step++) {
      if (performance.now() - ranSince >= YIELD_EVERY_MS) {
        await tick();
        ranSince = performance.now();
      }
      if (hooks.shouldStop?.()) throw new Stopped('stopped');
      gq.clear();
      gb.clear();
      for (let b = 0; b < o.batchSize; b++) {
        const u = Math.floor(rand() * users);
        const row = ds.row(u);
        if (row.items.length < 2) continue;
        const pos = row.items[Math.floor(rand() * row.items.length)] as number;
        const neg = Math.floor(rand() * n);
        const uv = model.userVector(row);
        let x = (bias[pos] as number) - (bias[neg] as number);
        for (let f = 0; f < F; f++) x += (uv[f] as number) * ((q[pos * F + f] as number) - (q[neg * F + f] as number));
        const sig = 1 / (1 + Math.exp(x));
        loss += Math.log1p(Math.exp(-x));
        // d(-log σ(x)) / dθ = -σ(-x) dx/dθ; the user fold-in is treated as fixed for the step.
        addG(pos, -sig, uv);
        addG(neg, sig, uv);
        gb.set(pos, (gb.get(pos) ?? 0) - sig);
        gb.set(neg, (gb.get(neg) ?? 0) + sig);
      }
      t += 1;
      const lr = (o.learningRate * Math.sqrt(1 - b2 ** t)) / (1 - b1 ** t);
      for (const [i, g] of gq) {
        for (let f = 0; f < F; f++) {
          const k = i * F + f;
          const gr = (g[f] as number) / o.batchSize + 1e-4 * (q[k] as number);
          mq[k] = b1 * (mq[k] as number) + (1 - b1) * gr;
          vq[k] = b2 * (vq[k] as number) + (1 - b2) * gr * gr;
          q[k] = (q[k] as number) - (lr * (mq[k] as number)) / (Math.sqrt(vq[k] as number) + 1e-8);
        }
      }
      for (const [i, g] of gb) {
        const gr = g / o.batchSize;
        mb[i] = b1 * (mb[i] as number) + (1 - b1) * gr;
        vb[i] = b2 * (vb[i] as number) + (1 - b2) * gr * gr;
        bias[i] = (bias[i] as number) - (lr * (mb[i] as number)) / (Math.sqrt(vb[i] as number) + 1e-8);
      }
    }
    hooks.progress?.((epoch + 1) / o.epochs, `epoch ${epoch + 1}/${o.epochs} loss ${(loss / (stepsPerEpoch * o.batchSize)).toFixed(4)}`);
  }
  return model;
}
