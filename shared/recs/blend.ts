import { seededRandom } from '../random.ts';
import type { Dataset } from './dataset.ts';
import { F32Rows } from './f32-rows.ts';
import { Lru } from '../lru.ts';
import { invertSpd, Stopped, tick, type History, type Model, type TrainHooks } from './models.ts';

/**
 * EASE with every weight of its head kept: B (m × m, row-major, zero diagonal) over the `head`
 * items (model indexes). The sparse form it replaces kept each item's 200 largest positive
 * weights, which drops EASE's negative weights: on ml-latest-small that cost 5 % nDCG@10
 * (λ 500: 0.3837 truncated vs 0.4030 with every weight), in-process and served alike.
 * Items outside the head score 0.
 */
export class DenseHeadModel implements Model {
  private readonly local: Int32Array;
  private readonly acc: Float32Array;
  private readonly which: number[] = [];
  private readonly ws: number[] = [];
  /** B in WebAssembly memory (f32-rows.ts): a history item's row is added 4 weights at a time. */
  private readonly rows: F32Rows;
  /** B as stored: a view of the kernel's copy. */
  readonly b: Float32Array;
  constructor(
    readonly algorithm: string,
    readonly itemCount: number,
    readonly head: Uint32Array,
    /** The head's weights (head × head), or already in the kernel's memory (a loaded artifact's: `F32Rows.filling`). */
    b: Float32Array | F32Rows,
  ) {
    this.local = new Int32Array(itemCount).fill(-1);
    head.forEach((i, k) => (this.local[i] = k));
    this.acc = new Float32Array(head.length);
    this.rows = b instanceof F32Rows ? b : new F32Rows(b, head.length, head.length);
    this.b = this.rows.rows;
  }

  score(h: History, into?: Float32Array): Float32Array {
    const s = into ? into.fill(0) : new Float32Array(this.itemCount);
    const { which, ws } = this;
    which.length = 0;
    ws.length = 0;
    for (let k = 0; k < h.items.length; k++) {
      const a = this.local[h.items[k] as number] as number;
      if (a < 0) continue;
      which.push(a);
      ws.push(h.weights[k] as number);
    }
    const acc = this.rows.sumRows(which, ws, this.acc);
    for (let j = 0; j < acc.length; j++) s[this.head[j] as number] = acc[j] as number;
    return s;
  }
}

/** The `maxItems` items with most interactions (at least one), in that order. */
export function headItems(ds: Dataset, maxItems: number): Uint32Array {
  const n = ds.items.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (ds.itemCount[b] as number) - (ds.itemCount[a] as number) || a - b);
  return Uint32Array.from(order.slice(0, Math.min(maxItems, n)).filter((i) => (ds.itemCount[i] as number) > 0));
}

/**
 * Co-occurrence by time: two items of one user count `floor + (1 − floor) · exp(−|Δt| / seconds)`
 * instead of 1 (an item with itself still 1), so items a user took up in one sitting weigh more
 * than items years apart, as session-based recommenders and time-decayed co-occurrence (SAR)
 * weigh them. Items interacted with at the same time, or at an unknown time (NaN: events sent
 * without their time), count 1 as before. A run chooses it, or none, on validation (shared/recs/tuning.ts).
 */
export interface SessionWeighting {
  seconds: number;
  floor: number;
}

/** Binary co-occurrence counts XᵀX over the head items (m × m, dense); with `session`, each pair weighted by time. */
export function headGram(ds: Dataset, head: Uint32Array, session?: SessionWeighting): Float64Array {
  const m = head.length;
  const local = new Int32Array(ds.items.length).fill(-1);
  head.forEach((i, k) => (local[i] = k));
  const g = new Float64Array(m * m);
  const row: number[] = [];
  const at: number[] = [];
  for (let u = 0; u < ds.users.length; u++) {
    row.length = 0;
    at.length = 0;
    const r = ds.row(u);
    for (let k = 0; k < r.items.length; k++) {
      const a = local[r.items[k] as number] as number;
      if (a >= 0) {
        row.push(a);
        at.push(r.times[k] as number);
      }
    }
    if (!session) {
      for (const a of row) {
        const o = a * m;
        for (const b of row) g[o + b] = (g[o + b] as number) + 1;
      }
      continue;
    }
    const { seconds, floor } = session;
    for (let x = 0; x < row.length; x++) {
      const o = (row[x] as number) * m;
      const t = at[x] as number;
      g[o + (row[x] as number)] = (g[o + (row[x] as number)] as number) + 1;
      for (let y = x + 1; y < row.length; y++) {
        // An unknown time (NaN) on either side: counted 1, as without a weighting.
        const dt = Math.abs(t - (at[y] as number));
        const w = Number.isNaN(dt) ? 1 : floor + (1 - floor) * Math.exp(-dt / seconds);
        const b = row[y] as number;
        g[o + b] = (g[o + b] as number) + w;
        g[b * m + (row[x] as number)] = (g[b * m + (row[x] as number)] as number) + w;
      }
    }
  }
  return g;
}

