import { INT8_DOT_WASM } from './int8-dot.ts';
import { bytesOf, copyingBytes, runInTurns } from '../concurrency.ts';

/** The dot-product kernel (int8-dot.wat), compiled once per container. */
const kernel = new WebAssembly.Module(Buffer.from(INT8_DOT_WASM, 'base64'));

/** A query's largest component becomes ±QUERY_MAX (int16; leaves the kernel's lanes headroom). */
const QUERY_MAX = 16383;
/** The kernel's i32 lanes hold 4096-dimension sums of int8 × QUERY_MAX products. */
export const MAX_KERNEL_DIMS = 4096;

/**
 * One query, quantised to int16 for the kernel: `dot(i, n)` ≈ Σ_{k<n} row_i[k] · q[k] (relative
 * error about 1e-4 of the query's largest component). 0 for a query of another size.
 */
export type QueryDot = (i: number, n?: number) => number;

/**
 * Many rows' similarities to one query at once: out[j] is the similarity of rows[j] (j < count),
 * 0 for a row without a vector; what the one-row function of the same query gives, to the bit.
 * One call of the kernel per batch of rows instead of one per row: the call (through its
 * JavaScript-to-WebAssembly wrapper) cost as much as the 512-dimension dot product it made
 * (profiled at 100,000 items, 2026-11-29).
 */
export type Similarities = (rows: ArrayLike<number>, count: number, out: Float64Array) => void;

/** A float query in the kernel's int16 form (its largest component ±QUERY_MAX) and the factor its dot products are scaled back by. */
export interface QuantisedQuery {
  q16: Int16Array;
  down: number;
}

/** `q` in the kernel's int16 form; undefined for a zero or non-finite query. */
export function quantisedQuery(q: Float32Array): QuantisedQuery | undefined {
  let max = 0;
  for (let k = 0; k < q.length; k++) max = Math.max(max, Math.abs(q[k] as number));
  if (!(max > 0) || !Number.isFinite(max)) return undefined;
  const q16 = new Int16Array(q.length);
  const up = QUERY_MAX / max;
  for (let k = 0; k < q.length; k++) q16[k] = Math.round((q[k] as number) * up);
  return { q16, down: max / QUERY_MAX };
}

/** A byte size rounded up to whole 64-byte lines. */
const lines = (bytes: number) => Math.ceil(bytes / 64) * 64;

/** Where one vector is: its int8 row in a kernel's rows, and the scale that dequantises it. */
export interface VectorRow {
  rows: Int8Rows;
  row: number;
  scale: number;
}

/**
 * Rows of int8 vectors in WebAssembly memory, scored against a query and summed 16 dimensions at
 * a time (SIMD): about ten times faster than a JavaScript loop over the same Int8Array. `rows`
 * is an ordinary Int8Array view of them.
 */
export class Int8Rows {
  readonly rows: Int8Array;
  private readonly dotAt: (v: number, q: number, n: number) => number;
  private readonly axpy: (acc: number, v: number, f: number, n: number) => void;
  private readonly dotsAt: (v: number, q: number, n: number, count: number, stride: number, out: number) => void;
  private readonly dotsOfAt: (v: number, q: number, n: number, idx: number, count: number, stride: number, out: number) => void;
  /**
   * Memory: a query slot (int16), which prepared query it holds, a sum slot (float32), the dot
   * products of a `scan` (float64, `scanRows` of them) and the rows it picks (uint32), the rows.
   */
  private readonly slot: Int16Array;
  private held: Int16Array | null = null;
  private readonly sum: Float32Array;
  private readonly sumAt: number;
  private readonly scanned: Float64Array;
  private readonly scannedAt: number;
  private readonly picked: Uint32Array;
  private readonly pickedAt: number;
  private readonly base: number;