/** The share of a Gram matrix's off-diagonal mass `weighted` keeps of `plain`'s (1: the weighting changed nothing). */
export function offDiagonalShare(weighted: Float64Array, plain: Float64Array, m: number): number {
  let w = 0;
  let p = 0;
  for (let x = 0; x < m; x++)
    for (let y = 0; y < m; y++)
      if (x !== y) {
        w += weighted[x * m + y] as number;
        p += plain[x * m + y] as number;
      }
  return p > 0 ? w / p : 1;
}

/** EASE's closed form from a Gram matrix: B = I − P diag(1/diag P), P = (G + λI)⁻¹, zero diagonal. */
export function easeFromGram(ds: Dataset, head: Uint32Array, g: Float64Array, lambda: number, hooks: TrainHooks = {}): DenseHeadModel {
  const m = head.length;
  const a = Float64Array.from(g);
  for (let k = 0; k < m; k++) a[k * m + k] = (a[k * m + k] as number) + lambda;
  const p = invertSpd(a, m, hooks);
  const b = new Float32Array(m * m);
  for (let x = 0; x < m; x++) {
    const o = x * m;
    for (let y = 0; y < m; y++) b[o + y] = x === y ? 0 : -(p[o + y] as number) / (p[y * m + y] as number);
  }
  return new DenseHeadModel('ease', ds.items.length, head, b);
}

/** Plain EASE on the `maxItems` most interacted items, every weight kept. */
export function trainEaseDense(ds: Dataset, opts: { lambda: number; maxItems?: number }, hooks: TrainHooks = {}): DenseHeadModel {
  const head = headItems(ds, opts.maxItems ?? EASE_MAX_ITEMS);
  return easeFromGram(ds, head, headGram(ds, head), opts.lambda, hooks);
}

/** EASE's head: O(m³) time and m² memory (2,500 items: ≈ 10-20 s and 25 MB of weights). */
export const EASE_MAX_ITEMS = 2500;

/** Solves A x = b for a symmetric positive definite d × d matrix A (overwritten by its Cholesky factor). */
export function choleskySolve(a: Float64Array, b: Float64Array, d: number): Float64Array {
  for (let j = 0; j < d; j++) {
    const oj = j * d;
    let s = a[oj + j] as number;
    for (let k = 0; k < j; k++) s -= (a[oj + k] as number) ** 2;
    const ljj = Math.sqrt(Math.max(s, 1e-12));
    a[oj + j] = ljj;
    for (let i = j + 1; i < d; i++) {
      const oi = i * d;
      let t = a[oi + j] as number;
      for (let k = 0; k < j; k++) t -= (a[oi + k] as number) * (a[oj + k] as number);
      a[oi + j] = t / ljj;
    }
  }
  const y = Float64Array.from(b);
  for (let i = 0; i < d; i++) {
    let t = y[i] as number;
    for (let k = 0; k < i; k++) t -= (a[i * d + k] as number) * (y[k] as number);
    y[i] = t / (a[i * d + i] as number);
  }
  for (let i = d - 1; i >= 0; i--) {
    let t = y[i] as number;
    for (let k = i + 1; k < d; k++) t -= (a[k * d + i] as number) * (y[k] as number);
    y[i] = t / (a[i * d + i] as number);
  }
  return y;
}

export interface AlsOptions {
  factors: number;
  /** Weight of the unobserved entries (Rendle et al. 2021's α0). */
  alpha0: number;
  /** Regularisation, scaled by each row's (observed + α0 × all) count (ν = 1). */
  lambda: number;
  epochs: number;
  /** Conjugate-gradient steps per row and epoch (warm-started, as in `implicit`). */
  cgSteps?: number;
  seed?: number;
}

/** Single items' folded-in vectors an iALS model keeps (`AlsModel.anchors`). */
export const ANCHORS_KEPT = 4096;

/**
 * iALS item factors, users folded in: a user's vector is solved from their history against the
 * item factors exactly as training solves it (argmin Σ_h w (1 − uᵀq)² + α0 Σ_all (uᵀq)² + reg),
 * so serving needs no per-user state and a new event changes the next answer.
 */
export class AlsModel implements Model {
  readonly algorithm = 'ials';
  /** The item factors in WebAssembly memory (f32-rows.ts): every item's score 4 factors at a time. */
  private readonly rows: F32Rows;
  /** Item factors, n × d: a view of the kernel's copy. */
  readonly q: Float32Array;
  constructor(
    readonly itemCount: number,
    readonly factors: number,
    /** The item factors (items × factors), or already in the kernel's memory (a loaded artifact's: `F32Rows.filling`). */
    q: Float32Array | F32Rows,
    /** QᵀQ, d × d. */
    readonly gram: Float64Array,
    readonly alpha0: number,
    readonly lambda: number,
  ) {
    this.rows = q instanceof F32Rows ? q : new F32Rows(q, itemCount, factors);
    this.q = this.rows.rows;
  }

  /**
   * Each user row of the artifact's histories folded in (users × factors, row-major; see
   * `foldInUsers`), so a request whose history is a trained row skips the fold-in: h·d²/2
   * multiply-adds, 17 ms at p99 on ml-latest-small's longest histories against 1 ms to score
   * every item. Absent in models trained in-process and in older artifacts.
   */
  userVectors: Float32Array | undefined;

  /**
   * Cache: single items folded in at weight 1, by item: an anchor (similar items), which a
   * request with an anchor and a user folds in too, alone (similar.ts); the least recently used
   * dropped past ANCHORS_KEPT (`Lru`). A fold-in is a d × d solve, about 0.9 ms at 128 factors against
   * 0.2 ms to score every item of ml-latest-small. Bound: ANCHORS_KEPT × factors × 4 bytes
   * (2 MB at 128 factors). The vectors are only read.
   */
  private readonly anchors = new Lru<number, Float32Array>(ANCHORS_KEPT);

  /** The user's vector: stored for a trained history's row, a single item's as kept, else folded in. */
  vectorOf(h: History): Float32Array {
    const d = this.factors;
    if (h.row !== undefined && this.userVectors && (h.row + 1) * d <= this.userVectors.length) return this.userVectors.subarray(h.row * d, (h.row + 1) * d);
    if (h.items.length !== 1 || h.weights[0] !== 1) return this.userVector(h);
    const item = h.items[0] as number;
    let v = this.anchors.get(item);
    if (!v) {
      v = this.userVector(h);
      this.anchors.set(item, v);
    }
    return v;
  }

  /**
   * The history folded in, rounded to 32 bits as it is stored: a stored vector and one folded in
   * at the request are the same numbers, so every path scores alike to the last bit.
   */
  userVector(h: History): Float32Array {
    const d = this.factors;
    const a = new Float64Array(d * d);
    const b = new Float64Array(d);
    let count = 0;
    for (let k = 0; k < d * d; k++) a[k] = this.alpha0 * (this.gram[k] as number);
    for (let t = 0; t < h.items.length; t++) {
      const o = (h.items[t] as number) * d;
      const w = h.weights[t] as number;
      count += 1;
      for (let x = 0; x < d; x++) {
        const qx = w * (this.q[o + x] as number);
        b[x] = (b[x] as number) + qx;
        const ox = x * d;
        for (let y = 0; y <= x; y++) a[ox + y] = (a[ox + y] as number) + qx * (this.q[o + y] as number);
      }
    }
    for (let x = 0; x < d; x++) for (let y = x + 1; y < d; y++) a[x * d + y] = a[y * d + x] as number;
    const reg = this.lambda * (count + this.alpha0 * this.itemCount);
    for (let x = 0; x < d; x++) a[x * d + x] = (a[x * d + x] as number) + reg;
    return Float32Array.from(choleskySolve(a, b, d));
  }

  score(h: History, into?: Float32Array): Float32Array {
    return this.rows.dotAll(this.vectorOf(h), into ?? new Float32Array(this.itemCount));
  }
}

/**
 * Σ over k < len of x[xo + k]·y[yo + k], in four running sums (the floating-point unit is not
 * left waiting on the previous addition: ≈ 2x faster than one sum at iALS's 128 factors).
 */
function dot(x: Float64Array | Float32Array, xo: number, y: Float64Array | Float32Array, yo: number, len: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < len; k += 4) {
    s0 += (x[xo + k] as number) * (y[yo + k] as number);
    s1 += (x[xo + k + 1] as number) * (y[yo + k + 1] as number);
    s2 += (x[xo + k + 2] as number) * (y[yo + k + 2] as number);
    s3 += (x[xo + k + 3] as number) * (y[yo + k + 3] as number);
  }
  for (; k < len; k++) s0 += (x[xo + k] as number) * (y[yo + k] as number);
  return s0 + s1 + (s2 + s3);
}