  /**
   * Copies `src` (count × dims values) into the kernel's memory; `scanRows`: the most rows one
   * `scan` scores. `copy` false: room for them only (`inTurns` copies them).
   */
  constructor(
    src: Int8Array,
    readonly dims: number,
    readonly scanRows = 0,
    copy = true,
  ) {
    if (dims > MAX_KERNEL_DIMS) throw new RangeError(`Vectors of ${dims} dimensions: the kernel takes at most ${MAX_KERNEL_DIMS}.`);
    this.sumAt = lines(dims * 2);
    this.scannedAt = this.sumAt + lines(dims * 4);
    this.pickedAt = this.scannedAt + lines(scanRows * 8);
    this.base = this.pickedAt + lines(scanRows * 4);
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((this.base + src.length) / 65536)) });
    const instance = new WebAssembly.Instance(kernel, { env: { memory } });
    this.dotAt = instance.exports.dot as (v: number, q: number, n: number) => number;
    this.axpy = instance.exports.axpy as (acc: number, v: number, f: number, n: number) => void;
    this.dotsAt = instance.exports.dots as (v: number, q: number, n: number, count: number, stride: number, out: number) => void;
    this.dotsOfAt = instance.exports.dotsOf as (v: number, q: number, n: number, idx: number, count: number, stride: number, out: number) => void;
    this.slot = new Int16Array(memory.buffer, 0, dims);
    this.sum = new Float32Array(memory.buffer, this.sumAt, dims);
    this.scanned = new Float64Array(memory.buffer, this.scannedAt, scanRows);
    this.picked = new Uint32Array(memory.buffer, this.pickedAt, scanRows);
    this.rows = new Int8Array(memory.buffer, this.base, src.length);
    if (copy) this.rows.set(src);
  }

  /**
   * As the constructor, copying the rows 4 MB at a time with the thread's other work between: a
   * 100,000-item build's 51 MB took 0.24-0.33 s in one go (a loaded build's, views.ts).
   */
  static async inTurns(src: Int8Array, dims: number, scanRows = 0): Promise<Int8Rows> {
    const out = new Int8Rows(src, dims, scanRows, false);
    await runInTurns(copyingBytes(bytesOf(out.rows), bytesOf(src)));
    return out;
  }

  /** Prepares `q` once for any number of rows; its values are copied (later changes to q are not seen). */
  query(q: Float32Array): QueryDot {
    const p = q.length === this.dims ? quantisedQuery(q) : undefined;
    return p ? this.prepared(p.q16, p.down) : () => 0;
  }

  /**
   * A query quantised already (`quantisedQuery`, of these rows' size): the same dot products as
   * `query` gives for the float query it was made from.
   */
  quantisedQuery(q: QuantisedQuery): QueryDot {
    return q.q16.length === this.dims ? this.prepared(q.q16, q.down) : () => 0;
  }

  /**
   * An int8 vector (a row of these rows or of another kernel's) as the query, its values widened
   * exactly: `dot(i)` = Σ row_i[k] · v[k], without quantising a float copy of it.
   */
  int8Query(row: Int8Array): QueryDot {
    return row.length === this.dims ? this.prepared(Int16Array.from(row), 1) : () => 0;
  }

  /** A query already in the kernel's int16 form, its dot products scaled by `down`. */
  private prepared(q16: Int16Array, down: number): QueryDot {
    const { dims } = this;
    return (i, n = dims) => {
      this.hold(q16);
      return this.dotAt(this.base + i * dims, 0, Math.min(n, dims)) * down;
    };
  }

  private hold(q16: Int16Array): void {
    if (this.held !== q16) {
      this.slot.set(q16);
      this.held = q16;
    }
  }

  /**
   * The dot products of rows first to first + count − 1 (count at most `scanRows`) on their first
   * n dimensions with a quantised query (`quantisedQuery`, of these rows' size), in one call of
   * the kernel: element r is what `quantisedQuery(q)(first + r, n)` gives, to the bit. The array
   * is these rows' own, overwritten by the next scan: read it before.
   */
  scan(q: QuantisedQuery, first: number, count: number, n = this.dims): Float64Array {
    this.beforeScan(q, count);
    if (first < 0 || (first + count) * this.dims > this.rows.length) throw new RangeError(`Rows ${first} to ${first + count - 1} of ${this.rows.length / this.dims}.`);
    this.dotsAt(this.base + first * this.dims, 0, Math.min(n, this.dims), count, this.dims, this.scannedAt);
    return this.scaled(count, q.down);
  }

  /** `scan` of the rows listed in rows[from..from + count) (indexes, in any order; count at most `scanRows`). */
  scanOf(q: QuantisedQuery, rows: ArrayLike<number>, count: number, n = this.dims, from = 0): Float64Array {
    this.beforeScan(q, count);
    const { picked } = this;
    for (let r = 0; r < count; r++) picked[r] = rows[from + r] as number;
    this.dotsOfAt(this.base, 0, Math.min(n, this.dims), this.pickedAt, count, this.dims, this.scannedAt);
    return this.scaled(count, q.down);
  }

  private beforeScan(q: QuantisedQuery, count: number): void {
    if (q.q16.length !== this.dims) throw new RangeError(`A query of ${q.q16.length} dimensions for rows of ${this.dims}.`);
    if (count > this.scanRows) throw new RangeError(`A scan of ${count} rows; these rows scan at most ${this.scanRows}.`);
    this.hold(q.q16);
  }

  private scaled(count: number, down: number): Float64Array {
    const out = this.scanned;
    for (let i = 0; i < count; i++) out[i] = (out[i] as number) * down;
    return out;
  }

  /** into += Σ_j weights[j] × row rows[j] (into has `dims` values). */
  addRows(rows: ArrayLike<number>, weights: ArrayLike<number>, into: Float32Array): void {
    if (into.length !== this.dims) throw new RangeError(`A sum of ${this.dims} dimensions, not ${into.length}.`);
    this.sum.set(into);
    for (let j = 0; j < rows.length; j++) this.axpy(this.sumAt, this.base + (rows[j] as number) * this.dims, weights[j] as number, this.dims);
    into.set(this.sum);
  }
}