function gramOf(f: Float64Array, rows: number, d: number): Float64Array {
  const g = new Float64Array(d * d);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    for (let x = 0; x < d; x++) {
      const fx = f[o + x] as number;
      if (fx === 0) continue;
      const ox = x * d;
      for (let y = 0; y <= x; y++) g[ox + y] = (g[ox + y] as number) + fx * (f[o + y] as number);
    }
  }
  for (let x = 0; x < d; x++) for (let y = x + 1; y < d; y++) g[x * d + y] = g[y * d + x] as number;
  return g;
}

/**
 * One side of an iALS epoch by warm-started conjugate gradient: for each row r (a user or an
 * item) with observed columns cols(r) and weights, x_r ≈ argmin of the objective with the other
 * side's factors `other` (and their Gram matrix `g`) fixed.
 */
function solveSide(
  rows: number,
  cols: (r: number) => { items: ArrayLike<number>; weights: ArrayLike<number> },
  x: Float64Array,
  other: Float64Array,
  otherCount: number,
  d: number,
  o: AlsOptions,
  g: Float64Array,
): void {
  const steps = o.cgSteps ?? 3;
  const r = new Float64Array(d);
  const p = new Float64Array(d);
  const ap = new Float64Array(d);
  const apply = (v: Float64Array, out: Float64Array, c: { items: ArrayLike<number>; weights: ArrayLike<number> }, reg: number) => {
    for (let a = 0; a < d; a++) out[a] = o.alpha0 * dot(g, a * d, v, 0, d) + reg * (v[a] as number);
    for (let t = 0; t < c.items.length; t++) {
      const oy = (c.items[t] as number) * d;
      const w = (c.weights[t] as number) * dot(other, oy, v, 0, d);
      for (let a = 0; a < d; a++) out[a] = (out[a] as number) + w * (other[oy + a] as number);
    }
  };
  for (let row = 0; row < rows; row++) {
    const c = cols(row);
    const reg = o.lambda * (c.items.length + o.alpha0 * otherCount);
    const xr = x.subarray(row * d, row * d + d);
    // r = b − A x, b = Σ w y.
    apply(xr, ap, c, reg);
    for (let a = 0; a < d; a++) r[a] = -(ap[a] as number);
    for (let t = 0; t < c.items.length; t++) {
      const oy = (c.items[t] as number) * d;
      const w = c.weights[t] as number;
      for (let a = 0; a < d; a++) r[a] = (r[a] as number) + w * (other[oy + a] as number);
    }
    p.set(r);
    let rr = 0;
    for (let a = 0; a < d; a++) rr += (r[a] as number) ** 2;
    for (let step = 0; step < steps && rr > 1e-20; step++) {
      apply(p, ap, c, reg);
      let pap = 0;
      for (let a = 0; a < d; a++) pap += (p[a] as number) * (ap[a] as number);
      const alpha = rr / pap;
      let next = 0;
      for (let a = 0; a < d; a++) {
        xr[a] = (xr[a] as number) + alpha * (p[a] as number);
        r[a] = (r[a] as number) - alpha * (ap[a] as number);
        next += (r[a] as number) ** 2;
      }
      const beta = next / rr;
      rr = next;
      for (let a = 0; a < d; a++) p[a] = (r[a] as number) + beta * (p[a] as number);
    }
  }
}

/** After each epoch: the epoch (1-based), the training loss per observed interaction, and the model so far. */
export type EpochHook = (epoch: number, loss: number, model: AlsModel) => void;

/**
 * iALS (Hu et al. 2008, with Rendle et al. 2021's weighting and frequency-scaled regularisation),
 * trained by alternating conjugate-gradient solves; interaction weights are confidences. Between
 * epochs it lets the event loop run, so progress is written while it trains and a stop is seen.
 */
export async function trainIals(ds: Dataset, o: AlsOptions, hooks: TrainHooks = {}, onEpoch?: EpochHook): Promise<AlsModel> {
  const d = o.factors;
  const n = ds.items.length;
  const users = ds.users.length;
  const rand = seededRandom(o.seed ?? 11);
  const q = Float64Array.from({ length: n * d }, () => ((rand() - 0.5) * 0.1) / Math.sqrt(d));
  const p = new Float64Array(users * d);
  // Items' columns (users and weights), CSR.
  const start = new Uint32Array(n + 1);
  for (let k = 0; k < ds.nnz; k++) start[(ds.cols[k] as number) + 1] = (start[(ds.cols[k] as number) + 1] as number) + 1;
  for (let i = 0; i < n; i++) start[i + 1] = (start[i + 1] as number) + (start[i] as number);
  const colUsers = new Uint32Array(ds.nnz);
  const colWeights = new Float32Array(ds.nnz);
  const fill = Uint32Array.from(start.subarray(0, n));
  for (let u = 0; u < users; u++) {
    const row = ds.row(u);
    for (let k = 0; k < row.items.length; k++) {
      const i = row.items[k] as number;
      const at = fill[i] as number;
      colUsers[at] = u;
      colWeights[at] = row.weights[k] as number;
      fill[i] = at + 1;
    }
  }
  const column = (i: number) => ({ items: colUsers.subarray(start[i] as number, start[i + 1] as number), weights: colWeights.subarray(start[i] as number, start[i + 1] as number) });
  // QᵀQ as of the last item solve: the next user solve and the model use it (each Gram matrix is
  // computed once per epoch, n·d²/2 multiplications: 0.4 G at 50,000 items).
  let gq = gramOf(q, n, d);
  let model = new AlsModel(n, d, Float32Array.from(q), gq, o.alpha0, o.lambda);
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    if (hooks.shouldStop?.()) throw new Stopped('stopped');
    solveSide(users, (u) => ds.row(u), p, q, n, d, o, gq);
    if (hooks.shouldStop?.()) throw new Stopped('stopped');
    const gp = gramOf(p, users, d);
    solveSide(n, column, q, p, users, d, o, gp);
    gq = gramOf(q, n, d);
    // Loss per observed interaction: Σ_obs w (1 − pᵀq)² + α0 Σ_all (pᵀq)², over nnz; the second
    // sum is Σ_u p_uᵀ (QᵀQ) p_u = Σ_xy (QᵀQ)_xy (PᵀP)_xy, from the two Gram matrices.
    let loss = 0;
    for (let u = 0; u < users; u++) {
      const row = ds.row(u);
      const ou = u * d;
      for (let k = 0; k < row.items.length; k++) loss += (row.weights[k] as number) * (1 - dot(p, ou, q, (row.items[k] as number) * d, d)) ** 2;
    }
    let quad = 0;
    for (let k = 0; k < d * d; k++) quad += (gq[k] as number) * (gp[k] as number);
    loss += o.alpha0 * quad;
    model = new AlsModel(n, d, Float32Array.from(q), gq, o.alpha0, o.lambda);
    hooks.progress?.(epoch / o.epochs, `iALS epoch ${epoch}/${o.epochs} loss ${(loss / Math.max(1, ds.nnz)).toFixed(5)}`);
    onEpoch?.(epoch, loss / Math.max(1, ds.nnz), model);
    await tick();
  }
  return model;
}

/**
 * A weighted sum of models' scores, each scaled by its own largest score for the history (so
 * weights mean the same whatever a model's scale): the default's EASE and iALS, weights fitted
 * on a validation split.
 */
export class BlendModel implements Model {
  readonly algorithm: string;
  private scratch: Float32Array;
  constructor(
    readonly parts: Model[],
    readonly weights: number[],
    algorithm = 'blend',
  ) {
    this.algorithm = algorithm;
    this.itemCount = (parts[0] as Model).itemCount;
    this.scratch = new Float32Array(this.itemCount);
  }
  readonly itemCount: number;

  score(h: History, into?: Float32Array): Float32Array {
    const s = into ? into.fill(0) : new Float32Array(this.itemCount);
    this.parts.forEach((m, k) => {
      const w = this.weights[k] as number;
      if (w === 0) return;
      addScaled(s, m.score(h, this.scratch), w);
    });
    return s;
  }
}

/** Adds a part's scores to a blend's `into`, scaled by `weight` over the part's largest score (as `BlendModel.score` sums its parts). */
export function addScaled(into: Float32Array, part: Float32Array, weight: number): void {
  const scale = weight / maxOf(part);
  for (let i = 0; i < into.length; i++) into[i] = (into[i] as number) + scale * (part[i] as number);
}

/** The largest score, or 1 when none is positive (so scaling never flips or blows up). */
export function maxOf(s: Float32Array): number {
  let max = 0;
  for (let i = 0; i < s.length; i++) if ((s[i] as number) > max) max = s[i] as number;
  return max > 1e-12 ? max : 1;
}
